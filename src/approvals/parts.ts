// A publication approved in part (docs/editorial.md, "Approving in part"). The change a
// publish_node request makes is cut into parts a person accepts or leaves out one by one: the
// title, the slug, the type, the parent, each SEO member, each field, each block (added, changed or
// removed) and each translation whose changes publishing brings. Approving with some left out sets
// those parts of the working copy back to the published version and publishes, in one content
// write recorded as the person's; the agent's retry then hears what was published and what was not.
import { and, asc, eq, inArray } from "drizzle-orm";
import type { Db } from "../../db/client";
import { type Approval, type ApprovalParts, activity, approvals, nodes, type Project, publishedBlocks, publishedNodes, publishedTranslations, translations } from "../../db/schema";
import { applyNodeUpdate, type Node as ContentNode, getBlocks, getNode, transitionWholeNode } from "../content/service";
import { AppError } from "../errors";
import { uuidv7 } from "../lib/ids";
import { isPlainObject } from "../lib/merge";
import { pointerSegment } from "../model/compile";
import type { WriteContext } from "../write/context";
import { contentWrite } from "../write/unit";
import { assertPending } from "./service";

export interface Part {
  /** A JSON Pointer naming the part: /title, /slug, /type, /parent_id, /seo/{key}, /fields/{key}, /blocks/{blockId}, /translations/{locale}. */
  readonly pointer: string;
  readonly change: "added" | "changed" | "removed";
  readonly before?: unknown;
  readonly after?: unknown;
}

/** Only a publication of the whole node is cut into parts; every other request is all or nothing. */
const divisible = (a: Pick<Approval, "operation" | "arguments">): boolean => a.operation === "publish_node" && typeof a.arguments.locale !== "string";

const same = (x: unknown, y: unknown): boolean => JSON.stringify(x ?? null) === JSON.stringify(y ?? null);

function part(pointer: string, before: unknown, after: unknown): Part | null {
  if (same(before, after)) return null;
  if (before === undefined || before === null) return { pointer, change: "added", after };
  if (after === undefined || after === null) return { pointer, change: "removed", before };
  return { pointer, change: "changed", before, after };
}

/** Members of two objects that differ, one part each, under `at`. */
function members(at: string, before: unknown, after: unknown): Part[] {
  const b = isPlainObject(before) ? before : {};
  const a = isPlainObject(after) ? after : {};
  return [...new Set([...Object.keys(b), ...Object.keys(a)])].flatMap((k) => part(`${at}/${pointerSegment(k)}`, b[k], a[k]) ?? []);
}

interface Versions {
  readonly node: ContentNode;
  readonly published: typeof publishedNodes.$inferSelect | null;
  readonly blocks: Array<{ id: string; type: string; data: Record<string, unknown> }>;
  readonly publishedBlocks: Array<{ id: string; type: string; data: Record<string, unknown> }>;
  readonly translations: Array<{ locale: string; meta: unknown; fields: unknown; blocks: unknown }>;
  readonly publishedTranslations: Map<string, { meta: unknown; fields: unknown; blocks: unknown }>;
}

async function versions(db: Db, projectId: string, nodeId: string): Promise<Versions> {
  const node = await getNode(db, projectId, nodeId);
  const [[published], working, live, changedTranslations] = await Promise.all([
    db.select().from(publishedNodes).where(eq(publishedNodes.id, node.id)).limit(1),
    getBlocks(db, node.id),
    db.select({ id: publishedBlocks.id, type: publishedBlocks.type, data: publishedBlocks.data }).from(publishedBlocks).where(eq(publishedBlocks.nodeId, node.id)).orderBy(asc(publishedBlocks.order)),
    // What publishing brings of the translations: those published whose working copy changed since.
    db
      .select({ locale: translations.locale, meta: translations.meta, fields: translations.fields, blocks: translations.blocks })
      .from(translations)
      .where(and(eq(translations.nodeId, node.id), eq(translations.status, "published"), eq(translations.changed, true)))
      .orderBy(asc(translations.locale)),
  ]);
  const locales = changedTranslations.map((t) => t.locale);
  const before =
    locales.length === 0
      ? []
      : await db
          .select({ locale: publishedTranslations.locale, meta: publishedTranslations.meta, fields: publishedTranslations.fields, blocks: publishedTranslations.blocks })
          .from(publishedTranslations)
          .where(and(eq(publishedTranslations.nodeId, node.id), inArray(publishedTranslations.locale, locales)));
  const isLive = published?.status === "published" ? published : null;
  return {
    node,
    published: isLive,
    blocks: working.map((b) => ({ id: b.id, type: b.type, data: b.data })),
    publishedBlocks: isLive ? live : [],
    translations: changedTranslations,
    publishedTranslations: new Map(before.map((t) => [t.locale, t])),
  };
}

