// The vector ranking of a hybrid search, behind a small interface: `memoryVectorIndex` ranks by
// cosine similarity in the service, brute force over the project's published vectors for the
// locale, loaded once per project, locale, model and content version (every batch of vectors the
// embedder stores moves the content version). Where the pgvector extension exists, an index that
// orders by `embedding <=> $query` in SQL implements the same interface (docs/search.md).
import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { rows } from "../lib/json";
import { DIMENSIONS, decodeVector } from "./embeddings";
import { hiddenIds } from "./postgres";

interface VectorQuery {
  readonly projectId: string;
  /** The index rows' locale: "" for the default locale's (the base content). */
  readonly rowLocale: string;
  readonly model: string;
  /** The project's content version: what a cached load is keyed by. */
  readonly version: number;
  readonly type: string | null;
  /** Only the entries of this collection (its node id). */
  readonly parentId: string | null;
}

interface VectorHit {
  readonly nodeId: string;
  readonly similarity: number;
}

export interface VectorIndex {
  /** The `limit` published pages nearest to `vector` with a cosine similarity of `min` or more, nearest first. */
  nearest(q: VectorQuery, vector: Float32Array, limit: number, min: number): Promise<VectorHit[]>;
}

interface Loaded {
  readonly version: number;
  readonly ids: string[];
  readonly types: string[];
  readonly parents: (string | null)[];
  /** Unit vectors, one after another. */
  readonly matrix: Float32Array;
  /** Each page's unit vector by node id and text hash: what the next load reuses. */
  readonly byKey: Map<string, Float32Array>;
}

/** Project-locale loads kept (10,000 pages: 40 MB each), least recently used dropped first. */
const LOADS_KEPT = 6;

function normalise(v: Float32Array): Float32Array {
  let s = 0;
  for (const x of v) s += x * x;
  const norm = Math.sqrt(s) || 1;
  for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) / norm;
  return v;
}

/**
 * The published vectors a search may find: of rows in the published index (a page unpublished or
 * deleted has none, whatever the embedder has not yet deleted), delivered (not below an unpublished
 * or archived node). A new content version reads the list again, but only the vectors it does not
 * hold yet (reading all 10,000 took PGlite 2.4 s, PostgreSQL 160 ms).
 */
async function load(db: Db, q: VectorQuery, previous: Loaded | null): Promise<Loaded> {
  const list = rows<{ node_id: string; type: string; parent_id: string | null; text_hash: string }>(
    await db.execute(sql`with hidden as materialized (${hiddenIds(q.projectId)})
      select v.node_id, d.type, d.parent_id, v.text_hash from search_vectors v
        join search_documents d on d.node_id = v.node_id and d.published and d.locale = v.locale
        join published_nodes n on n.id = v.node_id and n.status = 'published'
      where v.project_id = ${q.projectId} and v.locale = ${q.rowLocale} and v.model = ${q.model} and v.dimensions = ${DIMENSIONS}
        and not exists (select 1 from hidden x where x.id = v.node_id)`),
  );
  const byKey = new Map<string, Float32Array>();
  const missing: string[] = [];
  for (const r of list) {
    const key = `${r.node_id} ${r.text_hash}`;
    const had = previous?.byKey.get(key);
    if (had) byKey.set(key, had);
    else missing.push(r.node_id);
  }
  for (let i = 0; i < missing.length; i += 1000) {
    const ids = missing.slice(i, i + 1000);
    const found = rows<{ node_id: string; text_hash: string; embedding: Uint8Array }>(
      await db.execute(sql`select node_id, text_hash, embedding from search_vectors where locale = ${q.rowLocale} and model = ${q.model}
        and node_id in (${sql.join(
          ids.map((id) => sql`${id}::uuid`),
          sql`, `,
        )})`),
    );
    for (const f of found) byKey.set(`${f.node_id} ${f.text_hash}`, normalise(decodeVector(f.embedding instanceof Uint8Array ? f.embedding : new Uint8Array(f.embedding as ArrayBuffer))));
  }
  const kept = list.filter((r) => byKey.has(`${r.node_id} ${r.text_hash}`));
  const matrix = new Float32Array(kept.length * DIMENSIONS);
  kept.forEach((r, i) => {
    matrix.set(byKey.get(`${r.node_id} ${r.text_hash}`) as Float32Array, i * DIMENSIONS);
  });
  return { version: q.version, ids: kept.map((r) => r.node_id), types: kept.map((r) => r.type), parents: kept.map((r) => r.parent_id), matrix, byKey };
}

function memoryVectorIndex(db: Db): VectorIndex {
  const loads = new Map<string, Promise<Loaded>>();
  const loaded = async (q: VectorQuery): Promise<Loaded> => {
    const key = JSON.stringify([q.projectId, q.rowLocale, q.model]);
    let l = loads.get(key);
    if (l) loads.delete(key);
    // A load of an older content version is replaced; one in flight is shared.
    const previous = l ? await l.catch(() => null) : null;
    if (!l || previous?.version !== q.version) l = load(db, q, previous);
    loads.set(key, l);
    if (loads.size > LOADS_KEPT) loads.delete(loads.keys().next().value as string);
    return l.catch((err: unknown) => {
      loads.delete(key);
      throw err;
    });
  };
  return {
    async nearest(q, vector, limit, min) {
      const l = await loaded(q);
      const v = normalise(Float32Array.from(vector));
      const best: VectorHit[] = [];
      for (let i = 0; i < l.ids.length; i++) {
        if ((q.type !== null && l.types[i] !== q.type) || (q.parentId !== null && l.parents[i] !== q.parentId)) continue;
        let dot = 0;
        const at = i * DIMENSIONS;
        for (let j = 0; j < DIMENSIONS; j++) dot += (l.matrix[at + j] as number) * (v[j] as number);
        if (dot < min) continue;
        if (best.length === limit && dot <= (best[best.length - 1]?.similarity ?? -2)) continue;
        best.push({ nodeId: l.ids[i] as string, similarity: dot });
        best.sort((a, b) => b.similarity - a.similarity);
        if (best.length > limit) best.pop();
      }
      return best;
    },
  };
}

const indexes = new WeakMap<Db, VectorIndex>();
/** The vector index of a database (one per database, as the search driver). */
export function vectorIndex(db: Db): VectorIndex {
  let i = indexes.get(db);
  if (!i) indexes.set(db, (i = memoryVectorIndex(db)));
  return i;
}

/** Whether the server could load pgvector (`create extension vector`): reported by the settings read, not required. */
export async function pgvectorAvailable(db: Db): Promise<boolean> {
  const found = rows<{ n: number }>(await db.execute(sql`select count(*)::int as n from pg_available_extensions where name = 'vector'`));
  return Number(found[0]?.n ?? 0) > 0;
}
