// Semantic search's settings and calls (docs/search.md, "Semantic search"): the project's
// embeddings provider and model (search_semantic), the daily cap on embedding calls
// (search_embed_calls), and the query vectors, cached.
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { aiProviders, searchSemantic } from "../../db/schema";
import type { ProviderRow } from "../ai/service";
import type { AppDeps } from "../core/deps";
import { AppError, notFound } from "../errors";
import { isUuid } from "../lib/ids";
import { rows } from "../lib/json";
import { checkEmbeddingKind, EMBEDDING_KINDS, embedTexts } from "./embeddings";

/** Embedding calls a project may make per UTC day unless its setting says otherwise. */
const DEFAULT_DAILY_CAP = 10_000;

export interface SemanticConfig {
  readonly provider: ProviderRow;
  readonly model: string;
  readonly dailyCap: number;
}

/** The project's semantic search, or null (keyword search only). */
export async function semanticConfig(db: Db, projectId: string): Promise<SemanticConfig | null> {
  const [row] = await db
    .select({ s: searchSemantic, p: aiProviders })
    .from(searchSemantic)
    .innerJoin(aiProviders, eq(aiProviders.id, searchSemantic.providerId))
    .where(eq(searchSemantic.projectId, projectId));
  return row ? { provider: row.p, model: row.s.model, dailyCap: row.s.dailyCap } : null;
}

export interface SemanticInput {
  provider_id: string | null;
  model?: string | null | undefined;
  daily_cap?: number | undefined;
}

/**
 * Names the provider (one of this project's, of a kind with an embeddings endpoint) and model, or
 * turns semantic search off (provider_id null: its vectors are deleted).
 */
export async function setSemantic(db: Db, projectId: string, input: SemanticInput, now: Date): Promise<SemanticConfig | null> {
  if (input.provider_id === null) {
    await db.delete(searchSemantic).where(eq(searchSemantic.projectId, projectId));
    await db.execute(sql`delete from search_vectors where project_id = ${projectId}`);
    await db.execute(sql`delete from search_embed_leases where project_id = ${projectId}`);
    return null;
  }
  const id = input.provider_id.toLowerCase();
  const [provider] = isUuid(id)
    ? await db
        .select()
        .from(aiProviders)
        .where(and(eq(aiProviders.id, id), eq(aiProviders.projectId, projectId)))
    : [];
  if (!provider) throw notFound("provider");
  checkEmbeddingKind(provider.kind);
  const model = input.model?.trim() || EMBEDDING_KINDS[provider.kind]?.model || "";
  if (model.length > 200 || /[\u0000-\u001f\u007f]/.test(model)) throw new AppError("invalid_request", "model must be 1 to 200 printable characters", { field: "model" });
  const dailyCap = input.daily_cap ?? DEFAULT_DAILY_CAP;
  const values = { projectId, providerId: provider.id, model, dailyCap, updatedAt: now };
  await db.insert(searchSemantic).values(values).onConflictDoUpdate({ target: searchSemantic.projectId, set: values });
  return { provider, model, dailyCap };
}

const dayOf = (d: Date): string => d.toISOString().slice(0, 10);

/** One embedding call taken from today's cap (atomically, every instance counting in one row); false when the cap is used up. */
export async function takeCall(db: Db, projectId: string, cap: number, now: Date): Promise<boolean> {
  if (cap <= 0) return false;
  const taken = rows<{ calls: number }>(
    await db.execute(sql`insert into search_embed_calls (project_id, day, calls) values (${projectId}, ${dayOf(now)}, 1)
      on conflict (project_id, day) do update set calls = search_embed_calls.calls + 1 where search_embed_calls.calls < ${cap}
      returning calls`),
  );
  return taken.length > 0;
}

/** Today's embedding calls of the project. */
async function callsToday(db: Db, projectId: string, now: Date): Promise<number> {
  const [r] = rows<{ calls: number }>(await db.execute(sql`select calls from search_embed_calls where project_id = ${projectId} and day = ${dayOf(now)}`));
  return Number(r?.calls ?? 0);
}

/** Query vectors kept, least recently used dropped first (about 4 KB each). */
const QUERY_CACHE_SIZE = 2000;
const queryVectors = new Map<string, Float32Array>();

/** Why a hybrid search answered with the keyword ranking alone. */
export type SemanticSkip = "off" | "daily_cap" | "unavailable";

/**
 * The vector of a query: from the cache (by project, locale, model and text), else one embedding
 * call counted against the daily cap. A vendor failure is not the reader's: the search answers
 * with its keyword ranking (`unavailable`).
 */
export async function queryVector(deps: AppDeps, config: SemanticConfig, locale: string, q: string): Promise<Float32Array | SemanticSkip> {
  const key = JSON.stringify([config.provider.projectId, locale, config.model, q]);
  const hit = queryVectors.get(key);
  if (hit) {
    queryVectors.delete(key);
    queryVectors.set(key, hit);
    return hit;
  }
  if (!(await takeCall(deps.db, config.provider.projectId, config.dailyCap, deps.now()))) return "daily_cap";
  try {
    const [v] = await embedTexts(deps, config.provider, config.model, [q]);
    if (!v) return "unavailable";
    queryVectors.set(key, v);
    if (queryVectors.size > QUERY_CACHE_SIZE) queryVectors.delete(queryVectors.keys().next().value as string);
    return v;
  } catch (err) {
    deps.log.warn("search: the query could not be embedded; keyword ranking alone", { project_id: config.provider.projectId, error_code: err instanceof AppError ? err.code : "internal" });
    return "unavailable";
  }
}

const registered = new WeakMap<Db, AppDeps>();
/**
 * The dependencies a hybrid delivery search calls the vendor with. Delivery's read routes are built
 * over the database alone (src/delivery/routes.ts): createApp registers its own (keyed by the app's
 * view of the database, which its delivery routes read through).
 */
export function registerSemanticDeps(deps: AppDeps): void {
  registered.set(deps.db, deps);
}
export const semanticDeps = (db: Db): AppDeps | null => registered.get(db) ?? null;

/** The settings read: the provider, model and cap, today's calls, and the vectors made and waiting. */
export async function semanticStatus(db: Db, projectId: string, now: Date) {
  const config = await semanticConfig(db, projectId);
  if (config === null) return null;
  const [counts] = rows<{ vectors: number; pending: number }>(
    await db.execute(sql`select
        (select count(*)::int from search_vectors v where v.project_id = ${projectId} and v.model = ${config.model}) as vectors,
        (select count(*)::int from search_documents d left join search_vectors v on v.node_id = d.node_id and v.locale = d.locale and v.model = ${config.model}
          where d.project_id = ${projectId} and d.published and (v.node_id is null or v.source_xmin <> d.xmin::text)) as pending`),
  );
  return {
    provider_id: config.provider.id,
    kind: config.provider.kind,
    model: config.model,
    daily_cap: config.dailyCap,
    calls_today: await callsToday(db, projectId, now),
    vectors: Number(counts?.vectors ?? 0),
    pending: Number(counts?.pending ?? 0),
  };
}
