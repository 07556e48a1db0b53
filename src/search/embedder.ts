// The embedder: keeps a vector for every published index row of the projects with semantic search
// (docs/search.md, "Semantic search"). Its outbox is derived from the index, not written by the
// write path: the work is every published row of search_documents without a vector of its text and
// the project's model. A row the index has not rewritten since its vector was made (same `xmin`)
// is not even read; a rewritten row whose text hashes as before only has its mark moved; the rest
// are leased (search_embed_leases: a conditional upsert, so two instances never take one row),
// embedded outside any transaction, TEXTS_PER_CALL to a call, each call taken from the daily cap,
// and stored in one content write (the content version moves: cached answers and vector loads go).
// A failed call backs off (30 s, doubling, at most an hour; the vendor's Retry-After when longer);
// a lease left by a killed process runs out. Vectors whose row is gone (unpublished, deleted) or of
// another model are deleted on every look.
import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import type { AppDeps } from "../core/deps";
import { AppError, describeError } from "../errors";
import { rows } from "../lib/json";
import { type Periodic, periodic } from "../lib/periodic";
import { sha256Hex } from "../lib/tokens";
import { systemWrite } from "../write/context";
import { contentWrite } from "../write/unit";
import { DIMENSIONS, embeddingText, embedTexts, encodeVector, TEXTS_PER_CALL } from "./embeddings";
import { type SemanticConfig, semanticConfig, takeCall } from "./semantic";

/** Calls one look makes per project, at most (the rest waits for the next look). */
const CALLS_PER_LOOK = 20;
const BACKOFF_BASE_S = 30;
const BACKOFF_MAX_S = 3600;

export interface EmbedReport {
  embedded: number;
  /** Rows rewritten by the index with the same text: no call. */
  unchanged: number;
  calls: number;
  failed: number;
  deleted: number;
  /** Projects whose daily cap stopped their embedding. */
  capped: string[];
}

type Candidate = { node_id: string; locale: string; xv: string; title: string; body: string; blocks: string; text_hash: string | null };

/** Vectors (and leases) whose published row is gone, or of another model than the project's. */
async function deleteGone(db: Db, projectId: string, model: string): Promise<number> {
  const gone = rows<{ node_id: string }>(
    await db.execute(sql`delete from search_vectors v where v.project_id = ${projectId} and (v.model <> ${model}
        or not exists (select 1 from search_documents d where d.node_id = v.node_id and d.published and d.locale = v.locale))
      returning v.node_id`),
  );
  await db.execute(sql`delete from search_embed_leases l where l.project_id = ${projectId}
    and not exists (select 1 from search_documents d where d.node_id = l.node_id and d.published and d.locale = l.locale)`);
  return gone.length;
}

/** Published rows without a vector of their current version, not leased and not waiting for a retry. */
async function candidates(db: Db, projectId: string, model: string, limit: number): Promise<Candidate[]> {
  return rows<Candidate>(
    await db.execute(sql`select d.node_id, d.locale, d.xmin::text as xv, d.title, d.body, d.blocks, v.text_hash
      from search_documents d
        left join search_vectors v on v.node_id = d.node_id and v.locale = d.locale and v.model = ${model}
        left join search_embed_leases l on l.node_id = d.node_id and l.locale = d.locale
      where d.project_id = ${projectId} and d.published and (v.node_id is null or v.source_xmin <> d.xmin::text)
        and (d.title <> '' or d.body <> '' or d.blocks <> '')
        and (l.node_id is null or (l.next_attempt_at <= now() and (l.leased_until is null or l.leased_until < now())))
      order by d.node_id, d.locale limit ${limit}`),
  );
}

/** Leases the rows no one else holds (a conditional upsert); answers those leased. */
async function lease(db: Db, projectId: string, items: readonly Candidate[], leaseMs: number): Promise<Set<string>> {
  if (items.length === 0) return new Set();
  const values = sql.join(
    items.map((c) => sql`(${c.node_id}::uuid, ${c.locale}, ${projectId}::uuid, now() + make_interval(secs => ${leaseMs / 1000}))`),
    sql`, `,
  );
  const taken = rows<{ node_id: string; locale: string }>(
    await db.execute(sql`insert into search_embed_leases (node_id, locale, project_id, leased_until) values ${values}
      on conflict (node_id, locale) do update set leased_until = excluded.leased_until
        where search_embed_leases.next_attempt_at <= now() and (search_embed_leases.leased_until is null or search_embed_leases.leased_until < now())
      returning node_id, locale`),
  );
  return new Set(taken.map((t) => `${t.node_id} ${t.locale}`));
}

