// The dashboard's form pieces: the search bar that holds a view's filters, and labelled fields (a
// text, a choice with "Any" first, a checkbox). Each field's handler gets the new value.
import type { FormEvent, InputHTMLAttributes, ReactNode } from "react";
import { Options } from "../Options";

/** A row of filters (or a search) over a view; without `onSubmit`, Enter does nothing. */
export function SearchBar({
  label,
  onSubmit = (e) => e.preventDefault(),
  children,
}: {
  label: string;
  onSubmit?: (e: FormEvent) => void;
  children: ReactNode;
}) {
  return (
    <form className="row card" role="search" aria-label={label} onSubmit={onSubmit}>
      {children}
    </form>
  );
}

/** A labelled text input; with `flex`, the label takes that share of its row and the input fills it. */
export function TextField({
  label,
  onChange,
  flex,
  ...input
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  flex?: string;
} & Omit<InputHTMLAttributes<HTMLInputElement>, "onChange" | "style" | "value">) {
  return (
    <label style={flex ? { flex } : undefined}>
      {label}{" "}
      <input
        {...input}
        onChange={(e) => onChange(e.target.value)}
        style={flex ? { width: "100%" } : undefined}
      />
    </label>
  );
}

/** A labelled choice of one value or "Any" (the empty value). */
export function SelectField<T extends string>({
  label,
  value,
  onChange,
  options,
  labels = {},
}: {
  label: string;
  value: T | "";
  onChange: (value: T | "") => void;
  options: readonly T[];
  /** What an option says, where it says more than its value. */
  labels?: Partial<Record<T, string>>;
}) {
  return (
    <label>
      {label}{" "}
      <select value={value} onChange={(e) => onChange(e.target.value as T | "")}>
        <option value="">Any</option>
        <Options of={options.map((o) => ({ value: o, label: labels[o] ?? o }))} />
      </select>
    </label>
  );
}

/** A labelled checkbox, the label after the box. */
export function CheckField({
  label,
  value,
  onChange,
}: {
  label: string;
  value: boolean;
  onChange: (checked: boolean) => void;
}) {
  return (
    <label>
      <input type="checkbox" checked={value} onChange={(e) => onChange(e.target.checked)} /> {label}
    </label>
  );
}
