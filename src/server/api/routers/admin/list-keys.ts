// admin.keys.list: newest first, filtered, keyset-paginated (see keyListQuery for the indexes).
import { adminProcedure } from "../../trpc";
import { listKeys } from "@/server/admin/keys-query";
import { encodeCursor } from "./cursor";
import { listKeysInput } from "./keys.types";
import { keySummary } from "./view";

export const listKeysProcedure = adminProcedure
  .input(listKeysInput)
  .query(async ({ ctx, input }) => {
    const page = await listKeys(
      ctx.db,
      {
        status: input.status,
        scope: input.tenant,
        procedurePrefix: input.procedure,
        stuck: input.stuck,
      },
      input.cursor ?? null,
      input.limit,
    );
    return { items: page.items.map(keySummary), nextCursor: encodeCursor(page.nextCursor) };
  });
