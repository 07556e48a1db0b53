// Working copies and published versions (docs/content-states.md). A node's row in `nodes` (with its
// `blocks` and `translations`) is its working copy: every content write changes only that. Its
// published version lives in `published_nodes`, `published_blocks` and `published_translations`,
// which delivery alone reads. The functions here run inside a content write (src/write/unit.ts):
// publishing copies the working copy over the published version, unpublishing removes it, and
// discarding copies the published version back over the working copy.
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { nodes, publishedNodes, translations } from "../../db/schema";
import { AppError, isUniqueViolation, notFound } from "../errors";
import { rows } from "../lib/json";
import { publishedRow } from "../write/record";
import type { WriteLog } from "../write/unit";

type Node = typeof nodes.$inferSelect;

/** The state a node (or translation) is in, from its lifecycle status and whether its working copy has unpublished changes. */
export type ContentState = "draft" | "published" | "changed" | "archived";
export const stateOf = (status: string, changed: boolean): ContentState => (status === "published" ? (changed ? "changed" : "published") : (status as ContentState));

const NODE_COLUMNS = sql.raw(`id, parent_id, project_id, slug, type, title, position, seo, fields, published_at, publish_at, unpublish_at, scheduled_by, created_at, updated_at`);
const TRANSLATION_COLUMNS = sql.raw(`id, project_id, node_id, locale, meta, blocks, fields, publish_at, unpublish_at, scheduled_by, created_at, updated_at`);
const TRANSLATION_SET = sql.raw(
  `meta = excluded.meta, blocks = excluded.blocks, fields = excluded.fields, status = 'published', publish_at = excluded.publish_at, unpublish_at = excluded.unpublish_at, scheduled_by = excluded.scheduled_by, updated_at = excluded.updated_at`,
);

const pathConflict = (path: string) => (err: unknown) => {
  throw isUniqueViolation(err) ? new AppError("conflict", `another published page already has the path "${path}": publish or unpublish that one first`, { field: "slug", path }) : err;
};

/**
 * The published version of `node` becomes its working copy (status published), with its blocks and
 * every translation whose published version has unpublished changes (but those in `keepLocales`). Its published path is its
 * parent's published path and its slug: a parent with no published version is 409, naming the
 * ancestors to publish first. A changed published path moves every published page below it.
 */
export async function publishNodeVersion(tx: Db, w: WriteLog, node: Node, now: Date, keepLocales: readonly string[] = []): Promise<void> {
  let parentPath: string | null = null;
  if (node.parentId !== null) {
    const [parent] = await tx.select({ path: publishedNodes.path, status: publishedNodes.status }).from(publishedNodes).where(eq(publishedNodes.id, node.parentId));
    if (parent?.status !== "published") {
      const first = await unpublishedAncestors(tx, node);
      throw new AppError("conflict", `publish ${first.map((a) => `"${a.path}"`).join(", ")} first: a page is published under a published parent`, { must_publish: first });
    }
    parentPath = parent.path;
  }
  const path = parentPath === null ? node.slug : `${parentPath}/${node.slug}`;
  // Its published row before (a tombstone's path too) and, when published, the version readers saw.
  const before = await publishedRow(tx, node.id);
  const publishedAt = node.status === "published" && node.publishedAt !== null ? node.publishedAt : now;
  await tx.update(nodes).set({ status: "published", publishedAt, updatedAt: now }).where(eq(nodes.id, node.id));
  await tx
    .execute(sql`insert into published_nodes (${NODE_COLUMNS}, path, status, revision)
      select ${NODE_COLUMNS}, ${path}, 'published', n.revision + 1 from nodes n where n.id = ${node.id}
      on conflict (id) do update set parent_id = excluded.parent_id, slug = excluded.slug, type = excluded.type, title = excluded.title,
        position = excluded.position, seo = excluded.seo, fields = excluded.fields, published_at = excluded.published_at, publish_at = excluded.publish_at,
        unpublish_at = excluded.unpublish_at, scheduled_by = excluded.scheduled_by, updated_at = excluded.updated_at, path = excluded.path,
        status = 'published', revision = excluded.revision`)
    .catch(pathConflict(path));
  if (before && before.path !== path) {
    w.gone(before.path);
    await tx
      .execute(sql`update published_nodes set path = ${path} || substr(path, ${before.path.length + 1})
        where project_id = ${node.projectId} and starts_with(path, ${`${before.path}/`})`)
      .catch(pathConflict(path));
  }
  await tx.execute(sql`delete from published_blocks where node_id = ${node.id}`);
  await tx.execute(sql`insert into published_blocks (id, node_id, type, "order", data) select id, node_id, type, "order", data from blocks where node_id = ${node.id}`);
  const locales = rows<{ locale: string }>(
    await tx.execute(sql`insert into published_translations (${TRANSLATION_COLUMNS}, status)
      select ${TRANSLATION_COLUMNS}, 'published' from translations where node_id = ${node.id} and status = 'published' and changed${keepLocales.length > 0 ? sql` and not (locale = any(${sql`array[${sql.join([...keepLocales], sql`, `)}]::text[]`}))` : sql``}
      on conflict (node_id, locale) do update set ${TRANSLATION_SET}
      returning locale`),
  ).map((r) => r.locale);
  // A page brought (first published, back from a tombstone, moved) or a translation published with
  // it (its slug may be new): its path may name another node than before. Published again where it
  // was, it brought nothing: stored answers that show it are marked by the node alone (write/answers.ts).
  if (before === null || before.snapshot === null || before.path !== path || locales.length > 0) w.added(path);
  w.published(node.id, undefined, before?.snapshot ?? null);
  for (const locale of locales) w.published(node.id, locale);
}

