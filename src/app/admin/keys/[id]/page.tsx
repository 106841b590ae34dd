import { KeyRef } from "@/components/admin/KeyRef";

/**
 * Next hands the segment over still percent-encoded: decode it once ("order%20intent" is the key
 * "order intent"). A segment that is not valid percent-encoding (a bare "50%") is taken as typed.
 */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** /admin/keys/<row id or key value>[?tenant=<tenant>] */
export default async function AdminKeyPage({
  params,
  searchParams,
}: {
  params: Promise<{ id: string }>;
  searchParams: Promise<{ tenant?: string | string[] }>;
}) {
  const [{ id }, query] = await Promise.all([params, searchParams]);
  const tenant =
    typeof query.tenant === "string" && query.tenant.trim() ? query.tenant.trim() : undefined;
  return <KeyRef value={decodeSegment(id)} tenant={tenant} />;
}
