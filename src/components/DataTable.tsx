// A table of rows under one line of column headings: the rows as children, or drawn by `cells`
// (each column's heading and what a row shows in it). `scroll` puts a wide table in its own box
// that scrolls sideways on a narrow screen, so the page itself never does (the dashboard's tables
// all do so by its stylesheet: `.admin table`).
import type { CSSProperties, ReactNode } from "react";

export function DataTable({
  label,
  columns,
  scroll = false,
  style,
  foot,
  children,
}: {
  label: string;
  columns: readonly string[];
  scroll?: boolean;
  style?: CSSProperties;
  /** The rows of the table's foot (a total). */
  foot?: ReactNode;
  /** The rows. */
  children: ReactNode;
}) {
  const table = (
    <table aria-label={label} style={style}>
      <thead>
        <tr>
          {columns.map((column) => (
            <th key={column} scope="col">
              {column}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>{children}</tbody>
      {foot && <tfoot>{foot}</tfoot>}
    </table>
  );
  return scroll ? <div style={{ overflowX: "auto" }}>{table}</div> : table;
}

/** Each column's heading and what one row shows in it, in order. */
export type Cells<T> = Record<string, (row: T) => ReactNode>;

/** One row per item (keyed by its id), one cell per column of `cells`. */
export function CellTable<T extends { id: string }>({
  cells,
  rows,
  ...table
}: {
  label: string;
  cells: Cells<T>;
  rows: readonly T[];
}) {
  return (
    <DataTable {...table} columns={Object.keys(cells)}>
      {rows.map((row) => (
        <tr key={row.id}>
          {Object.entries(cells).map(([column, cell]) => (
            <td key={column}>{cell(row)}</td>
          ))}
        </tr>
      ))}
    </DataTable>
  );
}
