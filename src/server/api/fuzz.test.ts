// Every door, attacked with arbitrary input (fast-check): every tRPC procedure by GET and POST with
// arbitrary bodies, query strings, Idempotency-Keys and credentials; the payment webhook; sign-in;
// health. Never a 5xx, never a stack trace or the server's insides in an answer, never a
// half-written row (a key left PROCESSING, an order without lines or without its outbox row).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@/test/database";
import { callRaw } from "@/test/http";
import { holdsHostileText, hostileText, inputArbitrary } from "@/test/input-arbitrary";
import { handleSignIn } from "../auth/sign-in";
import { healthAnswer, HealthMonitor } from "../health";
import { webhookResponse, DEMO_WEBHOOK_SECRET } from "@/payments";
import { appRouter } from "./root";
import type { z } from "zod";
import { testApp } from "../../test/app";

const t = useTestDatabase({ poolMax: 6 });

type ProcedureDef = { _def: { type: "query" | "mutation"; inputs: z.ZodType[] } };
const PROCEDURES = (appRouter as unknown as { _def: { procedures: Record<string, ProcedureDef> } })
  ._def.procedures;
const PATHS = Object.keys(PROCEDURES);
const TOKENS = ["acme_demo_token", "globex_demo_token", "admin_demo_token", "nope", ""];

/** Text that looks like what a client might send, and some that does not. */
const anyText = fc.oneof(
  fc.string({ maxLength: 64 }),
  fc.json({ maxDepth: 3 }),
  fc.constantFrom(
    "",
    "{",
    "null",
    "[]",
    '{"items":[{"productId":"x","quantity":1e309}]}',
    "\u0000",
    "%E0%A4%A",
  ),
);
const anyKey = fc.option(
  fc.oneof(fc.string({ maxLength: 300 }), fc.uuid(), fc.constant('"quoted\\"key"')),
  { nil: undefined },
);

/** Nothing of the server's insides in an answer: no stack frames, driver words, hosts or SQL. */
function expectNoInsides(body: string) {
  expect(body).not.toMatch(
    /\n\s+at |node_modules|ECONNREFUSED|127\.0\.0\.1|prisma\.|PrismaClient|SELECT |INSERT INTO/,
  );
}

async function expectNothingHalfWritten() {
  const [row] = await t.db.$queryRaw<{ stuck: number; bare: number; unpaid: number }[]>`
    SELECT (SELECT count(*)::int FROM "IdempotencyKey" WHERE "status" = 'PROCESSING') AS "stuck",
           (SELECT count(*)::int FROM "Order" o WHERE NOT EXISTS (SELECT 1 FROM "OrderItem" i WHERE i."orderId" = o."id")) AS "bare",
           (SELECT count(*)::int FROM "Order" o WHERE NOT EXISTS (SELECT 1 FROM "OutboxMessage" m WHERE m."aggregateId" = o."id"::text)) AS "unpaid"`;
  expect(row).toEqual({ stuck: 0, bare: 0, unpaid: 0 });
}

