import { and, asc, count, eq, ilike, inArray, isNull, like, max, ne, type SQL, sql } from "drizzle-orm";
import type { z } from "zod";
import type { Db } from "../../db/client";
import { blocks, type NodeStatus, nodes, type Project, publishedNodes, translations, translationUnits } from "../../db/schema";
import { AppError, isUniqueViolation, notFound } from "../errors";
import { isUuid, uuidv7 } from "../lib/ids";
import { canonicalLocale } from "../lib/locales";
import { readPaging } from "../lib/paging";
import { oneRow } from "../lib/rows";
import { escapeLike } from "../lib/sql";
import { checkSeoImage } from "../media/seo-image";
import type { WriteContext } from "../write/context";
import { publishedVersion } from "../write/record";
import { contentWrite, type WriteLog } from "../write/unit";
import type { BlockIn, BlockOut, NewNodeIn, NodeOut, NodeQuery, NodeWithBlocksOut, PublishedVersionOut } from "./model";
import { discardChanges, publishNodeVersion, publishTranslationVersion, stateOf, unpublishNodeVersion, unpublishTranslationVersion } from "./publish";
import { changesSchedule, type ScheduleChange, scheduleColumns } from "./schedule";

export type Node = typeof nodes.$inferSelect;
export type PublishedNode = typeof publishedNodes.$inferSelect;
export type Block = typeof blocks.$inferSelect;

// Wire shapes are declared once, as the operations' schemas (./operations.ts).
export type BlockWire = z.output<typeof BlockOut>;
export type NodeWire = z.output<typeof NodeOut>;
export type NodeWithBlocksWire = z.output<typeof NodeWithBlocksOut>;
type BlockInput = z.output<typeof BlockIn>;
type NewNode = z.output<typeof NewNodeIn>;

/** A published version (delivery's node list) has no working-copy flag: it is what it is. */
export const nodeToWire = (n: Node | PublishedNode): NodeWire => ({
  id: n.id,
  project_id: n.projectId,
  parent_id: n.parentId,
  slug: n.slug,
  path: n.path,
  type: n.type,
  title: n.title,
  status: n.status,
  state: stateOf(n.status, "changed" in n && n.changed),
  position: n.position,
  seo: n.seo,
  fields: n.fields,
  revision: n.revision,
  published_at: n.publishedAt?.toISOString() ?? null,
  publish_at: n.publishAt?.toISOString() ?? null,
  unpublish_at: n.unpublishAt?.toISOString() ?? null,
  created_at: n.createdAt.toISOString(),
  updated_at: n.updatedAt.toISOString(),
});
const blockToWire = (b: Block): BlockWire => ({ id: b.id, type: b.type, order: b.order, data: b.data });

export async function listNodes(db: Db, projectId: string, f: z.output<typeof NodeQuery>): Promise<{ data: Node[]; total: number; page: number; per_page: number }> {
  const conds = [eq(nodes.projectId, projectId)];
  if (f.type) conds.push(eq(nodes.type, f.type));
  if (f.status) conds.push(eq(nodes.status, f.status));
  if (f.state === "changed" || f.state === "published") conds.push(eq(nodes.status, "published"), eq(nodes.changed, f.state === "changed"));
  else if (f.state) conds.push(eq(nodes.status, f.state));
  if (f.parent_id === "root") conds.push(isNull(nodes.parentId));
  else if (f.parent_id) conds.push(eq(nodes.parentId, f.parent_id));
  const prefix = f.path_prefix?.replace(/^\/+|\/+$/g, "");
  if (prefix) conds.push(sql`(${nodes.path} = ${prefix} or ${nodes.path} like ${`${escapeLike(prefix)}/%`})`);
  if (f.q) conds.push(ilike(nodes.title, `%${escapeLike(f.q)}%`));
  // Unreviewed agent changes: an agent's revision after the last one a person made (history/agent-changes.ts).
  if (f.agent_changes)
    conds.push(sql`exists (select 1 from revisions r where r.node_id = ${nodes.id} and r.actor->>'kind' in ('mcp_token', 'oauth')
      and r.number > coalesce((select max(p.number) from revisions p where p.node_id = ${nodes.id} and p.actor->>'kind' = 'user'), 0))`);
  const order = f.sort === "position" ? [asc(nodes.position), asc(nodes.path), asc(nodes.id)] : [asc(nodes.path), asc(nodes.id)];
  return pageOfNodes(db, conds, order, readPaging(f, { defaultPerPage: 50 }));
}

