// "Who wrote this": the fields of a node that an agent (an MCP token or an OAuth client) changed
// after the last change a person made (a user: in the studio or on the approval page). Read from the
// revisions, so nothing is stored: a person's save is a revision, and it clears every mark.
import { and, asc, desc, eq, gt, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { type Actor, nodes, revisions } from "../../db/schema";
import { notFound } from "../errors";
import { diffJson } from "../lib/diff";
import { isUuid } from "../lib/ids";

/** The actors whose changes are an agent's. */
const AGENT_KINDS = ["mcp_token", "oauth"] as const;

type Snap = { title?: unknown; slug?: unknown; fields?: unknown; seo?: unknown; blocks?: Array<{ id: string; data: unknown }> };

/** What an editor shows of a snapshot: title, slug, fields, SEO and the blocks' data (positions by block id). */
const editable = (s: Snap) => ({ title: s.title, slug: s.slug, fields: s.fields, seo: s.seo, blocks: (s.blocks ?? []).map((b) => ({ id: b.id, data: b.data })) });

export async function agentChanges(db: Db, projectId: string, nodeId: string): Promise<Array<{ pointer: string; revision: number; actor: Actor }>> {
  if (!isUuid(nodeId)) throw notFound("node");
  const [node] = await db
    .select({ id: nodes.id })
    .from(nodes)
    .where(and(eq(nodes.projectId, projectId), eq(nodes.id, nodeId.toLowerCase())));
  if (!node) throw notFound("node");
  const [person] = await db
    .select({ number: revisions.number })
    .from(revisions)
    .where(and(eq(revisions.nodeId, node.id), sql`${revisions.actor}->>'kind' = 'user'`))
    .orderBy(desc(revisions.number))
    .limit(1);
  const since = person?.number ?? 0;
  // The revisions after the person's, with the one before the first (to diff against).
  const revs = await db
    .select({ number: revisions.number, actor: revisions.actor, snapshot: revisions.snapshot })
    .from(revisions)
    .where(and(eq(revisions.nodeId, node.id), gt(revisions.number, Math.max(0, since - 1))))
    .orderBy(asc(revisions.number))
    .limit(500);
  const last = revs.at(-1);
  if (!last) return [];
  // Block positions now: a pointer into an older snapshot's blocks is moved to where that block is today.
  const now = new Map(((last.snapshot as Snap).blocks ?? []).map((b, i) => [b.id, i]));
  const marks = new Map<string, { revision: number; actor: Actor }>();
  for (let i = 1; i < revs.length; i++) {
    const [prev, rev] = [revs[i - 1], revs[i]];
    if (!prev || !rev || !(AGENT_KINDS as readonly string[]).includes(rev.actor.kind) || rev.number <= since) continue;
    const blocks = (rev.snapshot as Snap).blocks ?? [];
    for (const change of diffJson(editable(prev.snapshot as Snap), editable(rev.snapshot as Snap))) {
      const pointer = change.path.replace(/^\/blocks\/(\d+)(?=\/|$)/, (whole, at: string) => {
        const index = now.get(blocks[Number(at)]?.id ?? "");
        return index === undefined ? whole : `/blocks/${index}`;
      });
      // A block's own id is not a field; its data is.
      marks.set(pointer.replace(/^(\/blocks\/\d+)\/id$/, "$1"), { revision: rev.number, actor: rev.actor });
    }
  }
  return [...marks].map(([pointer, m]) => ({ pointer, ...m })).sort((a, b) => a.pointer.localeCompare(b.pointer));
}
