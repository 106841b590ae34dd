import { StatsPanel } from "@/components/admin/StatsPanel";
import { KeySearch } from "@/components/admin/KeySearch";
import { KeysPanel } from "@/components/admin/KeysPanel";

export default function AdminPage() {
  return (
    <>
      <h1>Idempotency keys</h1>
      <StatsPanel />
      <KeySearch />
      <KeysPanel />
    </>
  );
}
