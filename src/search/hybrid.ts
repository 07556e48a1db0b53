// `mode=hybrid`: the keyword ranking (the driver's, its first RANKED hits) and the vector ranking
// (the RANKED published pages nearest the query's vector) merged by reciprocal rank fusion,
// score = Σ 1 / (RRF_K + rank). Without a provider, past the daily cap or while the vendor fails,
// the answer is the keyword search's, unchanged, with `mode: "keyword"` and the reason.
import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { rows } from "../lib/json";
import type { SearchDriver, SearchHit, SearchRequest, SearchResult } from "./driver";
import { embeddingText } from "./embeddings";
import { localPath } from "./postgres";
import { queryVector, type SemanticSkip, semanticConfig, semanticDeps } from "./semantic";
import { escapeText } from "./snippet";
import { vectorIndex } from "./vectors";

/** Hits of each ranking fused. */
const RANKED = 100;
/** The constant of reciprocal rank fusion (Cormack et al., 2009; Elasticsearch's and OpenSearch's default). */
const RRF_K = 60;
/**
 * A page is in the vector ranking when its cosine similarity to the query is at least this: below
 * it, every page of a site would be "found" by any query. Model-dependent; OpenAI's
 * text-embedding-3 puts unrelated texts at 0.05 to 0.2.
 */
const MIN_SIMILARITY = 0.25;

export type SearchMode = "keyword" | "hybrid";

export type ModeResult = SearchResult & { readonly mode: SearchMode; readonly semantic?: SemanticSkip };

/** The fields a search answer adds when a mode was asked for: `mode`, and `semantic` when a hybrid search was the keyword one. */
export function modeFields(found: SearchResult | ModeResult): { mode?: SearchMode; semantic?: SemanticSkip } {
  if (!("mode" in found)) return {};
  return found.semantic === undefined ? { mode: found.mode } : { mode: found.mode, semantic: found.semantic };
}

/** The published search of `request` in `mode` (hybrid on the published version only). */
export async function modeSearch(db: Db, driver: SearchDriver, request: SearchRequest, version: number, mode: SearchMode): Promise<ModeResult> {
  const skip = (why: SemanticSkip): Promise<ModeResult> => driver.search(request).then((r) => ({ ...r, mode: "keyword" as const, semantic: why }));
  if (mode === "keyword") return { ...(await driver.search(request)), mode };
  const config = request.version === "published" ? await semanticConfig(db, request.projectId) : null;
  const deps = semanticDeps(db);
  if (config === null || request.q.trim() === "") return skip("off");
  if (deps === null) return skip("unavailable");
  const vector = await queryVector(deps, config, request.locale, request.q.trim());
  if (typeof vector === "string") return skip(vector);
  const keyword = await driver.search({ ...request, page: 1, perPage: RANKED });
  if (keyword.noCollection) return { ...keyword, mode };
  const rowLocale = request.isDefault ? "" : request.locale;
  const parentId = request.collection === null ? null : await collectionId(db, request.projectId, request.collection);
  const near = await vectorIndex(db).nearest({ projectId: request.projectId, rowLocale, model: config.model, version, type: request.type, parentId }, vector, RANKED, MIN_SIMILARITY);
  const fused = new Map<string, number>();
  const add = (id: string, rank: number): void => {
    fused.set(id, (fused.get(id) ?? 0) + 1 / (RRF_K + rank));
  };
  for (const [i, h] of keyword.hits.entries()) add(h.id, i + 1);
  for (const [i, h] of near.entries()) add(h.nodeId, i + 1);
  const order = [...fused.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const start = (request.page - 1) * request.perPage;
  const page = order.slice(start, start + request.perPage);
  const byId = new Map(keyword.hits.map((h) => [h.id, h]));
  const details = await vectorHits(
    db,
    request,
    page.map(([id]) => id).filter((id) => !byId.has(id)),
  );
  const hits: SearchHit[] = page.flatMap(([id, score]) => {
    const h = byId.get(id) ?? details.get(id);
    return h ? [{ ...h, score: Math.round(score * 1e6) / 1e6 }] : [];
  });
  const vectorOnly = near.filter((h) => !byId.has(h.nodeId)).length;
  // Past RANKED keyword hits, a vector hit may be one of the keyword hits not ranked: total is then a lower bound.
  const exact = keyword.totalExact && keyword.total <= RANKED;
  return { hits, total: exact ? fused.size : keyword.total + vectorOnly, totalExact: exact, fuzzy: keyword.fuzzy, facets: keyword.facets, mode };
}

async function collectionId(db: Db, projectId: string, path: string): Promise<string | null> {
  const [r] = rows<{ id: string }>(await db.execute(sql`select id from published_nodes where project_id = ${projectId} and path = ${path} and type = 'collection' and status = 'published'`));
  return r?.id ?? null;
}

/**
 * The hits found by the vector ranking alone: title, type and path as the keyword hits have them
 * (a non-default locale's path from each ancestor's published translated slug); the snippet is the
 * start of the page's text, escaped, with no match marked.
 */
async function vectorHits(db: Db, r: SearchRequest, ids: readonly string[]): Promise<Map<string, SearchHit>> {
  if (ids.length === 0) return new Map();
  const rowLocale = r.isDefault ? "" : r.locale;
  const path = localPath({ ...r, version: "published" }, sql`n.id`, sql`n.path`);
  const found = rows<{ id: string; title: string; type: string; path: string; body: string; blocks: string }>(
    await db.execute(sql`select d.node_id as id, d.title, d.type, ${path} as path, left(d.body, 400) as body, left(d.blocks, 400) as blocks
      from search_documents d join published_nodes n on n.id = d.node_id
      where d.project_id = ${r.projectId} and d.published and d.locale = ${rowLocale}
        and d.node_id in (${sql.join(
          ids.map((id) => sql`${id}::uuid`),
          sql`, `,
        )})`),
  );
  return new Map(
    found.map((f) => {
      const text = embeddingText("", f.body, f.blocks).replace(/\s+/g, " ");
      const snippet = Array.from(text).slice(0, 160).join("") + (text.length > 160 ? " …" : "");
      return [f.id, { id: f.id, path: f.path, title: f.title, type: f.type, locale: r.locale, snippet: escapeText(snippet).trim(), score: 0 }];
    }),
  );
}
