// Delivery answers stored when they are rendered (db/schema/delivery.ts): a miss of the in-memory
// answer cache, on any instance, reads the stored bytes and their ETag in one indexed statement;
// only an answer never rendered, or marked by a write since (src/write/answers.ts), is rendered,
// and then stored for every instance.
//
// Freshness: a stored row is read only at the project's render epoch and model version as this
// instance last read them with its content version, for this renderer (`signature`), and unmarked.
// A render is stored only if no content write committed since the project row it rendered with
// was read: the statement locks that row (FOR SHARE) and checks its content version. A write locks
// the row first (bumpContentVersion) and marks answers after, so either the write waits for the
// store and then marks what it stored, or the store meets the row locked by the write and stores
// nothing (SKIP LOCKED: a write in progress makes a new version anyway, so a reader never waits
// for it only to be refused).
import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { rows } from "../lib/json";
import { arrayText, sqlArray } from "../lib/sql";
import type { DeliveryProject } from "./cache";
import { preparedRows } from "./prepared";

/** What a stored answer shows (write/answers.ts): the nodes, and the watch entries of paths. */
export interface AnswerDeps {
  readonly deps: readonly string[];
  readonly watch: readonly string[];
}

export interface StoredRow {
  body: string;
  etag: string;
  scope: string | null;
}

/** The stored answer of `key` valid for the project as delivery knows it, or null. */
export async function readStored(db: Db, project: DeliveryProject, key: string, signature: string): Promise<StoredRow | null> {
  const [row] = await preparedRows<StoredRow>(
    db,
    sql`select body, etag, scope from delivery_answers where project_id = ${project.id} and key = ${key}
      and epoch = ${project.renderEpoch ?? 0} and model_version = ${project.modelVersion ?? 0} and signature = ${signature} and not stale`,
  );
  return row ?? null;
}

/** A rendered answer to store, with the project state it was rendered at. */
export interface ToStore {
  readonly project: Pick<DeliveryProject, "id" | "version">;
  readonly key: string;
  readonly answer: { readonly body: string; readonly etag: string; readonly scope?: string };
  readonly deps: AnswerDeps;
}

/**
 * Stores rendered answers in one statement, each unless a content write committed in its project
 * since its state was read (see above); answers how many were stored. A key given twice is stored
 * once (the last), as one statement may not write a row twice.
 */
export async function storeAnswers(db: Db, signature: string, list: readonly ToStore[]): Promise<number> {
  const last = new Map<string, ToStore>();
  for (const t of list) last.set(`${t.project.id} ${t.key}`, t);
  const items = [...last.values()];
  if (items.length === 0) return 0;
  const column = (f: (t: ToStore) => string | null, type: "uuid" | "text") => sqlArray(items.map(f), type);
  const done = await preparedRows(
    db,
    sql`insert into delivery_answers (project_id, key, epoch, model_version, signature, deps, watch, body, etag, scope, version)
      select p.id, x.key, p.render_epoch, p.model_version, ${signature}, x.deps::uuid[], x.watch::text[], x.body, x.etag, x.scope, p.content_version
      from unnest(${column((t) => t.project.id, "uuid")}, ${column((t) => String(t.project.version), "text")}, ${column((t) => t.key, "text")},
        ${column((t) => arrayText(t.deps.deps), "text")}, ${column((t) => arrayText(t.deps.watch), "text")}, ${column((t) => t.answer.body, "text")},
        ${column((t) => t.answer.etag, "text")}, ${column((t) => t.answer.scope ?? null, "text")}) as x(project_id, version, key, deps, watch, body, etag, scope)
      join projects p on p.id = x.project_id and p.content_version = x.version::bigint
      for share of p skip locked
      on conflict (project_id, key) do update set epoch = excluded.epoch, model_version = excluded.model_version, signature = excluded.signature, stale = false,
        deps = excluded.deps, watch = excluded.watch, body = excluded.body, etag = excluded.etag, scope = excluded.scope, version = excluded.version
      returning 1 as stored`,
  );
  return done.length;
}

/** Stores one rendered answer (storeAnswers): true when stored. */
export async function storeAnswer(db: Db, project: DeliveryProject, key: string, signature: string, answer: ToStore["answer"], deps: AnswerDeps): Promise<boolean> {
  return (await storeAnswers(db, signature, [{ project, key, answer, deps }])) > 0;
}

/** A stored answer whose route no longer answers (its page is gone): its row goes. */
export async function forgetStored(db: Db, projectId: string, key: string): Promise<void> {
  await db.execute(sql`delete from delivery_answers where project_id = ${projectId} and key = ${key}`);
}

/** Up to `limit` marked answers (any project): what the refresher renders again. A scan: `stale` has no index (db/schema/delivery.ts). */
export async function markedAnswers(db: Db, limit: number): Promise<{ project_id: string; key: string }[]> {
  return rows(await db.execute(sql`select project_id, key from delivery_answers where stale limit ${limit}`));
}

/**
 * Rows no read can use any more (rendered at an older epoch or model of their project): deleted in
 * batches by the hourly housekeeping. Rows of another renderer stay: a release rolled out beside
 * this one may still read them.
 */
export async function purgeUnreadable(db: Db, batch = 5000): Promise<number> {
  let total = 0;
  for (;;) {
    const gone = rows(
      await db.execute(sql`delete from delivery_answers a where (a.project_id, a.key) in (
        select a.project_id, a.key from delivery_answers a join projects p on p.id = a.project_id
        where a.epoch <> p.render_epoch or a.model_version <> p.model_version limit ${batch}) returning 1`),
    ).length;
    total += gone;
    if (gone < batch) return total;
  }
}
