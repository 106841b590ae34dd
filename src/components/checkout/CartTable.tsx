// The cart as a table: one row per product with its quantity, a line total and a remove button.
// Four columns, the unit price under the name, so the table fits a 390 px phone without scrolling.
import { cartStore, MAX_QUANTITY } from "../cart-store";
import type { CartLine } from "@/trpc/checkout-intent";
import { formatMoney } from "../format";
import type { useCheckout } from "./use-checkout";

type Products = ReturnType<typeof useCheckout>["products"];
type Product = NonNullable<ReturnType<Products["byId"]["get"]>>;

type CartProps = { lines: CartLine[]; products: Products; disabled: boolean };

export function CartTable({ lines, products: { byId, loaded, currency }, disabled }: CartProps) {
  const total = lines.reduce(
    (sum, l) => sum + (byId.get(l.productId)?.priceCents ?? 0) * l.quantity,
    0,
  );
  return (
    <table aria-label="Cart" className="cart">
      <thead>
        <tr>
          <th scope="col">Product</th>
          <th scope="col">Quantity</th>
          <th scope="col">Total</th>
          <th scope="col">
            <span className="visually-hidden">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {lines.map((line) => (
          <CartRow
            key={line.productId}
            line={line}
            product={byId.get(line.productId)}
            catalogLoaded={loaded}
            disabled={disabled}
          />
        ))}
      </tbody>
      <tfoot>
        <tr>
          <th scope="row" colSpan={2}>
            Order total
          </th>
          <td className="price">{loaded ? formatMoney(total, currency) : "—"}</td>
          <td />
        </tr>
      </tfoot>
    </table>
  );
}

function CartRow({
  line,
  product,
  catalogLoaded,
  disabled,
}: {
  line: CartLine;
  product?: Product;
  /** The catalog answered: a product missing from it is really no longer sold. */
  catalogLoaded: boolean;
  disabled: boolean;
}) {
  // Only a catalog that answered can say a product is gone; until then it is just not known yet.
  const name =
    product?.name ?? (catalogLoaded ? "Product no longer sold" : "Product details loading…");
  return (
    <tr>
      <th scope="row">
        {name}
        {product && (
          <span className="muted unit-price">
            {formatMoney(product.priceCents, product.currency)} each
          </span>
        )}
      </th>
      <td>
        <QuantityInput line={line} name={name} disabled={disabled} />
      </td>
      <td>{product ? formatMoney(product.priceCents * line.quantity, product.currency) : "—"}</td>
      <td>
        <RemoveButton line={line} name={name} disabled={disabled} />
      </td>
    </tr>
  );
}

type LineControl = { line: CartLine; name: string; disabled: boolean };

function RemoveButton({ line, name, disabled }: LineControl) {
  return (
    <button
      type="button"
      className="secondary"
      disabled={disabled}
      onClick={() => cartStore.remove(line.productId)}
      aria-label={`Remove ${name}`}
    >
      Remove
    </button>
  );
}

/** The line's quantity; a cleared or non-numeric field leaves the cart as it was. */
function QuantityInput({ line, name, disabled }: LineControl) {
  return (
    <input
      type="number"
      min={1}
      max={MAX_QUANTITY}
      value={line.quantity}
      aria-label={`Quantity of ${name}`}
      disabled={disabled}
      onChange={(e) => {
        const q = Number(e.target.value);
        if (Number.isFinite(q) && q >= 1) cartStore.setQuantity(line.productId, q);
      }}
      className="quantity"
    />
  );
}