/** The ancestors of `node`, nearest first up to the first published one, that have no published version: what to publish first. */
async function unpublishedAncestors(tx: Db, node: Node): Promise<{ id: string; path: string; title: string }[]> {
  const found = rows<{ id: string; path: string; title: string; published: boolean }>(
    await tx.execute(sql`with recursive up as (
        select a.id, a.parent_id, a.path, a.title, 0 as depth from nodes a where a.id = ${node.parentId}
        union all select a.id, a.parent_id, a.path, a.title, u.depth + 1 from up u join nodes a on a.id = u.parent_id where u.depth < 64
      )
      select up.id, up.path, up.title, coalesce(p.status = 'published', false) as published from up left join published_nodes p on p.id = up.id order by up.depth`),
  );
  const out: { id: string; path: string; title: string }[] = [];
  for (const a of found) {
    if (a.published) break;
    out.push({ id: a.id, path: a.path, title: a.title });
  }
  return out.reverse();
}

/** The translation's working copy becomes its published version (the node need not be published yet: it is delivered once the node is). */
export async function publishTranslationVersion(tx: Db, w: WriteLog, node: Node, locale: string): Promise<void> {
  const done = await tx.execute(sql`insert into published_translations (${TRANSLATION_COLUMNS}, status)
      select ${TRANSLATION_COLUMNS}, 'published' from translations where node_id = ${node.id} and locale = ${locale}
      on conflict (node_id, locale) do update set ${TRANSLATION_SET}
      returning locale`);
  if (rows(done).length === 0) throw notFound("translation");
  await tx
    .update(translations)
    .set({ status: "published" })
    .where(and(eq(translations.nodeId, node.id), eq(translations.locale, locale)));
  w.gone(node.path);
  w.added(node.path);
  w.published(node.id, locale);
}

/**
 * The node's published version goes (status `to`: draft or archived). A node with published pages
 * below it keeps a tombstone row in that status, so that they stay hidden (and reappear, unchanged,
 * when it is published again); otherwise the row goes with its blocks.
 */
export async function unpublishNodeVersion(tx: Db, w: WriteLog, node: Node, to: "draft" | "archived"): Promise<void> {
  const gone = rows<{ path: string }>(
    await tx.execute(sql`with kept as (
      update published_nodes p set status = ${to} where p.id = ${node.id}
        and exists (select 1 from published_nodes c where c.parent_id = p.id and c.status = 'published')
      returning p.path
    ), dropped as (
      delete from published_nodes p where p.id = ${node.id} and not exists (select 1 from kept) returning p.path
    )
    select path from kept union all select path from dropped`),
  );
  for (const r of gone) w.gone(r.path);
  w.gone(node.path);
  w.settled(node.id);
}

/** The translation's published version goes; its working copy stays, a draft. */
export async function unpublishTranslationVersion(tx: Db, w: WriteLog, node: Node, locale: string): Promise<void> {
  await tx.execute(sql`delete from published_translations where node_id = ${node.id} and locale = ${locale}`);
  await tx
    .update(translations)
    .set({ status: "draft" })
    .where(and(eq(translations.nodeId, node.id), eq(translations.locale, locale)));
  w.gone(node.path);
  w.added(node.path);
  w.settled(node.id, locale);
}

/**
 * The working copy goes back to the published version: the node's title, slug, parent, position,
 * type, SEO, fields and blocks, and each translation that has a published version (`locale`: that
 * translation alone). A parent change moves the working paths below it, as a move does. 409 when
 * there is no published version to go back to.
 */
