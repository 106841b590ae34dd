import { idempotent } from "@once/idempotency/http";
import { engine } from "../../../engine";

// POST /api/reports makes a report once per Idempotency-Key and answers it with its lines (a report
// of many lines is a large answer: past the engine's stored-answer limit, a replay keeps the status
// and says the body was omitted). Header names as the IETF draft's conformance profile has them.
export const POST = idempotent(
  async (request, { tx }) => {
    const { title, rows = 0 } = (await request.json()) as { title?: string; rows?: number };
    if (!title || !Number.isInteger(rows) || rows < 0 || rows > 100_000)
      return Response.json({ error: "a title and 0–100000 rows" }, { status: 400 });
    const report = await tx.report.create({ data: { title, rows } });
    const lines = Array.from({ length: rows }, (_, line) => ({ line, title }));
    return Response.json(
      { ...report, lines },
      { status: 201, headers: { location: `/api/reports/${report.id}` } },
    );
  },
  {
    engine,
    scope: (request) => request.headers.get("authorization") ?? new Response(null, { status: 401 }),
    headerNames: "draft", // Idempotency-Replayed, Idempotency-Replay: omitted
  },
);

// Reading needs no key: Next.js sends GET to its own export, untouched by the engine.
export const GET = () => Response.json({ reports: [] });
