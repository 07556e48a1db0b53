// Rebuilding a project's search index (`search:reindex`, src/cli.ts): after an upgrade that changes
// what is indexed. The write path and the indexer keep it fresh otherwise (src/write/search-index.ts,
// ./indexer.ts).
import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { rows } from "../lib/json";
import { systemWrite } from "../write/context";
import { contentWrite } from "../write/unit";
import { indexQueued } from "./indexer";

/**
 * The whole project's index, rebuilt now: every node queued with its published rows and indexed in
 * batches (each holding the project's lock while it rebuilds published rows), then an empty content
 * write moves the content version, so no cached search answer outlives it. Answers the number of
 * rows the index holds.
 */
export async function reindexProject(db: Db, projectId: string): Promise<number> {
  await db.execute(sql`insert into search_pending (node_id, project_id, published)
    select id, project_id, true from nodes where project_id = ${projectId}
    on conflict (node_id) do update set published = true`);
  while ((await indexQueued(db, projectId, 100)) > 0);
  await contentWrite(db, systemWrite(), projectId, async (_tx, w) => {
    w.gone("");
    w.added("");
    w.keepsAnswers(); // search rows: no page shows them
  });
  const [row] = rows<{ n: number }>(await db.execute(sql`select count(*)::int as n from search_documents where project_id = ${projectId}`));
  return Number(row?.n ?? 0);
}