describe("arbitrary requests at every door", () => {
  it("tRPC: every procedure, GET and POST, arbitrary input, keys, credentials and query strings", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...PATHS),
        fc.constantFrom("GET", "POST"),
        anyText,
        anyKey,
        fc.constantFrom(...TOKENS),
        fc.string({ maxLength: 40 }),
        async (path, method, body, key, token, extraQuery) => {
          const query =
            method === "GET"
              ? `?input=${encodeURIComponent(body)}&${encodeURIComponent(extraQuery)}`
              : `?${encodeURIComponent(extraQuery)}`;
          const res = await callRaw(t.db, {
            url: `http://localhost/api/trpc/${path}${query}`,
            method,
            body: method === "POST" ? body : undefined,
            token,
            key,
          });
          expect(res.status, `${method} ${path} ${body}`).toBeLessThan(500);
          expectNoInsides(res.text);
        },
      ),
      { numRuns: 300 },
    );
    await expectNothingHalfWritten();
  });

  it("text PostgreSQL cannot store (NUL, lone surrogates), in every field of every procedure, is 400 invalid_input", async () => {
    const call = fc
      .constantFrom(...PATHS)
      .chain((path) => fc.tuple(fc.constant(path), inputArbitrary(PROCEDURES[path]!._def.inputs)));
    await fc.assert(
      fc.asyncProperty(call, async ([path, input]) => {
        const mutation = PROCEDURES[path]!._def.type === "mutation";
        const token = path.startsWith("admin.") ? "admin_demo_token" : "acme_demo_token";
        const json = JSON.stringify(input ?? null);
        const url = `http://localhost/api/trpc/${path}${mutation ? "" : `?input=${encodeURIComponent(json)}`}`;
        const res = await callRaw(t.db, {
          url,
          method: mutation ? "POST" : "GET",
          body: mutation ? json : undefined,
          token,
          key: crypto.randomUUID(),
        });
        expect(res.status, `${path} ${json} ${res.text}`).toBeLessThan(500);
        if (holdsHostileText(input)) {
          expect(res.status, `${path} ${json}`).toBe(400);
          expect(JSON.parse(res.text).error.data.reason).toBe("invalid_input");
        }
        expectNoInsides(res.text);
      }),
      { numRuns: 600 },
    );
    await expectNothingHalfWritten();
  });

  it("sign-in: hostile text in the e-mail, password or next is 400 invalid_input, never a query", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("email", "password", "next"),
        hostileText,
        async (field, bad) => {
          const form = new URLSearchParams({
            email: "ops@example.com",
            password: "correct horse battery",
            next: "/admin",
            [field]: bad,
          });
          const headers = new Headers({ "content-type": "application/x-www-form-urlencoded" });
          const res = await handleSignIn(
            new Request("http://localhost/api/session/signin", {
              method: "POST",
              headers,
              body: form,
            }),
            { db: t.db, demo: false },
          );
          // A lone surrogate cannot travel in a form (UTF-8 has no form for it: it arrives as
          // U+FFFD); NUL can, and is refused.
          if (!bad.includes("\u0000")) return;
          expect(res.status).toBe(400);
          expect(((await res.json()) as { reason: string }).reason).toBe("invalid_input");
        },
      ),
      { numRuns: 60 },
    );
  });

  it("the payment webhook: arbitrary bodies and signatures are refused, never a 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(
        anyText,
        fc.option(fc.string({ maxLength: 80 }), { nil: undefined }),
        async (body, signature) => {
          const headers = new Headers({ "content-type": "application/json" });
          if (signature !== undefined) headers.set("simpay-signature", signature);
          const res = await webhookResponse(
            testApp(t.db).payments,
            new Request("http://localhost/api/webhooks/payments", {
              method: "POST",
              headers,
              body,
            }),
            {
              secret: DEMO_WEBHOOK_SECRET,
            },
          );
          expect(res.status).toBeLessThan(500);
          expectNoInsides(await res.text());
        },
      ),
      { numRuns: 150 },
    );
  });

  it("sign-in: arbitrary bodies, content types and origins are refused, never a 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(
        anyText,
        fc.constantFrom(
          "application/x-www-form-urlencoded",
          "application/json",
          "text/plain",
          "multipart/form-data; boundary=x",
          "",
        ),
        fc.constantFrom(undefined, "https://evil.example", "http://localhost"),
        async (body, contentType, origin) => {
          const headers = new Headers(contentType ? { "content-type": contentType } : {});
          if (origin) headers.set("origin", origin);
          const res = await handleSignIn(
            new Request("http://localhost/api/session/signin", { method: "POST", headers, body }),
            { db: t.db, demo: false },
          );
          expect(res.status).toBeLessThan(500);
          expectNoInsides(await res.text());
        },
      ),
      { numRuns: 150 },
    );
  });

  it("health says up and nothing else", async () => {
    const monitor = new HealthMonitor(t.db);
    const res = await healthAnswer(monitor);
    monitor.stop();
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "up", database: "up", ageMs: expect.any(Number) });
  });
});
