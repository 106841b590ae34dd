import { OutboxPanel } from "@/components/admin/OutboxPanel";
import { ReconciliationPanel } from "@/components/admin/ReconciliationPanel";

export default function AdminOutboxPage() {
  return (
    <>
      <h1>Outbox &amp; reconciliation</h1>
      <OutboxPanel />
      <ReconciliationPanel />
    </>
  );
}
