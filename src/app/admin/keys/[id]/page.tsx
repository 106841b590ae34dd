import { KeyRef } from "@/components/admin/KeyRef";

/** /admin/keys/<row id or key value>[?tenant=<tenant>] */
export default async function AdminKeyPage({ params, searchParams }: { params: Promise<{ id: string }>; searchParams: Promise<{ tenant?: string | string[] }> }) {
  const [{ id }, query] = await Promise.all([params, searchParams]);
  const tenant = typeof query.tenant === "string" && query.tenant.trim() ? query.tenant.trim() : undefined;
  return <KeyRef value={id} tenant={tenant} />;
}