export async function pageOfNodes(db: Db, conds: SQL[], order: SQL[], { page, perPage }: ReturnType<typeof readPaging>) {
  const where = and(...conds);
  const [data, counted] = await Promise.all([
    db
      .select()
      .from(nodes)
      .where(where)
      .orderBy(...order)
      .limit(perPage)
      .offset((page - 1) * perPage),
    db.select({ total: count() }).from(nodes).where(where),
  ]);
  return { data, total: Number(oneRow(counted).total), page, per_page: perPage };
}

/** The project's spelling of a locale, or 400 invalid_locale. */
export function projectLocale(project: Project, locale: string): string {
  const c = canonicalLocale(locale);
  const match = c ? project.locales.find((l) => l.toLowerCase() === c.toLowerCase()) : undefined;
  if (!match) throw new AppError("invalid_locale", `locale "${locale}" is not one of this project's locales (${project.locales.join(", ")})`);
  return match;
}

/** The node's translation into `locale` (the project's spelling), if it has one. */
export const findTranslation = (db: Db, nodeId: string, locale: string): Promise<typeof translations.$inferSelect | undefined> =>
  db.query.translations.findFirst({ where: and(eq(translations.nodeId, nodeId), eq(translations.locale, locale)) });

export async function getNode(db: Db, projectId: string, id: string): Promise<Node> {
  if (!isUuid(id)) throw notFound("node");
  return nodeWhere(db, projectId, eq(nodes.id, id));
}

export const getNodeByPath = (db: Db, projectId: string, path: string): Promise<Node> => nodeWhere(db, projectId, eq(nodes.path, path.replace(/^\/+|\/+$/g, "")));

async function nodeWhere(db: Db, projectId: string, match: SQL): Promise<Node> {
  const n = await db.query.nodes.findFirst({ where: and(eq(nodes.projectId, projectId), match) });
  if (!n) throw notFound("node");
  return n;
}

export const getBlocks = (db: Db, nodeId: string): Promise<Block[]> => db.select().from(blocks).where(eq(blocks.nodeId, nodeId)).orderBy(asc(blocks.order), asc(blocks.id));

/** A node's published version (what delivery serves), or 404 when it has none. */
export async function getPublishedVersion(db: Db, projectId: string, id: string): Promise<z.input<typeof PublishedVersionOut>> {
  const version = isUuid(id) ? await publishedVersion(db, projectId, id.toLowerCase()) : null;
  if (!version) throw notFound("published version");
  // The snapshot's shape is the output schema's (snapshotOf builds it); the operation's output parse checks it.
  return version as z.input<typeof PublishedVersionOut>;
}

export async function getNodeWithBlocks(db: Db, projectId: string, id: string): Promise<NodeWithBlocksWire> {
  const n = await getNode(db, projectId, id);
  return { ...nodeToWire(n), blocks: (await getBlocks(db, n.id)).map(blockToWire) };
}

/** Longest slug path a node (or, after a move, its deepest descendant) may have. */
const MAX_PATH_LENGTH = 1024;

function checkPathLength(path: string, longest: number = path.length): void {
  if (longest > MAX_PATH_LENGTH) {
    throw new AppError("invalid_request", `node paths are limited to ${MAX_PATH_LENGTH} characters (this write would make one ${longest} long)`, { field: "slug", path: path.slice(0, 200) });
  }
}

const withConflict = <T>(path: string, write: () => Promise<T>): Promise<T> =>
  write().catch((err) => {
    throw isUniqueViolation(err) ? new AppError("conflict", `another node already has the path "${path}"`, { field: "slug", path }) : err;
  });

export const createNode = (db: Db, ctx: WriteContext, project: Project, input: NewNode, now: Date): Promise<NodeWithBlocksWire> =>
  contentWrite(db, ctx, project.id, async (tx, w) => {
    const parent = await parentNode(tx, project.id, input.parent_id);
    await checkSeoImage(tx, project.id, input.seo, "seo.og_image");
    const path = parent ? `${parent.path}/${input.slug}` : input.slug;
    checkPathLength(path);
    const position = input.position ?? (await nextPosition(tx, project.id, parent?.id ?? null));
    const node = oneRow(
      await withConflict(path, () =>
        tx
          .insert(nodes)
          .values({
            id: uuidv7(now.getTime()),
            projectId: project.id,
            parentId: parent?.id ?? null,
            slug: input.slug,
            path,
            type: input.type ?? "page",
            title: input.title,
            status: "draft",
            position,
            seo: input.seo ?? {},
            fields: input.fields ?? {},
            createdAt: now,
            updatedAt: now,
          })
          .returning(),
      ),
    );
    const written = input.blocks ? await writeBlocks(tx, node.id, input.blocks, now) : [];
    w.touched(node.id);
    return { ...nodeToWire(node), blocks: written.map(blockToWire) };
  });

