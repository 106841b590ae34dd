// A select's options from value and label pairs, keyed by value: the shop's and the dashboard's
// selects list theirs the same way.
export function Options({ of }: { of: readonly { value: string | number; label: string }[] }) {
  return of.map((o) => (
    <option key={o.value} value={o.value}>
      {o.label}
    </option>
  ));
}
