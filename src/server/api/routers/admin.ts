// admin.*: the operator's view of the engine.
import { createTRPCRouter } from "../trpc";

export const adminRouter = createTRPCRouter({});