/** The node a write names as parent (none: the top level), or 400 when it is not a node of this project. */
async function parentNode(db: Db, projectId: string, id: string | null | undefined): Promise<Node | null> {
  const parent = id ? await getNode(db, projectId, id).catch(() => null) : null;
  if (id && !parent) throw new AppError("invalid_request", "parent_id is not a node of this project", { field: "parent_id" });
  return parent;
}

async function nextPosition(db: Db, projectId: string, parentId: string | null): Promise<number> {
  const { m } = oneRow(
    await db
      .select({ m: max(nodes.position) })
      .from(nodes)
      .where(and(eq(nodes.projectId, projectId), parentId ? eq(nodes.parentId, parentId) : isNull(nodes.parentId))),
  );
  return m === null ? 0 : Number(m) + 1;
}

/**
 * Writes the ordered block array of a node: blocks passed with an existing id keep it (so
 * translations keep pointing at them), new ones get ids, blocks left out are deleted.
 */
async function writeBlocks(db: Db, nodeId: string, input: readonly BlockInput[], now: Date, revive: ReadonlySet<string> = new Set()): Promise<Block[]> {
  const existing = new Set((await db.select({ id: blocks.id }).from(blocks).where(eq(blocks.nodeId, nodeId))).map((b) => b.id));
  const seen = new Set<string>();
  const rows = input.map((b, order) => {
    const keep = b.id && (existing.has(b.id.toLowerCase()) || revive.has(b.id.toLowerCase())) ? b.id.toLowerCase() : null;
    if (b.id && !keep) throw new AppError("invalid_request", `block id ${b.id} is not a block of this node`, { field: `blocks.${order}.id` });
    if (keep && seen.has(keep)) throw new AppError("invalid_request", `block id ${keep} appears twice`, { field: `blocks.${order}.id` });
    if (keep) seen.add(keep);
    return { id: keep ?? uuidv7(now.getTime()), nodeId, type: b.type, order, data: b.data ?? {} };
  });
  const removed = [...existing].filter((id) => !seen.has(id));
  if (removed.length > 0) {
    await db.delete(blocks).where(and(eq(blocks.nodeId, nodeId), inArray(blocks.id, removed)));
    // Translations drop their overrides of deleted blocks in the same transaction: a translation read
    // back is always a valid write (an override of a block the node lacks is refused with 400).
    const keys = sql`array[${sql.join(removed, sql`, `)}]::text[]`;
    await db
      .update(translations)
      .set({ blocks: sql`${translations.blocks} - ${keys}`, updatedAt: now })
      .where(and(eq(translations.nodeId, nodeId), sql`jsonb_exists_any(${translations.blocks}, ${keys})`));
    // With them, the state of their translated units (docs/translation.md).
    await db
      .delete(translationUnits)
      .where(and(eq(translationUnits.nodeId, nodeId), sql`split_part(${translationUnits.pointer}, '/', 2) = 'blocks' and split_part(${translationUnits.pointer}, '/', 3) = any(${keys})`));
  }
  // One statement for all of them (a round trip, and on the embedded database a query, per block before).
  if (rows.length > 0) {
    await db
      .insert(blocks)
      .values(rows)
      .onConflictDoUpdate({ target: blocks.id, set: { type: sql`excluded.type`, order: sql`excluded."order"`, data: sql`excluded.data` } });
  }
  return rows;
}

export const updateNode = (db: Db, ctx: WriteContext, project: Project, id: string, input: Partial<NewNode>, now: Date, schedule: ScheduleChange = {}): Promise<NodeWithBlocksWire> =>
  contentWrite(db, ctx, project.id, (tx, w) => applyNodeUpdate(tx, w, ctx, project, id, input, now, schedule));

/**
 * Inside a content write: update_node's change of the working copy (a move rewrites the paths
 * below it). `revive`: ids of blocks the node no longer has that `input.blocks` may bring back
 * under their id (a publication approved in part keeps a removed block).
 */
