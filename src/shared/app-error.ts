// The app's one error class: a refusal with a reason from the shared table, thrown by domain code
// (checkout, admin) and turned into tRPC's error (status → code) at the API's edge.
import { REASON_INFO, type Reason } from "./reasons";

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly reason: Reason,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = "AppError";
    this.status = REASON_INFO[reason].status;
  }
}
