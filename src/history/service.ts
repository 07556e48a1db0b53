// Revisions and the trash: read, compare, restore, prune. Recording is the write path's
// (./record.ts, called by src/write/unit.ts); a restore is a content write like any other.
import { and, count, desc, eq, lt, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { type Actor, blocks, type NodeStatus, nodes, type Project, revisions, translations } from "../../db/schema";
import { publishNodeVersion, publishTranslationVersion, unpublishNodeVersion, unpublishTranslationVersion } from "../content/publish";
import { getNode } from "../content/service";
import { AppError, isUniqueViolation, notFound } from "../errors";
import { type Change, diffJson } from "../lib/diff";
import { isUuid } from "../lib/ids";
import { rows } from "../lib/json";
import { readPaging } from "../lib/paging";
import { oneRow } from "../lib/rows";
import type { WriteContext } from "../write/context";
import { RESTORED_FROM_TRASH } from "../write/record";
import { contentWrite, type WriteLog } from "../write/unit";

type Revision = typeof revisions.$inferSelect;

/** A node's state as ./record.ts stores it. */
export interface Snapshot {
  id: string;
  parent_id: string | null;
  slug: string;
  path: string;
  type: string;
  title: string;
  status: NodeStatus;
  position: number;
  seo: Record<string, unknown>;
  fields: Record<string, unknown>;
  published_at: string | null;
  blocks: { id: string; type: string; data: Record<string, unknown> }[];
  translations: { locale: string; status: "draft" | "published"; meta: Record<string, unknown>; fields: Record<string, unknown>; blocks: Record<string, Record<string, unknown>> }[];
  deleted?: { root: string };
}

export interface Retention {
  readonly revisionsPerNode: number;
  readonly revisionsMaxAgeDays: number;
  readonly trashRetentionDays: number;
}

const DAY_MS = 86_400_000;
const snapshotOf = (r: Revision): Snapshot => r.snapshot as unknown as Snapshot;

const revisionToWire = (r: Revision) => ({
  node_id: r.nodeId,
  number: r.number,
  operation: r.operation,
  actor: r.actor,
  created_at: r.createdAt.toISOString(),
  deleted: snapshotOf(r).deleted !== undefined,
});

/** The node's revisions, newest first; 404 when the node neither exists nor has any revision left. */
export async function listRevisions(db: Db, projectId: string, nodeId: string, paging: { page?: number; per_page?: number }) {
  const { page, perPage } = readPaging(paging, { defaultPerPage: 20 });
  if (!isUuid(nodeId)) throw notFound("node");
  const where = and(eq(revisions.projectId, projectId), eq(revisions.nodeId, nodeId));
  const [found, counted, live] = await Promise.all([
    db
      .select()
      .from(revisions)
      .where(where)
      .orderBy(desc(revisions.number))
      .limit(perPage)
      .offset((page - 1) * perPage),
    db.select({ total: count() }).from(revisions).where(where),
    db
      .select({ id: nodes.id })
      .from(nodes)
      .where(and(eq(nodes.projectId, projectId), eq(nodes.id, nodeId))),
  ]);
  const total = Number(oneRow(counted).total);
  if (total === 0 && live.length === 0) throw notFound("node");
  return { revisions: found.map(revisionToWire), total, page, per_page: perPage };
}

async function findRevision(db: Db, projectId: string, nodeId: string, number: number): Promise<Revision> {
  if (!isUuid(nodeId)) throw notFound("revision");
  const [row] = await db
    .select()
    .from(revisions)
    .where(and(eq(revisions.projectId, projectId), eq(revisions.nodeId, nodeId), eq(revisions.number, number)));
  if (!row) throw notFound("revision");
  return row;
}

/** One revision with its snapshot and what changed against `against` (default: the previous revision kept). */
export async function getRevision(db: Db, projectId: string, nodeId: string, number: number, against?: number) {
  const rev = await findRevision(db, projectId, nodeId, number);
  let base: Revision | null = null;
  if (against !== undefined) base = await findRevision(db, projectId, nodeId, against);
  else {
    [base = null] = await db
      .select()
      .from(revisions)
      .where(and(eq(revisions.projectId, projectId), eq(revisions.nodeId, nodeId), lt(revisions.number, number)))
      .orderBy(desc(revisions.number))
      .limit(1);
  }
  const changes: Change[] = diffJson(base ? comparable(snapshotOf(base)) : {}, comparable(snapshotOf(rev)));
  return { ...revisionToWire(rev), snapshot: rev.snapshot, diff: { against: base?.number ?? null, changes } };
}

/** The deletion mark is the revision's, not the node's content: not compared. */
const comparable = ({ deleted: _deleted, ...s }: Snapshot): Omit<Snapshot, "deleted"> => s;

/**
 * The snapshot of revision `number` becomes the node's current state, as a new revision: its
 * title, slug, parent, type, position, SEO, fields, status, blocks (with their ids) and
 * translations. A node in the trash comes back with its id, and so do the descendants its
 * deletion took. Checked against the current content model like any write; 409 when its path is
 * taken or its parent is gone.
 */
export const restoreRevision = (db: Db, ctx: WriteContext, project: Project, nodeId: string, number: number, now: Date): Promise<{ node_id: string; revision: number; restored: string[] }> =>
  contentWrite(db, ctx, project.id, async (tx, w) => {
    const rev = await findRevision(tx, project.id, nodeId, number);
    const [live] = await tx
      .select()
      .from(nodes)
      .where(and(eq(nodes.projectId, project.id), eq(nodes.id, nodeId)));
    const restored = [nodeId];
    if (live) {
      await applySnapshot(tx, w, project.id, snapshotOf(rev), live, now);
      await publishAsRestored(tx, w, project.id, snapshotOf(rev), now);
    } else {
      const [last] = await tx
        .select()
        .from(revisions)
        .where(and(eq(revisions.projectId, project.id), eq(revisions.nodeId, nodeId)))
        .orderBy(desc(revisions.number))
        .limit(1);
      await applySnapshot(tx, w, project.id, snapshotOf(rev), null, now, last?.number ?? number);
      await publishAsRestored(tx, w, project.id, snapshotOf(rev), now);
      // The descendants the same deletion took: their last revision marks this node as its root.
      if (last && snapshotOf(last).deleted?.root === nodeId) {
        const taken = await tx.execute<{ node_id: string; number: number }>(sql`
          select r.node_id, r.number from revisions r
          where r.project_id = ${project.id} and r.node_id <> ${nodeId}::uuid and r.snapshot -> 'deleted' ->> 'root' = ${nodeId}
            and r.number = (select max(x.number) from revisions x where x.node_id = r.node_id)
            and not exists (select 1 from nodes n where n.id = r.node_id)
          order by length(r.snapshot ->> 'path'), r.snapshot ->> 'path'`);
        for (const t of rows<{ node_id: string; number: number }>(taken)) {
          const d = await findRevision(tx, project.id, t.node_id, Number(t.number));
          await applySnapshot(tx, w, project.id, snapshotOf(d), null, now, d.number);
          await publishAsRestored(tx, w, project.id, snapshotOf(d), now);
          restored.push(t.node_id);
        }
      }
    }
    const [after] = await tx.select({ revision: nodes.revision }).from(nodes).where(eq(nodes.id, nodeId));
    // nodes.revision moves at the end of the write (recording); the new revision is the next number.
    return { node_id: nodeId, revision: (after?.revision ?? 0) + 1, restored };
  });

/**
 * What readers see follows the restored revision (restoring needs content:publish): its published
 * node and translations are published, the rest taken off delivery.
 */
async function publishAsRestored(tx: Db, w: WriteLog, projectId: string, s: Snapshot, now: Date): Promise<void> {
  const node = await getNode(tx, projectId, s.id);
  if (s.status === "published") await publishNodeVersion(tx, w, node, now);
  else await unpublishNodeVersion(tx, w, node, s.status === "archived" ? "archived" : "draft");
  const locales = s.translations.map((t) => t.locale);
  await tx.execute(sql`delete from published_translations where node_id = ${s.id} and not (locale = any (string_to_array(${locales.join("\n")}, E'\\n')))`);
  for (const t of s.translations) {
    if (t.status === "published") await publishTranslationVersion(tx, w, node, t.locale);
    else await unpublishTranslationVersion(tx, w, node, t.locale);
  }
}

async function applySnapshot(tx: Db, w: WriteLog, projectId: string, s: Snapshot, live: typeof nodes.$inferSelect | null, now: Date, lastNumber = 0): Promise<void> {
  const [parent] = s.parent_id
    ? await tx
        .select()
        .from(nodes)
        .where(and(eq(nodes.projectId, projectId), eq(nodes.id, s.parent_id)))
    : [];
  if (s.parent_id && !parent) throw new AppError("conflict", "this revision's parent node is deleted: restore it first", { parent_id: s.parent_id });
  if (live && parent && (parent.id === live.id || parent.path.startsWith(`${live.path}/`))) throw new AppError("conflict", "this revision's parent is now below the node", { parent_id: s.parent_id });
  const path = parent ? `${parent.path}/${s.slug}` : s.slug;
  const values = {
    parentId: s.parent_id,
    slug: s.slug,
    path,
    type: s.type,
    title: s.title,
    status: s.status,
    position: s.position,
    seo: s.seo,
    fields: s.fields,
    publishedAt: s.published_at ? new Date(s.published_at) : null,
    updatedAt: now,
  };
  try {
    if (live) {
      await tx.update(nodes).set(values).where(eq(nodes.id, live.id));
      if (path !== live.path) {
        w.gone(live.path);
        await tx
          .update(nodes)
          .set({ path: sql`${path} || substr(${nodes.path}, ${live.path.length + 1})`, updatedAt: now })
          .where(and(eq(nodes.projectId, projectId), sql`starts_with(${nodes.path}, ${`${live.path}/`})`));
      }
    } else {
      await tx.insert(nodes).values({ id: s.id, projectId, ...values, revision: lastNumber, createdAt: now });
      w.changed(s.id, RESTORED_FROM_TRASH); // its webhook event is node.restored
    }
  } catch (err) {
    throw isUniqueViolation(err) ? new AppError("conflict", `another node already has the path "${path}"`, { field: "slug", path }) : err;
  }
  w.added(path);
  w.touched(s.id);
  const ids = s.blocks.map((b) => b.id);
  await tx.delete(blocks).where(
    and(
      eq(blocks.nodeId, s.id),
      ids.length > 0
        ? sql`${blocks.id} not in (${sql.join(
            ids.map((id) => sql`${id}::uuid`),
            sql`, `,
          )})`
        : undefined,
    ),
  );
  for (const [order, b] of s.blocks.entries()) {
    const row = { id: b.id, nodeId: s.id, type: b.type, order, data: b.data };
    await tx
      .insert(blocks)
      .values(row)
      .onConflictDoUpdate({ target: blocks.id, set: { type: b.type, order, data: b.data } });
  }
  const locales = s.translations.map((t) => t.locale);
  await tx.delete(translations).where(
    and(
      eq(translations.nodeId, s.id),
      locales.length > 0
        ? sql`${translations.locale} not in (${sql.join(
            locales.map((l) => sql`${l}`),
            sql`, `,
          )})`
        : undefined,
    ),
  );
  for (const t of s.translations) {
    const set = { meta: t.meta, fields: t.fields, blocks: t.blocks, status: t.status, updatedAt: now };
    await tx
      .insert(translations)
      .values({ id: crypto.randomUUID(), projectId, nodeId: s.id, locale: t.locale, createdAt: now, ...set })
      .onConflictDoUpdate({ target: [translations.nodeId, translations.locale], set });
  }
}

/** Deleted nodes still restorable (deleted within the trash retention), newest first. */
export async function listTrash(db: Db, projectId: string, retention: Retention, now: Date, paging: { page?: number; per_page?: number }) {
  const { page, perPage } = readPaging(paging, { defaultPerPage: 20 });
  const since = new Date(now.getTime() - retention.trashRetentionDays * DAY_MS);
  const trashed = sql`(
    select r.node_id, r.number, r.actor, r.created_at, r.snapshot from revisions r
    where r.project_id = ${projectId} and r.snapshot ? 'deleted' and r.created_at >= ${since.toISOString()}::timestamptz
      and r.number = (select max(x.number) from revisions x where x.node_id = r.node_id)
      and not exists (select 1 from nodes n where n.id = r.node_id)
  ) t`;
  const [page1, counted] = await Promise.all([
    db.execute<{ node_id: string; number: number; actor: Actor; created_at: string | Date; snapshot: Snapshot }>(
      sql`select * from ${trashed} order by t.created_at desc, t.node_id limit ${perPage} offset ${(page - 1) * perPage}`,
    ),
    db.execute<{ total: number | string }>(sql`select count(*) as total from ${trashed}`),
  ]);
  const trash = rows<{ node_id: string; number: number; actor: Actor; created_at: string | Date; snapshot: Snapshot }>(page1).map((r) => ({
    node_id: r.node_id,
    revision: Number(r.number),
    path: r.snapshot.path,
    title: r.snapshot.title,
    type: r.snapshot.type,
    status: r.snapshot.status,
    deleted_with: r.snapshot.deleted?.root ?? r.node_id,
    deleted_at: new Date(r.created_at).toISOString(),
    actor: r.actor,
  }));
  return { trash, total: Number(rows<{ total: number | string }>(counted)[0]?.total ?? 0), page, per_page: perPage };
}

/**
 * The housekeeping's part (src/housekeeping.ts), in batches of `batch` rows, at most `rounds`
 * batches a run: a node's newest revision is always kept while the node lives or sits in the
 * trash; older ones go past `revisionsPerNode` or `revisionsMaxAgeDays`; a deleted node's whole
 * history goes once its deletion is older than `trashRetentionDays`.
 */
export async function pruneRevisions(db: Db, retention: Retention, now: Date, batch = 1000, rounds = 20): Promise<{ revisions: number; trashed: number }> {
  const old = new Date(now.getTime() - retention.revisionsMaxAgeDays * DAY_MS).toISOString();
  const trashCutoff = new Date(now.getTime() - retention.trashRetentionDays * DAY_MS).toISOString();
  let pruned = 0;
  let trashed = 0;
  for (let i = 0; i < rounds; i++) {
    const gone = rows(
      await db.execute(sql`
        delete from revisions where id in (
          select id from (
            select id, created_at, row_number() over (partition by node_id order by number desc) as rn from revisions
          ) r where r.rn > 1 and (r.rn > ${retention.revisionsPerNode} or r.created_at < ${old}::timestamptz)
          limit ${batch}
        ) returning id`),
    ).length;
    pruned += gone;
    if (gone < batch) break;
  }
  for (let i = 0; i < rounds; i++) {
    const gone = rows(
      await db.execute(sql`
        delete from revisions where node_id in (
          select r.node_id from revisions r
          where not exists (select 1 from nodes n where n.id = r.node_id)
          group by r.node_id having max(r.created_at) < ${trashCutoff}::timestamptz
          limit ${batch}
        ) returning id`),
    ).length;
    trashed += gone;
    if (gone === 0) break;
  }
  return { revisions: pruned, trashed };
}
