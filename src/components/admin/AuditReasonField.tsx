// The reason an operator gives for a repair: required, within the server's bounds (3 to 500
// characters), and written to the audit log with it. With `flex` it fills that share of its row;
// without, it is a compact field for a table row.
import { TextField } from "./fields";

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
