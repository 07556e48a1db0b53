// What a Check (a dry run of the model's update) or an Apply answered, as a list a person reads:
// a model that is not valid (its violations, pointing into the model), the nodes the change would
// break (each with its path, type and what fails), or a clean check.
import { Link } from "@tanstack/react-router";
import { ApiError, messageOf } from "../app/api";

interface ModelViolation {
  pointer: string;
  rule?: string;
  message: string;
}
export interface InvalidNode {
  node_id: string;
  path: string;
  type: string;
  violations: ModelViolation[];
}

export type Report =
  | { kind: "clean" }
  | { kind: "content"; invalid: InvalidNode[]; count: number; applied: boolean }
  | { kind: "model"; message: string; violations: ModelViolation[] }
  | { kind: "error"; message: string };

const asList = <T,>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);

/** A refused update read as a report: 400 invalid_content (the model), 409 conflict (the content), anything else as its message. */
export function reportOfError(err: unknown): Report {
  if (err instanceof ApiError && err.details) {
    if (err.code === "invalid_content") return { kind: "model", message: err.message, violations: asList<ModelViolation>(err.details.violations) };
    if (err.code === "conflict" && Array.isArray(err.details.invalid)) {
      const invalid = asList<InvalidNode>(err.details.invalid);
      return { kind: "content", invalid, count: typeof err.details.count === "number" ? err.details.count : invalid.length, applied: false };
    }
    const errors = asList<{ field?: unknown; message?: unknown }>(err.details.errors);
    if (errors.length > 0)
      return {
        kind: "model",
        message: err.message,
        violations: errors.map((e) => ({ pointer: typeof e.field === "string" ? `/${e.field.replaceAll(".", "/")}` : "", message: String(e.message ?? err.message) })),
      };
  }
  return { kind: "error", message: messageOf(err) };
}

/** Where a pointer into the model lands, in words: `/node_types/0/blocks/1/type` → node type "page", blocks, 1, type. */
function placeOf(model: unknown, pointer: string): string {
  const parts = pointer
    .split("/")
    .slice(1)
    .map((p) => p.replaceAll("~1", "/").replaceAll("~0", "~"));
  const [list, index, ...rest] = parts;
  if ((list === "node_types" || list === "block_types") && index !== undefined && /^\d+$/.test(index)) {
    const types = (model as Record<string, unknown> | null)?.[list];
    const entry = Array.isArray(types) ? (types[Number(index)] as { name?: unknown } | undefined) : undefined;
    const name = typeof entry?.name === "string" ? `"${entry.name}"` : `#${Number(index) + 1}`;
    return [`${list === "node_types" ? "node type" : "block type"} ${name}`, ...rest].join(" › ");
  }
  return parts.length > 0 ? parts.join(" › ") : "the whole model";
}

export function CheckReport({ report, model, slug }: { report: Report; model: unknown; slug: string }) {
  if (report.kind === "clean")
    return (
      <div className="md-report md-report-ok" role="status">
        <p>
          <strong>Check passed:</strong> the model is valid and every existing node matches it. Apply it when ready.
        </p>
      </div>
    );
  if (report.kind === "error")
    return (
      <p role="alert" className="alert error">
        {report.message}
      </p>
    );
  if (report.kind === "model")
    return (
      <section className="md-report md-report-bad" aria-labelledby="md-report-heading" role="alert">
        <h3 id="md-report-heading">The model is not valid</h3>
        <p>{report.message}</p>
        {report.violations.length > 0 && (
          <ul className="md-violations">
            {report.violations.map((v) => (
              <li key={`${v.pointer}:${v.rule ?? ""}:${v.message}`}>
                <span className="path">{v.pointer || "/"}</span> <span className="muted">({placeOf(model, v.pointer)})</span>: {v.message}
              </li>
            ))}
          </ul>
        )}
      </section>
    );
  return (
    <section className="md-report md-report-bad" aria-labelledby="md-report-heading" role="alert">
      <h3 id="md-report-heading">
        {report.count} {report.count === 1 ? "node" : "nodes"} would no longer match
      </h3>
      <p>
        {report.applied ? "The model was applied anyway; fix these nodes at their next edit." : "Nothing was changed. Fix these nodes first, or change the model so that they still match it."}
        {report.count > report.invalid.length && ` The first ${report.invalid.length} are listed.`}
      </p>
      <ul className="md-nodes">
        {report.invalid.map((n) => (
          <li key={n.node_id}>
            <Link to="/p/$slug/nodes/$id" params={{ slug, id: n.node_id }} className="path">
              {n.path || n.node_id}
            </Link>{" "}
            <span className="muted">({n.type})</span>
            <ul className="md-violations">
              {n.violations.map((v) => (
                <li key={`${v.pointer}:${v.rule ?? ""}:${v.message}`}>
                  <span className="path">{v.pointer || "/"}</span>: {v.message}
                </li>
              ))}
            </ul>
          </li>
        ))}
      </ul>
    </section>
  );
}
