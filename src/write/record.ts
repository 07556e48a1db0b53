// How a content write records revisions, called by the one write path (src/write/unit.ts):
// each statement here writes the revisions of every node the write reported at once, the node's
// snapshot built by the database from the rows the transaction has just written.
import { type SQL, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { rows } from "../lib/json";
import type { WriteContext } from "./context";

/** What a write did to the working copies' `changed` flags and which versions it published (src/content/publish.ts). */
export interface Versions {
  /** Nodes and translations (`id` or `id/locale`) left with no unpublished changes. */
  readonly settled: ReadonlySet<string>;
  /** Those whose working copy the write changed (and did not settle): changed when they have a published version. */
  readonly edited: ReadonlySet<string>;
  /** Nodes the write published (or one of whose translations). */
  readonly published: ReadonlySet<string>;
}

const NO_VERSIONS: Versions = { settled: new Set(), edited: new Set(), published: new Set() };

/** The node's published version as a revision snapshot holds it (the approval page's and dry run's "before"); null when it has none. */
export async function publishedSnapshot(db: Db, nodeId: string): Promise<Record<string, unknown> | null> {
  return (await publishedRow(db, nodeId))?.snapshot ?? null;
}

/** The snapshot of a project's node as delivery serves it (its published version), or null when it has none. */
export async function publishedVersion(db: Db, projectId: string, nodeId: string): Promise<Record<string, unknown> | null> {
  const found = rows<{ snapshot: Record<string, unknown> }>(
    await db.execute(sql`select ${snapshotOf("p", "published")} as snapshot from published_nodes p where p.id = ${nodeId} and p.project_id = ${projectId} and p.status = 'published'`),
  );
  return found[0]?.snapshot ?? null;
}

/** The node's row in published_nodes (its path, a tombstone's too) and its snapshot when it is published; null without a row. */
export async function publishedRow(db: Db, nodeId: string): Promise<{ path: string; snapshot: Record<string, unknown> | null } | null> {
  const found = rows<{ path: string; snapshot: Record<string, unknown> | null }>(
    await db.execute(sql`select p.path, case when p.status = 'published' then ${snapshotOf("p", "published")} end as snapshot from published_nodes p where p.id = ${nodeId}`),
  );
  return found[0] ?? null;
}

/**
 * The node's state as a revision keeps it, built from the node row aliased `n`: what an editor
 * sets (title, slug, parent, type, position, SEO, fields, status), its path, the ordered blocks
 * with their ids and every translation (status, meta, fields, block overrides). Timestamps other
 * than published_at stay out (the revision's own time says when); no secret is part of a node.
 */
const snapshotOf = (n: string, version: "working" | "published" = "working"): SQL => {
  const a = sql.raw(n);
  const [blocks, translations] = version === "working" ? [sql.raw("blocks"), sql.raw("translations")] : [sql.raw("published_blocks"), sql.raw("published_translations")];
  return sql`jsonb_build_object(
    'id', ${a}.id, 'parent_id', ${a}.parent_id, 'slug', ${a}.slug, 'path', ${a}.path, 'type', ${a}.type, 'title', ${a}.title,
    'status', ${a}.status, 'position', ${a}.position, 'seo', ${a}.seo, 'fields', ${a}.fields,
    'published_at', to_char(${a}.published_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'blocks', coalesce((select jsonb_agg(jsonb_build_object('id', b.id, 'type', b.type, 'data', b.data) order by b."order", b.id) from ${blocks} b where b.node_id = ${a}.id), '[]'::jsonb),
    'translations', coalesce((select jsonb_agg(jsonb_build_object('locale', t.locale, 'status', t.status, 'meta', t.meta, 'fields', t.fields, 'blocks', t.blocks) order by t.locale) from ${translations} t where t.node_id = ${a}.id), '[]'::jsonb))`;
};

/** The change name of a node brought back from the trash (its webhook event is node.restored). */
export const RESTORED_FROM_TRASH = "restore_from_trash";

/**
 * One statement: every node of `changes` (id → the change's name when no operation runs) moves to
 * its next revision number and gets a revision row holding its state after the write. `also`, a
 * further data-modifying statement, runs within it (a CTE; `inserted` names the revisions recorded,
 * `node_id` and `number`). The nodes' whole states come back with `snapshots` (the model check),
 * else their path, type, status and translations' locales and statuses (the webhook events).
 */
export async function recordRevisions(
  tx: Db,
  ctx: WriteContext,
  projectId: string,
  changes: ReadonlyMap<string, string>,
  also: SQL | null,
  snapshots: boolean,
  versions: Versions = NO_VERSIONS,
): Promise<Map<string, Recorded>> {
  if (changes.size === 0) return new Map();
  const settled = JSON.stringify([...versions.settled]);
  const edited = JSON.stringify([...versions.edited]);
  // Translations whose flag moves (keys node/locale): a statement of the same round trip.
  const localeKeys = [...versions.settled, ...versions.edited].filter((k) => k.includes("/"));
  const flagTranslations =
    localeKeys.length === 0
      ? sql``
      : sql`, flagged as (
      update translations t set changed = case when ${settled}::jsonb ? (t.node_id::text || '/' || t.locale) then false else t.status = 'published' end
      where t.node_id in (select id from bumped) and ${JSON.stringify(localeKeys)}::jsonb ? (t.node_id::text || '/' || t.locale)
      returning t.id
    )`;
  const ids = [...changes.keys()];
  const op = ctx.operation;
  // Outside an operation, a content change ("write_node") is create_node at a node's first revision, update_node after.
  const name = sql`(${JSON.stringify(Object.fromEntries(changes))}::jsonb ->> bumped.id::text)`;
  const named = sql`case when ${name} = 'write_node' then (case when bumped.revision = 1 then 'create_node' else 'update_node' end) else ${name} end`;
  const recorded = await tx.execute(sql`
    with bumped as (
      update nodes n set revision = n.revision + 1,
        changed = case when ${settled}::jsonb ? n.id::text then false when ${edited}::jsonb ? n.id::text then n.status = 'published' else n.changed end
      where n.project_id = ${projectId} and n.id in (${sql.join(
        ids.map((id) => sql`${id}::uuid`),
        sql`, `,
      )})
      returning n.*
    )${flagTranslations}
    , inserted as (
      insert into revisions (id, project_id, node_id, number, operation, actor, snapshot, published)
      select gen_random_uuid(), bumped.project_id, bumped.id, bumped.revision, coalesce(${op}::text, ${named}), ${JSON.stringify(ctx.actor)}::jsonb, ${snapshotOf("bumped")},
        ${JSON.stringify([...versions.published])}::jsonb ? bumped.id::text
      from bumped
      returning node_id, number, snapshot
    )${also === null ? sql`` : sql`, also as (${also})`}
    select node_id, number, ${
      snapshots
        ? sql`snapshot, (select p.type from nodes p where p.id = (snapshot->>'parent_id')::uuid)`
        : sql`jsonb_build_object('path', snapshot->'path', 'type', snapshot->'type', 'status', snapshot->'status', 'translations',
            coalesce((select jsonb_agg(jsonb_build_object('locale', t->'locale', 'status', t->'status')) from jsonb_array_elements(snapshot->'translations') t), '[]'::jsonb)) as snapshot, null::text`
    } as parent_type from inserted`);
  return new Map(
    rows<{ node_id: string; number: number; snapshot: Record<string, unknown>; parent_type: string | null }>(recorded).map((r) => [
      r.node_id,
      { number: Number(r.number), snapshot: r.snapshot ?? {}, parentType: r.parent_type },
    ]),
  );
}

/** A revision just recorded: its number, the node's state it holds, and the node's parent's type (for the content model's check; without `snapshots`, the state's summary and no parent type). */
export interface Recorded {
  readonly number: number;
  readonly snapshot: Record<string, unknown>;
  readonly parentType: string | null;
}

/**
 * Before a node is deleted: it and every node below it get a last revision holding their state
 * before the deletion, marked `deleted` with the node the delete named (`root`): the trash.
 */
export async function recordDeletion(tx: Db, ctx: WriteContext, projectId: string, nodeId: string, fallback: string): Promise<number> {
  const op = ctx.operation ?? fallback;
  const recorded = await tx.execute(sql`
    insert into revisions (id, project_id, node_id, number, operation, actor, snapshot)
    select gen_random_uuid(), n.project_id, n.id, n.revision + 1, ${op}, ${JSON.stringify(ctx.actor)}::jsonb,
      ${snapshotOf("n")} || jsonb_build_object('deleted', jsonb_build_object('root', r.id::text))
    from nodes r join nodes n on n.project_id = r.project_id and (n.id = r.id or starts_with(n.path, r.path || '/'))
    where r.project_id = ${projectId} and r.id = ${nodeId}
    returning node_id, number`);
  return Number(rows<{ node_id: string; number: number }>(recorded).find((r) => r.node_id === nodeId)?.number ?? 0);
}
