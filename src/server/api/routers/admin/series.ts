// admin.counters.series: counts per minute for the last 24 h, for one tenant and procedure or all.
import { z } from "zod";
import { adminProcedure } from "../../trpc";
import { readCounterSeries } from "@/server/admin/counter-series";

export const counterSeriesInput = z.object({
  tenant: z.string().trim().min(1).max(100).optional(),
  procedure: z.string().trim().min(1).max(200).optional(),
});

export const counterSeriesProcedure = adminProcedure
  .input(counterSeriesInput)
  .query(({ ctx, input }) => readCounterSeries(ctx.db, { scope: input.tenant, procedure: input.procedure }));
