import { SessionsPanel } from "@/components/admin/SessionsPanel";

export default function AdminSessionsPage() {
  return (
    <>
      <h1>Sessions</h1>
      <SessionsPanel />
    </>
  );
}
