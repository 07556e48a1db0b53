// The search indexer: builds the index rows the write path leaves to it (src/write/search-index.ts).
// Content writes queue the nodes they changed (search_pending); the indexer, on every instance,
// takes them in batches (FOR UPDATE SKIP LOCKED: instances share the queue, a batch is one
// transaction, so a killed instance's batch is taken again) and rebuilds their working-copy rows.
// A project whose index was built under another content model's translatable fields or another
// default locale (or never built: new installs, upgrades) is queued whole, published rows included;
// those batches hold the project's lock (the one every content write takes first), so a write never
// interleaves with them. An admin search first indexes its project's queue (`indexQueued`), so it
// never misses a commit.
import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import type { AppDeps } from "../core/deps";
import { describeError } from "../errors";
import { rows } from "../lib/json";
import { type Periodic, periodic } from "../lib/periodic";
import { systemWrite } from "../write/context";
import { rebuildSearchRows } from "../write/search-index";
import { contentWrite } from "../write/unit";

/** Nodes one batch rebuilds (one transaction; a project's lock is held for it when published rows are rebuilt). */
const BATCH = 100;
/** Batches an admin search indexes of its project's queue before it searches (the rest is searched as it was). */
const READ_BATCHES = 5;
/** How long a queued node rests before the indexer takes it (the admin search takes it at once). */
const SETTLE_MS = 5000;

/**
 * Projects whose index is out of date as a whole: never built, or built under another default
 * locale or other translatable fields (a model change that kept them only moves the mark). Each is
 * queued whole, published rows included, and marked as built under what it has now. Answers the
 * projects queued whole.
 */
export async function queueStaleProjects(db: Db): Promise<string[]> {
  const stale = rows<{ id: string; model_version: number; default_locale: string; fields_key: string; whole: boolean }>(
    await db.execute(sql`select c.id, c.model_version, c.default_locale, k.fields_key,
        (c.marked is null or c.built_locale <> c.default_locale or c.built_key <> k.fields_key) as whole
      from (
        -- The model's fields are read only for the projects whose mark moved (offset 0: not flattened).
        select p.id, p.model_version, p.default_locale, s.project_id as marked, s.default_locale as built_locale, s.fields_key as built_key
        from projects p left join search_projects s on s.project_id = p.id
        where s.project_id is null or s.default_locale <> p.default_locale or s.model_version <> p.model_version offset 0
      ) c cross join lateral (select search_fields_key(c.id) as fields_key) k`),
  );
  for (const p of stale) {
    await db.transaction(async (tx) => {
      if (p.whole) {
        await tx.execute(sql`insert into search_pending (node_id, project_id, published)
          select id, project_id, true from nodes where project_id = ${p.id}
          on conflict (node_id) do update set published = true`);
      }
      await tx.execute(sql`insert into search_projects (project_id, model_version, fields_key, default_locale)
        values (${p.id}, ${p.model_version}, ${p.fields_key}, ${p.default_locale})
        on conflict (project_id) do update set model_version = excluded.model_version, fields_key = excluded.fields_key, default_locale = excluded.default_locale`);
    });
  }
  return stale.filter((p) => p.whole).map((p) => p.id);
}

/**
 * One batch of the project's queue: its nodes taken off the queue and their rows rebuilt, in one
 * transaction. Working-copy rows need no lock (only the indexer writes them, and a write that
 * commits meanwhile queues its node again); a batch that rebuilds published rows takes the
 * project's lock first. Answers how many nodes it took.
 */
async function indexBatch(db: Db, projectId: string, published: boolean, settleMs: number): Promise<number> {
  const take = async (tx: Db): Promise<number> => {
    const taken = rows<{ node_id: string }>(
      await tx.execute(sql`delete from search_pending q where q.node_id in (
          select node_id from search_pending where project_id = ${projectId} and published = ${published}
            and queued_at <= now() - make_interval(secs => ${settleMs / 1000})
          order by queued_at limit ${BATCH} for update skip locked)
        returning q.node_id`),
    );
    const ids = taken.map((t) => t.node_id);
    if (ids.length > 0) await rebuildSearchRows(tx, projectId, ids, published ? ids : []);
    return ids.length;
  };
  if (!published) return db.transaction(take);
  // As a content write: under the project's lock, and the content version moves (cached search answers go, on every instance).
  let n = 0;
  await contentWrite(db, systemWrite(), projectId, async (tx, w) => {
    n = await take(tx);
    if (n > 0) {
      w.gone("");
      w.added("");
      w.keepsAnswers(); // search rows and vectors: no page shows them
    }
  });
  return n;
}

/** The project's queue, at most `batches` batches of it (published rows first); answers the nodes indexed. */
export async function indexQueued(db: Db, projectId: string, batches = READ_BATCHES, settleMs = 0): Promise<number> {
  let done = 0;
  for (const published of [true, false]) {
    for (let i = 0; i < batches; i++) {
      const n = await indexBatch(db, projectId, published, settleMs);
      done += n;
      if (n < BATCH) break;
    }
  }
  return done;
}

/**
 * One look: stale projects queued, then the queued nodes of each project that were queued at least
 * `settleMs` ago (a page saved again and again while someone types is indexed once, not per
 * save), up to `batches` batches a project; what is left waits for the next look.
 */
export async function indexAll(db: Db, opts: { settleMs?: number; batches?: number; stopped?: () => boolean } = {}): Promise<number> {
  const settleMs = opts.settleMs ?? 0;
  await queueStaleProjects(db);
  const queued = rows<{ project_id: string }>(await db.execute(sql`select distinct project_id from search_pending where queued_at <= now() - make_interval(secs => ${settleMs / 1000}) limit 100`));
  let done = 0;
  for (const q of queued) {
    if (opts.stopped?.()) break;
    done += await indexQueued(db, q.project_id, opts.batches ?? 10, settleMs);
  }
  return done;
}

export function startSearchIndexer(deps: AppDeps, intervalMs = 2000): Periodic<number> {
  const loop: Periodic<number> = periodic(intervalMs, async () => {
    try {
      return await indexAll(deps.db, { settleMs: SETTLE_MS, stopped: () => loop.stopped() });
    } catch (err) {
      deps.log.warn("search indexer: a look failed; trying again", describeError(err));
      return 0;
    }
  });
  return loop;
}
