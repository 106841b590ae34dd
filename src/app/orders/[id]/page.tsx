import { OrderView } from "@/components/OrderView";

export const metadata = { title: "Order — once" };

export default async function OrderPage({
  params,
  searchParams,
}: {
  params: Promise<{ id: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { id } = await params;
  const query = await searchParams;
  const placed = query.placed === "new" || query.placed === "replayed" ? query.placed : undefined;
  const replays =
    typeof query.replays === "string" ? Number.parseInt(query.replays, 10) : undefined;
  return (
    <OrderView
      key={id}
      id={id}
      placed={placed}
      replays={Number.isFinite(replays) ? replays : undefined}
    />
  );
}