function partsOf(v: Versions): Part[] {
  const p = v.published;
  const out: Part[] = [];
  for (const [key, before, after] of [
    ["title", p?.title, v.node.title],
    ["slug", p?.slug, v.node.slug],
    ["type", p?.type, v.node.type],
    ["parent_id", p?.parentId, v.node.parentId],
  ] as const) {
    const x = p === null ? (after === null ? null : { pointer: `/${key}`, change: "added" as const, after }) : part(`/${key}`, before, after);
    if (x) out.push(x);
  }
  out.push(...members("/seo", p?.seo, v.node.seo), ...members("/fields", p?.fields, v.node.fields));
  const live = new Map(v.publishedBlocks.map((b) => [b.id, b]));
  const working = new Set(v.blocks.map((b) => b.id));
  for (const b of v.blocks) {
    const x = part(`/blocks/${b.id}`, live.has(b.id) ? { type: live.get(b.id)?.type, data: live.get(b.id)?.data } : undefined, { type: b.type, data: b.data });
    if (x) out.push(x);
  }
  for (const b of v.publishedBlocks) if (!working.has(b.id)) out.push({ pointer: `/blocks/${b.id}`, change: "removed", before: { type: b.type, data: b.data } });
  for (const t of v.translations) {
    const x = part(`/translations/${pointerSegment(t.locale)}`, v.publishedTranslations.get(t.locale), { meta: t.meta, fields: t.fields, blocks: t.blocks });
    if (x) out.push(x);
  }
  return out;
}

/** The parts of a pending publish_node request (the node as it is now against its published version); null when it cannot be approved in part. */
export async function publicationParts(db: Db, a: Approval): Promise<Part[] | null> {
  if (!divisible(a) || a.status !== "pending") return null;
  const node = await db.select({ id: nodes.id }).from(nodes).where(eq(nodes.id, a.nodeId)).limit(1);
  if (node.length === 0) return null;
  return partsOf(await versions(db, a.projectId, a.nodeId));
}

/** The working copy's blocks with the parts left out set back: a changed block as published, an added one gone, a removed one back at its place. */
function blocksWithout(v: Versions, leftOut: ReadonlySet<string>): { blocks: Array<{ id: string; type: string; data: Record<string, unknown> }>; revive: Set<string> } {
  const live = new Map(v.publishedBlocks.map((b, i) => [b.id, { ...b, index: i }]));
  const out: Array<{ id: string; type: string; data: Record<string, unknown> }> = [];
  for (const b of v.blocks) {
    if (!leftOut.has(`/blocks/${b.id}`)) out.push(b);
    else {
      const was = live.get(b.id);
      if (was) out.push({ id: b.id, type: was.type, data: was.data });
    }
  }
  const revive = new Set<string>();
  for (const [id, b] of live) {
    if (v.blocks.some((x) => x.id === id) || !leftOut.has(`/blocks/${id}`)) continue;
    out.splice(Math.min(b.index, out.length), 0, { id, type: b.type, data: b.data });
    revive.add(id);
  }
  return { blocks: out, revive };
}

/** An object member set back to what the published version had (gone when it had none). */
function restoreMember(current: Record<string, unknown>, published: unknown, key: string): Record<string, unknown> {
  const was = isPlainObject(published) ? published : {};
  const { [key]: _, ...rest } = current;
  return key in was ? { ...rest, [key]: was[key] } : rest;
}

