// The studio's lists of things a person acts on (members, tokens, providers, agents, sessions,
// deliveries): one table with a row header, the row's buttons in a last column headed "Actions" for
// screen readers, and the loading, failed and empty states above it; `useConfirm` puts a
// confirmation step (an alertdialog) in front of an action that cannot be taken back.
import { type ReactNode, useState } from "react";
import { messageOf } from "./api";
import { ConfirmDialog } from "./EditorParts";

interface Column<T> {
  header: string;
  cell: (row: T) => ReactNode;
  /** The cell that names the row (`<th scope="row">`): what a screen reader reads before each cell. */
  rowHeader?: boolean;
  className?: string;
}

/** What a table shows: its rows once read (a TanStack query's fields). */
interface Rows<T> {
  data: readonly T[] | undefined;
  isPending: boolean;
  error: unknown;
}

interface DataTableProps<T> {
  query: Rows<T>;
  rowKey: (row: T) => string;
  columns: ReadonlyArray<Column<T>>;
  /** The table's name: a caption read by screen readers only, or the id of the heading that names it. */
  caption?: string;
  labelledBy?: string;
  /** The row's buttons, in a last column; none when undefined. */
  actions?: ((row: T) => ReactNode) | undefined;
  actionsClassName?: string;
  loadingText: string;
  /** Shown instead of the table when there is no row. */
  empty: ReactNode;
  className?: string;
  /** A wrapper around the table (a scrolling box). */
  wrapClassName?: string;
  rowTestId?: string;
}

export function DataTable<T>(p: DataTableProps<T>) {
  const { columns } = p;
  const rows = p.query.data;
  const failure = p.query.error ? (
    <p role="alert" className="alert error">
      {messageOf(p.query.error)}
    </p>
  ) : null;
  if (p.query.isPending && !p.query.error) return <p aria-busy="true">{p.loadingText}</p>;
  if (!rows) return failure;
  if (rows.length === 0) return p.empty;
  const table = (
    <table className={p.className ?? "table"} aria-labelledby={p.labelledBy}>
      {p.caption && <caption className="visually-hidden">{p.caption}</caption>}
      <thead>
        <tr>
          {columns.map((c) => (
            <th key={c.header} scope="col">
              {c.header}
            </th>
          ))}
          {p.actions && (
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          )}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={p.rowKey(row)} data-testid={p.rowTestId}>
            {columns.map((c) =>
              c.rowHeader ? (
                <th key={c.header} scope="row" className={c.className}>
                  {c.cell(row)}
                </th>
              ) : (
                <td key={c.header} className={c.className}>
                  {c.cell(row)}
                </td>
              ),
            )}
            {p.actions && <td className={p.actionsClassName}>{p.actions(row)}</td>}
          </tr>
        ))}
      </tbody>
    </table>
  );
  return (
    <>
      {failure}
      {p.wrapClassName ? <div className={p.wrapClassName}>{table}</div> : table}
    </>
  );
}

interface ConfirmText {
  title: string;
  body: string;
  confirmLabel: string;
}

/**
 * A confirmation in front of an action: `ask(item)` opens the dialog `describe(item)` words, and
 * its confirm button runs `run(item)`; Cancel, Escape or a click outside drop it.
 */
export function useConfirm<T>(run: (item: T) => void, describe: (item: T) => ConfirmText): { ask: (item: T) => void; dialog: ReactNode } {
  const [pending, setPending] = useState<{ item: T } | null>(null);
  const text = pending ? describe(pending.item) : { title: "", body: "", confirmLabel: "" };
  const dialog = (
    <ConfirmDialog
      isOpen={pending !== null}
      title={text.title}
      body={text.body}
      confirmLabel={text.confirmLabel}
      onConfirm={() => {
        if (pending) run(pending.item);
        setPending(null);
      }}
      onCancel={() => setPending(null)}
    />
  );
  return { ask: (item) => setPending({ item }), dialog };
}
