// admin.*: the operator's view of the engine. One concern per file under ./admin (the keys' inputs
// in keys.types.ts, the rows they answer in view.ts); every procedure is admin-only (a tenant token
// is 403), and every action that changes something is itself an idempotent mutation that writes an
// audit entry.
import { adminProcedure, createTRPCRouter } from "../trpc";
import { getKeyProcedure } from "./admin/get-key";
import { listKeysProcedure } from "./admin/list-keys";
import { listOutboxProcedure, retryOutboxProcedure } from "./admin/outbox";
import { listAuditProcedure } from "./admin/audit";
import {
  listReconciliationProcedure,
  resolveReconciliationProcedure,
} from "./admin/reconciliation";
import { bustKeyProcedure, releaseKeyProcedure } from "./admin/remove-key";
import { readStats } from "@/server/admin/stats";
import { resolveKeyProcedure, searchKeysProcedure } from "./admin/search-keys";
import { releaseStuckProcedure, stuckCountProcedure } from "./admin/release-stuck";
import { counterSeriesProcedure } from "./admin/series";
import {
  endAccountSessionsProcedure,
  endSessionProcedure,
  listSessionsProcedure,
} from "./admin/sessions";

export const adminRouter = createTRPCRouter({
  keys: createTRPCRouter({
    list: listKeysProcedure,
    byId: getKeyProcedure,
    bust: bustKeyProcedure,
    release: releaseKeyProcedure,
    search: searchKeysProcedure,
    resolve: resolveKeyProcedure,
    releaseStuck: releaseStuckProcedure,
    stuckCount: stuckCountProcedure,
  }),
  outbox: createTRPCRouter({
    list: listOutboxProcedure,
    retry: retryOutboxProcedure,
  }),
  reconciliation: createTRPCRouter({
    list: listReconciliationProcedure,
    resolve: resolveReconciliationProcedure,
  }),
  audit: createTRPCRouter({
    list: listAuditProcedure,
  }),
  sessions: createTRPCRouter({
    list: listSessionsProcedure,
    end: endSessionProcedure,
    endAll: endAccountSessionsProcedure,
  }),
  stats: adminProcedure.query(({ ctx }) => readStats(ctx.db, ctx.engine, ctx.refusals)),
  counters: createTRPCRouter({
    series: counterSeriesProcedure,
  }),
});
