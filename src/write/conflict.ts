// Optimistic concurrency: a node write that names the revision its caller last read
// (expected_revision, If-Match) is refused, with nothing written, when the node has moved on.
import { and, asc, eq, gt } from "drizzle-orm";
import type { Db } from "../../db/client";
import { activity, nodes, revisions } from "../../db/schema/index";
import { AppError } from "../errors";
import { isUuid } from "../lib/ids";
import type { WriteContext } from "./context";

/** How many of the changes since the expected revision a conflict lists. */
const MAX_LISTED = 20;

/**
 * Called by contentWrite after the project lock and before the write: the target node's row is
 * locked and its revision compared with the expected one. An unknown node is left to the write
 * (404). Checked once per operation: an operation's own second write is not held to it.
 */
export async function checkExpectedRevision(tx: Db, ctx: WriteContext, projectId: string): Promise<void> {
  if (!ctx.expected || ctx.state.checked) return;
  ctx.state.checked = true;
  const { nodeId, revision: expected } = ctx.expected;
  if (!isUuid(nodeId)) return;
  const [row] = await tx
    .select({ revision: nodes.revision })
    .from(nodes)
    .where(and(eq(nodes.id, nodeId), eq(nodes.projectId, projectId)))
    .for("update");
  if (!row || row.revision === expected) return;
  throw await conflict(tx, nodeId, expected, row.revision);
}

interface Change {
  revision: number;
  operation: string;
  actor: unknown;
  created_at: string;
}

/** 409 conflict naming the current revision, the changes since (revisions, else the activity log) and the top-level fields that differ. */
async function conflict(tx: Db, nodeId: string, expected: number, current: number): Promise<AppError> {
  const since = await changesSince(tx, nodeId, expected);
  const fields = await changedFields(tx, nodeId, expected, current);
  const last = since.at(-1);
  const by = last ? `; last by ${last.operation} (${(last.actor as { kind?: string }).kind ?? "unknown"}) at ${last.created_at}` : "";
  const what = fields && fields.length > 0 ? `; changed: ${fields.join(", ")}` : "";
  return new AppError("conflict", `node ${nodeId} is at revision ${current}, not ${expected}: it changed since it was read${by}${what}. Nothing was written: read it again and retry`, {
    node_id: nodeId,
    expected_revision: expected,
    current_revision: current,
    changes_since: since,
    changed_fields: fields,
  });
}

async function changesSince(tx: Db, nodeId: string, expected: number): Promise<Change[]> {
  const recorded = await tx
    .select({ revision: revisions.number, operation: revisions.operation, actor: revisions.actor, createdAt: revisions.createdAt })
    .from(revisions)
    .where(and(eq(revisions.nodeId, nodeId), gt(revisions.number, expected)))
    .orderBy(asc(revisions.number))
    .limit(MAX_LISTED);
  // Without revision rows (pruned, or written before revisions were recorded) the activity log names them.
  const rows =
    recorded.length > 0
      ? recorded
      : (
          await tx
            .select({ revision: activity.revision, operation: activity.operation, actor: activity.actor, createdAt: activity.createdAt })
            .from(activity)
            .where(and(eq(activity.nodeId, nodeId), gt(activity.revision, expected)))
            .orderBy(asc(activity.revision))
            .limit(MAX_LISTED)
        ).flatMap((r) => (r.revision === null ? [] : [{ ...r, revision: r.revision }]));
  return rows.map((r) => ({ revision: r.revision, operation: r.operation, actor: r.actor, created_at: r.createdAt.toISOString() }));
}

/** The snapshot's top-level fields that differ between the two revisions, when both are still recorded; null otherwise. */
async function changedFields(tx: Db, nodeId: string, expected: number, current: number): Promise<string[] | null> {
  const rows = await tx
    .select({ number: revisions.number, snapshot: revisions.snapshot })
    .from(revisions)
    .where(and(eq(revisions.nodeId, nodeId), eq(revisions.number, expected)))
    .union(
      tx
        .select({ number: revisions.number, snapshot: revisions.snapshot })
        .from(revisions)
        .where(and(eq(revisions.nodeId, nodeId), eq(revisions.number, current))),
    );
  const then = rows.find((r) => r.number === expected)?.snapshot;
  const now = rows.find((r) => r.number === current)?.snapshot;
  if (!then || !now) return null;
  const keys = new Set([...Object.keys(then), ...Object.keys(now)]);
  return [...keys].filter((k) => k !== "revision" && k !== "updated_at" && JSON.stringify(then[k]) !== JSON.stringify(now[k])).sort();
}
