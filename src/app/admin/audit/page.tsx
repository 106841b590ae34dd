import { AuditPanel } from "@/components/admin/AuditPanel";

const one = (v: string | string[] | undefined) => (typeof v === "string" ? v.trim() : "");

/**
 * /admin/audit[?actor=…&action=…&key=…]: the filters start from the URL (a key page links here).
 */
export default async function AdminAuditPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const q = await searchParams;
  return (
    <>
      <h1>Audit log</h1>
      <AuditPanel initial={{ actor: one(q.actor), action: one(q.action), key: one(q.key) }} />
    </>
  );
}