export async function applyNodeUpdate(
  tx: Db,
  w: WriteLog,
  ctx: WriteContext,
  project: Project,
  id: string,
  input: Partial<NewNode>,
  now: Date,
  schedule: ScheduleChange = {},
  revive: ReadonlySet<string> = new Set(),
): Promise<NodeWithBlocksWire> {
  const node = await getNode(tx, project.id, id);
  w.touched(node.id);
  await checkSeoImage(tx, project.id, input.seo, "seo.og_image");
  const scheduled = changesSchedule(schedule) ? scheduleColumns(node, schedule, ctx.actor, now) : {};
  // Its children's type is checked against its type's `children` rule: a new type checks them again.
  if (input.type !== undefined && input.type !== node.type) {
    for (const child of await tx.select({ id: nodes.id }).from(nodes).where(eq(nodes.parentId, node.id))) w.checked(child.id);
  }
  const parentId = input.parent_id === undefined ? node.parentId : input.parent_id;
  // The same parent is not looked up: its path is the node's own without the last segment.
  const parent = parentId === node.parentId ? null : await parentNode(tx, project.id, parentId);
  if (parent && (parent.id === node.id || parent.path.startsWith(`${node.path}/`)))
    throw new AppError("invalid_request", "a node cannot be moved under itself or its descendants", { field: "parent_id" });
  const parentPath = parent ? parent.path : parentId ? node.path.slice(0, node.path.length - node.slug.length - 1) : null;
  const slug = input.slug ?? node.slug;
  const path = parentPath ? `${parentPath}/${slug}` : slug;
  const moved = path !== node.path;
  if (moved) {
    w.gone(node.path);
    w.added(path);
  }
  const descendants = and(eq(nodes.projectId, project.id), like(nodes.path, `${escapeLike(node.path)}/%`));
  if (moved) {
    const { longest } = oneRow(
      await tx
        .select({ longest: sql<number>`coalesce(max(length(${nodes.path})), 0)` })
        .from(nodes)
        .where(descendants),
    );
    checkPathLength(path, Math.max(path.length, Number(longest) - node.path.length + path.length));
  }
  const position = input.position ?? (parentId !== node.parentId ? await nextPosition(tx, project.id, parentId) : node.position);
  const updated = await withConflict(path, async () => {
    const [row] = await tx
      .update(nodes)
      .set({
        parentId,
        slug,
        path,
        position,
        type: input.type ?? node.type,
        title: input.title ?? node.title,
        seo: input.seo ?? node.seo,
        fields: input.fields ?? node.fields,
        ...scheduled,
        updatedAt: now,
      })
      .where(eq(nodes.id, node.id))
      .returning();
    // Rewrite every descendant's path in the same transaction; a clash aborts the whole move.
    if (moved) {
      await tx
        .update(nodes)
        .set({ path: sql`${path} || substr(${nodes.path}, ${node.path.length + 1})`, updatedAt: now })
        .where(and(descendants, ne(nodes.id, node.id)));
    }
    return row;
  });
  if (!updated) throw notFound("node");
  const bl = input.blocks ? await writeBlocks(tx, node.id, input.blocks, now, revive) : await getBlocks(tx, node.id);
  return { ...nodeToWire(updated), blocks: bl.map(blockToWire) };
}

export const setNodeBlocks = (db: Db, ctx: WriteContext, project: Project, id: string, input: BlockInput[], now: Date): Promise<BlockWire[]> =>
  contentWrite(db, ctx, project.id, async (tx, w) => replaceBlocks(tx, w, await getNode(tx, project.id, id), input, now));

/** Inside a content write: the node's blocks become `input` (kept ids keep their translations). */
export async function replaceBlocks(tx: Db, w: WriteLog, node: Node, input: BlockInput[], now: Date): Promise<BlockWire[]> {
  w.touched(node.id);
  const written = await writeBlocks(tx, node.id, input, now);
  await tx.update(nodes).set({ updatedAt: now }).where(eq(nodes.id, node.id));
  return written.map(blockToWire);
}

export type Transition = "publish" | "unpublish" | "archive" | "restore";

const TRANSITIONS: Record<Transition, { from: readonly NodeStatus[]; to: NodeStatus }> = {
  publish: { from: ["draft", "published"], to: "published" },
  unpublish: { from: ["published", "draft"], to: "draft" },
  archive: { from: ["draft", "published", "archived"], to: "archived" },
  restore: { from: ["archived"], to: "draft" },
};

/**
 * A change of what readers see: publish (the working copy becomes the published version), unpublish
 * and archive (the published version goes), restore (archived → draft). With `locale`, publish and
 * unpublish act on that translation alone.
 */
