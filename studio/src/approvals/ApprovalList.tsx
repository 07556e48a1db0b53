// The requests of one status, newest first: the agent that asked, the operation, the page (linked
// to its editor), when it was asked and when it expires, and the revision it is bound to. `Review`
// opens one beside the list.
import { useQueries } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { Button } from "react-aria-components";
import { ApiError } from "../app/api";
import { nodeQuery } from "../app/queries";
import { formatTime } from "../app/time";
import type { Approval } from "./types";
import { agentOf, STATUS_WORDS, verbOf } from "./words";

/** The id of a request's Review button: the focus goes back there when its detail closes. */
export const reviewButtonId = (approvalId: string) => `approval-review-${approvalId}`;

export function ApprovalList({ slug, approvals, selectedId, onReview }: { slug: string; approvals: Approval[]; selectedId: string | null; onReview: (a: Approval) => void }) {
  // The titles of the pages the requests name (a page deleted since answers 404).
  const ids = [...new Set(approvals.map((a) => a.node_id))];
  const nodes = useQueries({ queries: ids.map((id) => ({ ...nodeQuery(slug, id), retry: false, staleTime: 10_000 })) });
  const titleOf = (id: string): { title: string; path: string } | "gone" | null => {
    const q = nodes[ids.indexOf(id)];
    if (q?.data) return { title: q.data.title, path: q.data.path };
    if (q?.error instanceof ApiError && q.error.status === 404) return "gone";
    return null;
  };

  return (
    <ul className="approval-list">
      {approvals.map((a) => {
        const page = titleOf(a.node_id);
        const agent = agentOf(a.requested_by);
        const label = page && page !== "gone" ? page.title : "a page no longer there";
        const selected = a.id === selectedId;
        return (
          <li key={a.id} className={`approval-item${selected ? " is-selected" : ""}`} aria-current={selected ? "true" : undefined}>
            <div className="approval-item-head">
              <span className={`st-badge approval-op approval-op-${a.operation}`}>{verbOf(a.operation)}</span>
              {page && page !== "gone" ? (
                <Link to="/p/$slug/nodes/$id" params={{ slug, id: a.node_id }} className="approval-title">
                  {page.title}
                </Link>
              ) : (
                <span className="approval-title">{page === "gone" ? `A page no longer there (${a.node_id})` : "…"}</span>
              )}
              {a.status !== "pending" && <span className={`st-badge approval-status approval-status-${a.status}`}>{STATUS_WORDS[a.status]}</span>}
            </div>
            <p className="approval-meta">
              <span>
                Asked by <strong>{agent.name}</strong> <span className="muted">({agent.kind})</span>
              </span>
              <span>
                <code>{a.operation}</code> at revision {a.revision}
              </span>
            </p>
            <p className="approval-meta muted">
              <span>
                Asked <time dateTime={a.created_at}>{formatTime(a.created_at)}</time>
              </span>
              <span>
                {a.status === "pending" ? "Expires" : "Expiry"} <time dateTime={a.expires_at}>{formatTime(a.expires_at)}</time>
              </span>
            </p>
            {a.note && <p className="approval-meta approval-note">Note: {a.note}</p>}
            <Button id={reviewButtonId(a.id)} className={`st-button small${selected ? " primary" : ""}`} aria-label={`Review: ${verbOf(a.operation)} “${label}”`} onPress={() => onReview(a)}>
              Review
            </Button>
          </li>
        );
      })}
    </ul>
  );
}
