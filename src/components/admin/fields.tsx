// The dashboard's form pieces: the search bar that holds a view's filters, and labelled fields (a
// text, a choice with "Any" first, a checkbox, the reason for the audit log). Each field's handler
// gets the new value.
import type { FormEvent, InputHTMLAttributes, ReactNode } from "react";
import { Options } from "../Options";

/** A form's submit handler that stays on the page and does `act`. */
export const submitted = (act: () => unknown) => (e: FormEvent) => {
  e.preventDefault();
  act();
};

/** A row of filters (or a search) over a view; without `onSubmit`, Enter does nothing. */
export function SearchBar({
  label,
  onSubmit = () => {},
  children,
}: {
  label: string;
  onSubmit?: () => void;
  children: ReactNode;
}) {
  return (
    <form className="row card" role="search" aria-label={label} onSubmit={submitted(onSubmit)}>
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

/**
 * The reason an operator gives for a repair: required, within the server's bounds (3 to 500
 * characters), and written to the audit log with it. With `flex` it fills that share of its row;
 * without, it is a compact field for a table row.
 */
export function AuditReasonField({
  label = "Reason",
  value,
  onChange,
  flex,
}: {
  label?: string;
  value: string;
  onChange: (value: string) => void;
  flex?: string;
}) {
  return (
    <TextField
      label={label}
      value={value}
      onChange={onChange}
      required
      minLength={3}
      maxLength={500}
      {...(flex ? { flex, placeholder: "Why (goes to the audit log)" } : { size: 14 })}
    />
  );
}