export const transitionNode = (db: Db, ctx: WriteContext, project: Project, id: string, action: Transition, now: Date, locale?: string): Promise<NodeWire> =>
  contentWrite(db, ctx, project.id, async (tx, w) => {
    const node = await getNode(tx, project.id, id);
    if (locale !== undefined) {
      if (action !== "publish" && action !== "unpublish") throw new AppError("invalid_request", `${action}_node acts on the whole node: leave locale out`, { field: "locale" });
      const loc = projectLocale(project, locale);
      if (loc === project.defaultLocale) throw new AppError("invalid_locale", `"${loc}" is the project's default locale: ${action} the node itself`, { field: "locale" });
      const tr = await findTranslation(tx, node.id, loc);
      if (!tr) throw notFound("translation");
      w.changed(node.id, `${action}_node`, loc);
      if (action === "publish") await publishTranslationVersion(tx, w, node, loc);
      else await unpublishTranslationVersion(tx, w, node, loc);
      await tx
        .update(translations)
        .set({ updatedAt: now, ...unscheduled(tr, action) })
        .where(eq(translations.id, tr.id));
      return nodeToWire(await getNode(tx, project.id, node.id));
    }
    return transitionWholeNode(tx, w, node, action, now);
  });

/**
 * Inside a content write: a transition of the node itself. Publishing leaves out the translations
 * in `keepLocales` (their published versions stay as they are: a publication approved in part).
 */
export async function transitionWholeNode(tx: Db, w: WriteLog, node: Node, action: Transition, now: Date, keepLocales: readonly string[] = []): Promise<NodeWire> {
  const rule = TRANSITIONS[action];
  if (!rule.from.includes(node.status)) throw new AppError("conflict", `cannot ${action} a node that is ${node.status}`, { status: node.status });
  w.changed(node.id, `${action}_node`);
  // The schedule it settles is cleared first: the published version is copied without it.
  await tx
    .update(nodes)
    .set({ ...unscheduled(node, action), updatedAt: now })
    .where(eq(nodes.id, node.id));
  if (action === "publish") await publishNodeVersion(tx, w, node, now, keepLocales);
  else if (action === "restore") await tx.update(publishedNodes).set({ status: "draft" }).where(eq(publishedNodes.id, node.id));
  else await unpublishNodeVersion(tx, w, node, rule.to === "archived" ? "archived" : "draft");
  const [updated] = await tx.update(nodes).set({ status: rule.to }).where(eq(nodes.id, node.id)).returning();
  if (!updated) throw notFound("node");
  return nodeToWire(updated);
}

/** discard_changes: the working copy (or its translation into `locale`) goes back to the published version. */
export const discardNodeChanges = (db: Db, ctx: WriteContext, project: Project, id: string, now: Date, locale?: string): Promise<NodeWithBlocksWire> =>
  contentWrite(db, ctx, project.id, async (tx, w) => {
    const node = await getNode(tx, project.id, id);
    const loc = locale === undefined ? null : projectLocale(project, locale);
    if (loc === project.defaultLocale) throw new AppError("invalid_locale", `"${loc}" is the project's default locale: discard the node's own changes without locale`, { field: "locale" });
    w.changed(node.id, "discard_changes", loc ?? undefined);
    await discardChanges(tx, w, node, loc, now);
    return getNodeWithBlocks(tx, project.id, node.id);
  });

/** A manual transition settles what a schedule would have done: publishing drops publish_at, unpublishing unpublish_at, archiving both. */
function unscheduled(node: Pick<Node, "publishAt" | "unpublishAt" | "scheduledBy">, action: Transition): Partial<Pick<Node, "publishAt" | "unpublishAt" | "scheduledBy">> {
  const publishAt = action === "publish" || action === "archive" ? null : node.publishAt;
  const unpublishAt = action === "unpublish" || action === "archive" ? null : node.unpublishAt;
  if (publishAt === node.publishAt && unpublishAt === node.unpublishAt) return {};
  return { publishAt, unpublishAt, scheduledBy: publishAt === null && unpublishAt === null ? null : node.scheduledBy };
}

export const deleteNode = (db: Db, ctx: WriteContext, project: Project, id: string): Promise<void> =>
  contentWrite(db, ctx, project.id, async (tx, w) => {
    const node = await getNode(tx, project.id, id);
    w.gone(node.path);
    await w.deleting(node.id, "delete_node");
    await tx.delete(nodes).where(eq(nodes.id, node.id));
  });
