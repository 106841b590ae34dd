import { OrdersList } from "@/components/OrdersList";

export const metadata = { title: "Orders — once" };

export default function OrdersPage() {
  return <OrdersList />;
}
