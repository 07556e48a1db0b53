// Keeps the search index (db/schema/search.ts, read by src/search/) fresh inside the write that
// changes content: contentWrite (./unit.ts) calls refreshSearchIndex last, in its transaction, so a
// page published is found, and one unpublished, archived or deleted is gone, when the write
// commits. What readers search (the published rows) is rebuilt here, and only by a write that
// published, unpublished or settled something; the working copies the admin search reads are queued
// (search_pending, one small insert) for the indexer (src/search/indexer.ts), so a draft edit costs
// the write no text extraction. The rows come from search_rows() (migration 0017), the one
// definition of what is indexed.
import { type SQL, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { sqlArray } from "../lib/sql";
import type { Versions } from "./record";

const uuids = (list: Iterable<string>): SQL => sqlArray(new Set(list), "uuid");

/**
 * One statement: the index rows of the nodes `working` (their working copies) and `published`
 * (their published versions) rebuilt; rows whose text did not change are left alone (no GIN churn),
 * rows the nodes no longer have (a translation gone, a page unpublished) deleted.
 */
export async function rebuildSearchRows(tx: Db, projectId: string, working: readonly string[], published: readonly string[]): Promise<void> {
  await tx.execute(sql`with fresh as (
      select r.* from search_rows(${projectId}::uuid, ${uuids(working)}, ${uuids(published)}) r
    ), up as (
      insert into search_documents (project_id, node_id, published, locale, type, parent_id, config, title, body, blocks)
      select project_id, node_id, published, locale, type, parent_id, config, title, body, blocks from fresh
      on conflict (node_id, published, locale) do update
        set type = excluded.type, parent_id = excluded.parent_id, config = excluded.config, title = excluded.title, body = excluded.body, blocks = excluded.blocks
      where (search_documents.type, search_documents.parent_id, search_documents.config, search_documents.title, search_documents.body, search_documents.blocks)
        is distinct from (excluded.type, excluded.parent_id, excluded.config, excluded.title, excluded.body, excluded.blocks)
    )
    -- By node (the primary key's first column): a deleted node's rows went with it (cascade).
    delete from search_documents d
    where d.project_id = ${projectId}
      and ((not d.published and d.node_id = any (${uuids(working)})) or (d.published and d.node_id = any (${uuids(published)})))
      and not exists (select 1 from fresh f where f.node_id = d.node_id and f.published = d.published and f.locale = d.locale)`);
}

/**
 * The write's part: the nodes it changed queued for the indexer (deleted ones included: their rows
 * went with them), and the published rows of those it published, unpublished or settled (null: all
 * it changed) rebuilt now, in the same round trip. The queue's upsert takes the row's lock, so an
 * indexer that took the node before this write commits finds it queued again; it keeps the time the
 * node was first queued, so a page saved again and again is still indexed within seconds.
 */
export async function refreshSearchIndex(tx: Db, projectId: string, nodeIds: Iterable<string>, versions: Versions | null): Promise<void> {
  const ids = [...new Set(nodeIds)];
  if (ids.length === 0) return;
  const pub = versions === null ? ids : [...new Set([...versions.published, ...[...versions.settled].map((key) => key.split("/")[0] ?? key)])];
  await Promise.all([
    tx.execute(sql`insert into search_pending (node_id, project_id) select unnest(${uuids(ids)}), ${projectId}::uuid
      on conflict (node_id) do update set queued_at = search_pending.queued_at`),
    pub.length === 0 ? null : rebuildSearchRows(tx, projectId, [], pub),
  ]);
}
