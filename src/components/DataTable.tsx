// A table of rows under one line of column headings. `scroll` puts a wide table in its own box
// that scrolls sideways on a narrow screen, so the page itself never does.
import type { CSSProperties, ReactNode } from "react";
import { ColumnHeads } from "./ColumnHeads";

export function DataTable({
  label,
  columns,
  scroll = false,
  style,
  children,
}: {
  label: string;
  columns: readonly string[];
  scroll?: boolean;
  style?: CSSProperties;
  /** The rows. */
  children: ReactNode;
}) {
  const table = (
    <table aria-label={label} style={style}>
      <ColumnHeads labels={columns} />
      <tbody>{children}</tbody>
    </table>
  );
  return scroll ? <div style={{ overflowX: "auto" }}>{table}</div> : table;
}
