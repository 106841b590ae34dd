// The reason an operator gives for a repair: required, and written to the audit log with it.

export function AuditReasonField({
  label,
  value,
  onChange,
  flex,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  flex: string;
}) {
  return (
    <label style={{ flex }}>
      {label}{" "}
      <input
        value={value}
        onChange={(e) => onChange(e.target.value)}
        required
        minLength={3}
        maxLength={500}
        style={{ width: "100%" }}
        placeholder="Why (goes to the audit log)"
      />
    </label>
  );
}
