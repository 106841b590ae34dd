// A fixture for draft-ietf-httpapi-idempotency-key-header, built on @once/idempotency/http alone,
// designed from the draft (not from any one suite): a collection where POST creates a resource
// and PATCH changes one, both needing an `Idempotency-Key`, and GET reading one untouched.
//
// What the draft asks and where it shows here:
// - the key is an sf-string (a bare token also taken); missing on a documented idempotent
//   operation: 400 with a link to documentation; reused with another payload: 422; a request
//   with its key still being processed: 409 (with Retry-After) — all `application/problem+json`;
// - the fingerprint is of the payload (canonical JSON), method, path and query;
// - a retry gets the first answer again: same status, body and Location (a 201 stays a 201), so
//   the resource is made once (GET /stats: `created` counts the creations that ran);
// - `Idempotency-Key-Expires` says until when the key is remembered.
// `x-fixture-delay-ms` (up to 5 s) holds a request inside its transaction, to make "in flight"
// observable; `x-fixture-hold: N` holds it until whoever holds PostgreSQL's advisory lock N lets
// go (a test's barrier, on a loaded machine as on an idle one). Ordinary headers, not part of the
// fingerprint.
import type { IdempotencyEngine } from "@once/idempotency";
import { idempotent } from "@once/idempotency/http";
import type { Tx } from "@/server/db/client";

const SCOPE = "draft-fixture";
const MAX_DELAY_MS = 5_000;

export interface DraftFixture {
  handle(request: Request): Promise<Response>;
}

const delayOf = (request: Request) =>
  Math.min(MAX_DELAY_MS, Math.max(0, Number(request.headers.get("x-fixture-delay-ms")) || 0));

const holdOf = (request: Request) => {
  const lock = Number(request.headers.get("x-fixture-hold") ?? Number.NaN);
  return Number.isSafeInteger(lock) ? lock : null;
};

export function draftFixture(
  engine: IdempotencyEngine<Tx>,
  options: { docs?: string } = {},
): DraftFixture {
  const resources = new Map<string, unknown>();
  let created = 0;
  const read = (request: Request): Response => {
    const { pathname } = new URL(request.url);
    if (pathname === "/stats") return Response.json({ created });
    const resource = resources.get(pathname);
    return resource === undefined
      ? Response.json({ error: "not found" }, { status: 404 })
      : Response.json(resource);
  };
  const write = idempotent<Tx>(
    async (request, { tx, key }) => {
      const { pathname } = new URL(request.url);
      let body: unknown = null;
      try {
        body = await request.json();
      } catch {
        return Response.json({ error: "the body is not JSON" }, { status: 400 });
      }
      const delay = delayOf(request);
      // A statement in the key's transaction: the answer commits with it.
      if (delay > 0) await tx.$executeRawUnsafe("SELECT pg_sleep($1::float8 / 1000)", delay);
      const hold = holdOf(request);
      if (hold !== null)
        await tx.$executeRawUnsafe("SELECT pg_advisory_xact_lock_shared($1)", hold);
      if (request.method === "PATCH") {
        const current = resources.get(pathname);
        if (current === undefined) return Response.json({ error: "not found" }, { status: 404 });
        const changed = { ...(current as object), ...(body as object) };
        resources.set(pathname, changed);
        return Response.json(changed);
      }
      const id = `${++created}`;
      const resource = {
        id,
        idempotencyKey: key,
        ...(typeof body === "object" && body !== null ? body : { value: body }),
      };
      resources.set(`${pathname.replace(/\/$/, "")}/${id}`, resource);
      return Response.json(resource, {
        status: 201,
        headers: { location: `${pathname.replace(/\/$/, "")}/${id}` },
      });
    },
    {
      engine,
      scope: () => SCOPE,
      passThrough: read,
      docs: options.docs,
      operation: "draft-fixture",
    },
  );
  return { handle: write };
}