const unescapeSegment = (segment: string): string => segment.replace(/~1/g, "/").replace(/~0/g, "~");

/**
 * Approves a pending publish_node request in part: the parts in `leftOut` go back to the published
 * version in the working copy, the rest is published, as the person's one content write (its
 * revision names publish_node). The request becomes `partial`: the agent's retry reads what was
 * published and what was left out. 409 when the node changed since the request (it is void).
 */
export async function approveInPart(db: Db, ctx: WriteContext, project: Project, found: Approval, leftOut: readonly string[], note: string | null, now: Date): Promise<Approval> {
  assertPending(found);
  if (!divisible(found))
    throw new AppError("invalid_request", "only a publication of a whole node (publish_node without locale) can be approved in part: approve or reject this request as a whole", { field: "left_out" });
  return contentWrite(db, ctx, project.id, async (tx, w) => {
    const v = await versions(tx, project.id, found.nodeId);
    if (v.node.revision !== found.revision) {
      throw new AppError("conflict", "the node has changed since this approval was asked for: the request is void, the agent must ask again", { status: "void" });
    }
    const parts = partsOf(v).map((p) => p.pointer);
    const unknown = leftOut.filter((p) => !parts.includes(p));
    if (unknown.length > 0)
      throw new AppError("invalid_request", `${unknown[0]} is not a part of this publication: left_out names parts from the request's list (get the approval to see them)`, {
        field: "left_out",
        unknown,
        parts,
      });
    const out = new Set(leftOut);
    const accepted = parts.filter((p) => !out.has(p));
    if (accepted.length === 0) throw new AppError("invalid_request", "every part is left out: that is a rejection (reject the request instead)", { field: "left_out" });
    const p = v.published;
    const input: Parameters<typeof applyNodeUpdate>[5] = {};
    let seo = v.node.seo as Record<string, unknown>;
    let fields = v.node.fields as Record<string, unknown>;
    const keepLocales: string[] = [];
    for (const pointer of out) {
      const [, head, ...rest] = pointer.split("/");
      const key = unescapeSegment(rest.join("/"));
      if (head === "title" && p) input.title = p.title;
      else if (head === "slug" && p) input.slug = p.slug;
      else if (head === "type" && p) input.type = p.type;
      else if (head === "parent_id" && p) input.parent_id = p.parentId;
      else if (head === "seo") seo = restoreMember(seo, p?.seo, key);
      else if (head === "fields") fields = restoreMember(fields, p?.fields, key);
      else if (head === "translations") keepLocales.push(key);
      else if (head !== "blocks") throw new AppError("invalid_request", `${pointer} cannot be left out: it is what publishing a page never published before needs`, { field: "left_out" });
    }
    if (seo !== v.node.seo) input.seo = seo as typeof input.seo;
    if (fields !== v.node.fields) input.fields = fields;
    let revive = new Set<string>();
    if ([...out].some((x) => x.startsWith("/blocks/"))) {
      const b = blocksWithout(v, out);
      input.blocks = b.blocks;
      revive = b.revive;
    }
    if (Object.keys(input).length > 0) await applyNodeUpdate(tx, w, ctx, project, v.node.id, input, now, {}, revive);
    await transitionWholeNode(tx, w, await getNode(tx, project.id, v.node.id), "publish", now, keepLocales);
    const decided: ApprovalParts = { accepted, left_out: [...out] };
    const [row] = await tx
      .update(approvals)
      .set({ status: "partial", decidedBy: ctx.actor, decidedAt: now, decisionNote: note, decisionParts: decided })
      .where(and(eq(approvals.id, found.id), eq(approvals.status, "pending")))
      .returning();
    if (!row) throw new AppError("conflict", "this approval request was decided meanwhile", { status: "decided" });
    await tx.insert(activity).values({
      id: uuidv7(now.getTime()),
      projectId: project.id,
      operation: "approve_approval",
      actor: ctx.actor,
      target: { kind: "approval", id: row.id, operation: row.operation, node_id: row.nodeId, left_out: decided.left_out },
      nodeId: row.nodeId,
      revision: row.revision,
    });
    ctx.state.recorded = true;
    return row;
  });
}
