// A revision's changes, field by field (JSON Pointer), before and after as text with the words
// removed marked <del> and those inserted marked <ins>. Nothing is rendered as HTML.
import { valueText } from "../app/docs";
import { type DiffPart, wordDiff } from "./word-diff";

export interface Change {
  path: string;
  before?: unknown;
  after?: unknown;
}

function Parts({ parts, empty }: { parts: DiffPart[]; empty: boolean }) {
  if (empty) return <span className="muted">(none)</span>;
  return (
    <>
      {parts.map((p, i) =>
        p.kind === "removed" ? (
          // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one text, in order, never reordered
          <del key={i}>{p.text}</del>
        ) : p.kind === "added" ? (
          // biome-ignore lint/suspicious/noArrayIndexKey: as above
          <ins key={i}>{p.text}</ins>
        ) : (
          // biome-ignore lint/suspicious/noArrayIndexKey: as above
          <span key={i}>{p.text}</span>
        ),
      )}
    </>
  );
}

export function DiffTable({ changes, caption }: { changes: Change[]; caption: string }) {
  if (changes.length === 0) return <p className="notice">No field changed in this revision.</p>;
  return (
    <div className="diff-scroll">
      <table className="table diff st-word-diff">
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Field</th>
            <th scope="col">Before</th>
            <th scope="col">After</th>
          </tr>
        </thead>
        <tbody>
          {changes.map((c, i) => {
            const before = c.before === undefined ? "" : valueText(c.before);
            const after = c.after === undefined ? "" : valueText(c.after);
            const parts = wordDiff(before, after);
            return (
              // biome-ignore lint/suspicious/noArrayIndexKey: one path may appear twice (a block out, a block in)
              <tr key={`${c.path}:${i}`}>
                <th scope="row">
                  <code>{c.path}</code>
                </th>
                <td>
                  <pre className="diff-before">
                    <Parts parts={parts.before} empty={c.before === undefined} />
                  </pre>
                </td>
                <td>
                  <pre className="diff-after">
                    <Parts parts={parts.after} empty={c.after === undefined} />
                  </pre>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
