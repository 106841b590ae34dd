import { AuditPanel } from "@/components/admin/AuditPanel";

export default function AdminAuditPage() {
  return (
    <>
      <h1>Audit log</h1>
      <AuditPanel />
    </>
  );
}
