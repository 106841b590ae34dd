import { StatsPanel } from "@/components/admin/StatsPanel";
import { KeysPanel } from "@/components/admin/KeysPanel";

export default function AdminPage() {
  return (
    <>
      <h1>Idempotency keys</h1>
      <StatsPanel />
      <KeysPanel />
    </>
  );
}