async function release(db: Db, items: readonly { node_id: string; locale: string }[], failure: { code: string; retryAfterS: number } | null): Promise<void> {
  for (const c of items) {
    if (failure === null) {
      await db.execute(sql`update search_embed_leases set leased_until = null where node_id = ${c.node_id} and locale = ${c.locale}`);
      continue;
    }
    await db.execute(sql`update search_embed_leases set leased_until = null, attempts = attempts + 1, last_error = ${failure.code},
        next_attempt_at = now() + make_interval(secs => greatest(${failure.retryAfterS}, least(${BACKOFF_MAX_S}, ${BACKOFF_BASE_S} * power(2, attempts))))
      where node_id = ${c.node_id} and locale = ${c.locale}`);
  }
}

/** One project's look: gone vectors deleted, then up to CALLS_PER_LOOK calls of its work. */
async function embedProject(deps: AppDeps, projectId: string, config: SemanticConfig, report: EmbedReport): Promise<boolean> {
  const db = deps.db;
  report.deleted += await deleteGone(db, projectId, config.model);
  const leaseMs = deps.config.aiTimeoutMs * 2 + 5000;
  for (let call = 0; call < CALLS_PER_LOOK; call++) {
    const found = await candidates(db, projectId, config.model, TEXTS_PER_CALL);
    if (found.length === 0) return true;
    const work: (Candidate & { text: string; hash: string })[] = [];
    for (const c of found) {
      const text = embeddingText(c.title, c.body, c.blocks);
      const hash = await sha256Hex(new TextEncoder().encode(text));
      if (hash === c.text_hash) {
        // Rewritten with the same text (a type or parent change, a publish of the same words): never embedded twice.
        await db.execute(sql`update search_vectors set source_xmin = ${c.xv} where node_id = ${c.node_id} and locale = ${c.locale} and model = ${config.model}`);
        report.unchanged++;
      } else work.push({ ...c, text, hash });
    }
    if (work.length === 0) continue;
    const leased = await lease(db, projectId, work, leaseMs);
    const mine = work.filter((w) => leased.has(`${w.node_id} ${w.locale}`));
    if (mine.length === 0) return false;
    if (!(await takeCall(db, projectId, config.dailyCap, deps.now()))) {
      await release(db, mine, null);
      report.capped.push(projectId);
      return false;
    }
    report.calls++;
    let vectors: Float32Array[];
    try {
      vectors = await embedTexts(
        deps,
        config.provider,
        config.model,
        mine.map((w) => w.text),
      );
    } catch (err) {
      const code = err instanceof AppError ? err.code : "internal";
      const after = err instanceof AppError ? (err.details as Record<string, unknown> | undefined)?.retry_after : undefined;
      const retry = typeof after === "number" ? after : 0;
      deps.log.warn("search embedder: a call failed; backing off", { project_id: projectId, provider_id: config.provider.id, rows: mine.length, error_code: code });
      await release(db, mine, { code, retryAfterS: retry });
      report.failed += mine.length;
      return false;
    }
    // A content write: under the project's lock, and the content version moves (cached hybrid answers and vector loads go).
    await contentWrite(db, systemWrite(), projectId, async (tx, w) => {
      for (const [i, m] of mine.entries()) {
        const embedding = encodeVector(vectors[i] as Float32Array);
        await tx.execute(sql`insert into search_vectors (project_id, node_id, locale, model, dimensions, text_hash, source_xmin, embedding, embedded_at)
          values (${projectId}, ${m.node_id}, ${m.locale}, ${config.model}, ${DIMENSIONS}, ${m.hash}, ${m.xv}, ${embedding}, now())
          on conflict (node_id, locale, model) do update set text_hash = excluded.text_hash, source_xmin = excluded.source_xmin, embedding = excluded.embedding, embedded_at = now()`);
        await tx.execute(sql`delete from search_embed_leases where node_id = ${m.node_id} and locale = ${m.locale}`);
      }
      w.gone("");
      w.added("");
      w.keepsAnswers(); // search rows and vectors: no page shows them
    });
    report.embedded += mine.length;
  }
  return false;
}

/** One look over every project with semantic search (or the one named). */
export async function embedPending(deps: AppDeps, opts: { projectId?: string; stopped?: () => boolean } = {}): Promise<EmbedReport> {
  const report: EmbedReport = { embedded: 0, unchanged: 0, calls: 0, failed: 0, deleted: 0, capped: [] };
  const projects = rows<{ project_id: string }>(await deps.db.execute(sql`select project_id from search_semantic${opts.projectId === undefined ? sql`` : sql` where project_id = ${opts.projectId}`}`));
  for (const p of projects) {
    if (opts.stopped?.()) break;
    const config = await semanticConfig(deps.db, p.project_id);
    if (config !== null) await embedProject(deps, p.project_id, config, report);
  }
  return report;
}

export function startEmbedder(deps: AppDeps, intervalMs = 2000): Periodic<EmbedReport | null> {
  const loop: Periodic<EmbedReport | null> = periodic(intervalMs, async () => {
    try {
      return await embedPending(deps, { stopped: () => loop.stopped() });
    } catch (err) {
      deps.log.warn("search embedder: a look failed; trying again", describeError(err));
      return null;
    }
  });
  return loop;
}
