import { Checkout } from "@/components/Checkout";
import { NetworkTroublePanel } from "@/components/NetworkTroublePanel";

export const metadata = { title: "Cart — once" };

export default function CartPage() {
  return (
    <>
      <Checkout />
      <NetworkTroublePanel />
    </>
  );
}