export async function discardChanges(tx: Db, w: WriteLog, node: Node, locale: string | null, now: Date): Promise<void> {
  if (locale !== null) {
    const done = await tx.execute(sql`update translations t set meta = p.meta, blocks = p.blocks, fields = p.fields, updated_at = ${now.toISOString()}::timestamptz
      from published_translations p where p.node_id = t.node_id and p.locale = t.locale and t.node_id = ${node.id} and t.locale = ${locale} returning t.locale`);
    if (rows(done).length === 0) throw new AppError("conflict", `the ${locale} translation has no published version to go back to`, { locale });
    w.settled(node.id, locale);
    return;
  }
  const [published] = await tx.select().from(publishedNodes).where(eq(publishedNodes.id, node.id));
  if (node.status !== "published" || published?.status !== "published") throw new AppError("conflict", "the node has no published version to go back to", { status: node.status });
  const parentPath = published.parentId === null ? null : ((await tx.select({ path: nodes.path }).from(nodes).where(eq(nodes.id, published.parentId)))[0]?.path ?? null);
  const path = parentPath === null ? published.slug : `${parentPath}/${published.slug}`;
  const conflict = (err: unknown) => {
    throw isUniqueViolation(err) ? new AppError("conflict", `another node already has the path "${path}"`, { field: "slug", path }) : err;
  };
  await tx
    .update(nodes)
    .set({
      parentId: published.parentId,
      slug: published.slug,
      path,
      type: published.type,
      title: published.title,
      position: published.position,
      seo: published.seo,
      fields: published.fields,
      updatedAt: now,
    })
    .where(eq(nodes.id, node.id))
    .catch(conflict);
  if (path !== node.path) {
    await tx.execute(sql`update nodes set path = ${path} || substr(path, ${node.path.length + 1}) where project_id = ${node.projectId} and starts_with(path, ${`${node.path}/`})`).catch(conflict);
  }
  // The blocks as published (same ids: the translations' overrides of them still apply); overrides of blocks that go are dropped.
  const gone = rows<{ id: string }>(
    await tx.execute(sql`delete from blocks b where b.node_id = ${node.id} and not exists (select 1 from published_blocks p where p.id = b.id and p.node_id = b.node_id) returning b.id`),
  ).map((r) => r.id);
  await tx.execute(sql`insert into blocks (id, node_id, type, "order", data) select id, node_id, type, "order", data from published_blocks where node_id = ${node.id}
    on conflict (id) do update set type = excluded.type, "order" = excluded."order", data = excluded.data`);
  if (gone.length > 0) {
    const keys = sql`array[${sql.join(gone, sql`, `)}]::text[]`;
    await tx.execute(sql`update translations set blocks = blocks - ${keys} where node_id = ${node.id} and jsonb_exists_any(blocks, ${keys})`);
  }
  const reverted = rows<{ locale: string }>(
    await tx.execute(sql`update translations t set meta = p.meta, blocks = p.blocks, fields = p.fields, updated_at = ${now.toISOString()}::timestamptz
      from published_translations p where p.node_id = t.node_id and p.locale = t.locale and t.node_id = ${node.id} and t.changed returning t.locale`),
  );
  w.settled(node.id);
  for (const r of reverted) w.settled(node.id, r.locale);
}

/**
 * Gives the project's nodes written straight into the tables (bulk fixtures: the bench seeds, test
 * fixtures) the published versions publishing would have given them, as migration 0011 does:
 * published nodes with their blocks and published translations, and a tombstone for a draft or
 * archived node with a published child. Rows that have a published version already are left alone.
 */
export async function mirrorPublishedVersions(db: Db, projectId: string): Promise<void> {
  await db.execute(sql`insert into published_nodes (id, parent_id, project_id, slug, path, type, title, status, position, seo, fields, revision, published_at, publish_at, unpublish_at, scheduled_by, created_at, updated_at)
    select n.id, n.parent_id, n.project_id, n.slug, n.path, n.type, n.title, n.status, n.position, n.seo, n.fields, n.revision, n.published_at, n.publish_at, n.unpublish_at, n.scheduled_by, n.created_at, n.updated_at
    from nodes n where n.project_id = ${projectId} and (n.status = 'published' or exists (select 1 from nodes c where c.parent_id = n.id and c.status = 'published'))
    on conflict (id) do nothing`);
  await db.execute(sql`insert into published_blocks (id, node_id, type, "order", data)
    select b.id, b.node_id, b.type, b."order", b.data from blocks b join published_nodes p on p.id = b.node_id where p.project_id = ${projectId} on conflict (id) do nothing`);
  await db.execute(sql`insert into published_translations (id, project_id, node_id, locale, meta, blocks, fields, status, publish_at, unpublish_at, scheduled_by, created_at, updated_at)
    select t.id, t.project_id, t.node_id, t.locale, t.meta, t.blocks, t.fields, t.status, t.publish_at, t.unpublish_at, t.scheduled_by, t.created_at, t.updated_at
    from translations t where t.project_id = ${projectId} and t.status = 'published' on conflict (node_id, locale) do nothing`);
}
