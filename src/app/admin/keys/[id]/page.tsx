import { KeyDetail } from "@/components/admin/KeyDetail";

export default async function AdminKeyPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return <KeyDetail id={id} />;
}
