// What a dry run answers for each node a content write changed: the write path has
// recorded the revisions (in the transaction that will be rolled back), so the diff is that of the
// node's previous revision and the one just recorded; for a node the write published, that of its
// published version before the write and the one it published.
import { and, eq, inArray, or } from "drizzle-orm";
import type { Db } from "../../db/client";
import { revisions } from "../../db/schema/index";
import { diffJson } from "../lib/diff";
import type { NodeChange } from "./context";
import type { Recorded } from "./record";

export async function dryRunChanges(
  tx: Db,
  projectId: string,
  recorded: ReadonlyMap<string, Recorded>,
  deleted: ReadonlyMap<string, number>,
  operation: string,
  publishedBefore: ReadonlyMap<string, Record<string, unknown> | null> = new Map(),
): Promise<NodeChange[]> {
  // The state before: each recorded node's previous revision; a deleted node's is the revision its deletion recorded.
  const wanted = [...[...recorded].map(([id, r]) => ({ id, number: r.number - 1 })), ...[...deleted].map(([id, number]) => ({ id, number }))].filter((w) => w.number > 0);
  const before = new Map<string, Record<string, unknown>>();
  if (wanted.length > 0) {
    const found = await tx
      .select({ nodeId: revisions.nodeId, number: revisions.number, snapshot: revisions.snapshot })
      .from(revisions)
      .where(
        and(
          eq(revisions.projectId, projectId),
          inArray(revisions.nodeId, [...new Set(wanted.map((w) => w.id))]),
          or(...wanted.map((w) => and(eq(revisions.nodeId, w.id), eq(revisions.number, w.number)))),
        ),
      );
    for (const r of found) before.set(`${r.nodeId}:${r.number}`, r.snapshot);
  }
  const changes: NodeChange[] = [...recorded].map(([id, r]) => {
    if (publishedBefore.has(id)) {
      // Published: what readers saw before against what they will see (status and dates aside).
      const was = publishedBefore.get(id) ?? null;
      return { node_id: id, operation, revision_before: r.number - 1, revision_after: r.number, published: true, diff: diffJson(was ? content(was) : {}, content(r.snapshot)) };
    }
    const was = before.get(`${id}:${r.number - 1}`);
    return { node_id: id, operation, revision_before: was ? r.number - 1 : null, revision_after: r.number, diff: diffJson(was ? withoutDeleted(was) : {}, r.snapshot) };
  });
  for (const [id, number] of deleted) {
    const was = before.get(`${id}:${number}`);
    changes.push({ node_id: id, operation, revision_before: number - 1 > 0 ? number - 1 : null, revision_after: null, deleted: true, diff: diffJson(was ? withoutDeleted(was) : {}, {}) });
  }
  return changes;
}

/** A version's content as readers see it: without its status and dates, and only the translations that are published. */
export function content(snapshot: Record<string, unknown>): Record<string, unknown> {
  const { status: _s, published_at: _p, deleted: _d, ...rest } = snapshot;
  const translations = Array.isArray(rest.translations) ? rest.translations.filter((t) => (t as { status?: string }).status === "published") : rest.translations;
  return { ...rest, translations };
}

const withoutDeleted = (snapshot: Record<string, unknown>): Record<string, unknown> => {
  const { deleted: _, ...rest } = snapshot;
  return rest;
};
