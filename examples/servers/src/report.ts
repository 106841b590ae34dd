// What both servers do on POST /reports: make a report (a row, in the key's transaction) and answer
// it with its lines. A report of many lines is a large answer.
import type { TransactionRouteContext } from "@once/idempotency/http";
import type { Prisma } from "./generated/prisma/client";

export async function createReport(
  request: Request,
  { tx }: TransactionRouteContext<Prisma.TransactionClient>,
): Promise<Response> {
  const { title, rows = 0 } = (await request.json()) as { title?: string; rows?: number };
  if (!title || !Number.isInteger(rows) || rows < 0 || rows > 100_000)
    return Response.json({ error: "a title and 0–100000 rows" }, { status: 400 });
  const report = await tx.report.create({ data: { title, rows } });
  const lines = Array.from({ length: rows }, (_, line) => ({ line, title }));
  return Response.json(
    { ...report, lines },
    { status: 201, headers: { location: `/reports/${report.id}` } },
  );
}
