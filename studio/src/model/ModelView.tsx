// The content model read as a person reads it: each block type and node type with its description,
// its fields (type, format, required, translatable, other constraints), and for a node type the
// blocks it allows with their counts and the types its children may have.
import { type ReactNode, useId } from "react";
import type { ContentModel } from "../app/types";
import { isClosed, type PropertyRow, propertyRows } from "./schema-rows";

function PropertyTable({ rows, caption }: { rows: PropertyRow[]; caption: string }) {
  if (rows.length === 0) return <p className="muted">No declared fields: any JSON object.</p>;
  return (
    <div className="md-scroll">
      <table className="table md-table">
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Field</th>
            <th scope="col">Type</th>
            <th scope="col">Format</th>
            <th scope="col">Required</th>
            <th scope="col">Translatable</th>
            <th scope="col">Other</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.path}>
              <th scope="row">
                <span className="path">{r.path}</span>
                {r.title && <div className="md-small">{r.title}</div>}
                {r.description && <div className="muted md-small">{r.description}</div>}
              </th>
              <td>{r.type}</td>
              <td>{r.format ?? ""}</td>
              <td>{r.required ? "Required" : "Optional"}</td>
              <td>{r.translatable ? "Translatable" : "No"}</td>
              <td className="md-small">{r.details.join("; ")}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function TypeCard({ kind, name, description, schema, children }: { kind: string; name: string; description: string; schema: unknown; children?: ReactNode }) {
  const id = useId();
  return (
    <article className="md-type" aria-labelledby={id}>
      <h3 id={id}>
        <span className="path">{name}</span> <span className="muted md-kind">{kind}</span>
      </h3>
      {description ? <p className="md-description">{description}</p> : <p className="muted md-description">No description.</p>}
      <PropertyTable rows={propertyRows(schema)} caption={`Fields of ${kind} ${name}`} />
      {isClosed(schema) && <p className="muted md-small">No field beyond those declared.</p>}
      {children}
    </article>
  );
}

export function ModelView({ model }: { model: ContentModel }) {
  return (
    <>
      <p className="muted">
        {model.version === 0
          ? "This project has no content model yet: every type is free-form."
          : model.strict
            ? "Strict: a block or node type the model does not declare is refused."
            : "Not strict: a block or node type the model does not declare stays free-form."}
      </p>
      <section aria-labelledby="md-block-types" className="md-section">
        <h2 id="md-block-types">Block types</h2>
        {model.block_types.length === 0 && <p className="notice">No block type declared.</p>}
        {model.block_types.map((b) => (
          <TypeCard key={b.name} kind="block type" name={b.name} description={b.description} schema={b.schema} />
        ))}
      </section>
      <section aria-labelledby="md-node-types" className="md-section">
        <h2 id="md-node-types">Node types</h2>
        {model.node_types.length === 0 && <p className="notice">No node type declared.</p>}
        {model.node_types.map((n) => (
          <TypeCard key={n.name} kind="node type" name={n.name} description={n.description} schema={n.fields}>
            <dl className="md-facts">
              <dt>Allowed blocks</dt>
              <dd>
                {n.blocks === null ? (
                  "Any declared block type"
                ) : n.blocks.length === 0 ? (
                  "None"
                ) : (
                  <ul className="md-inline-list">
                    {n.blocks.map((b) => (
                      <li key={b.type}>
                        <span className="path">{b.type}</span> {countWords(b.min, b.max)}
                      </li>
                    ))}
                  </ul>
                )}
              </dd>
              <dt>Allowed children</dt>
              <dd>
                {n.children === null ? (
                  "Any node type"
                ) : n.children.length === 0 ? (
                  "None"
                ) : (
                  <ul className="md-inline-list">
                    {n.children.map((c) => (
                      <li key={c} className="path">
                        {c}
                      </li>
                    ))}
                  </ul>
                )}
              </dd>
            </dl>
          </TypeCard>
        ))}
      </section>
    </>
  );
}

/** "(at least 1, at most 3)", "(exactly 1)", "(any number)". */
function countWords(min: number | undefined, max: number | undefined): string {
  if (min !== undefined && max !== undefined && min === max) return `(exactly ${min})`;
  const parts = [min ? `at least ${min}` : null, max !== undefined ? `at most ${max}` : null].filter(Boolean);
  return parts.length > 0 ? `(${parts.join(", ")})` : "(any number)";
}
