// The PostgreSQL search driver (the default, src/search/driver.ts): full-text search over the index
// the write path keeps (search_documents, migration 0017), one statement per search. The hits join
// their node for the path, the type and visibility (paths are never stored: a parent's move would
// make them stale), so an answer is right at the commit that changed any of them.
import { type SQL, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { preparedRows } from "../delivery/prepared";
import { rows } from "../lib/json";
import { escapeLike, sqlArray } from "../lib/sql";
import type { SearchDriver, SearchHit, SearchRequest, SearchResult, Suggestion } from "./driver";
import { indexQueued } from "./indexer";
import { cleanQuery, lexemeQuery, MAX_HITS, type ParsedQuery, parseQuery, TYPO_MIN_LETTERS } from "./query";
import { makeSnippet, queryTerms } from "./snippet";
import { typoCorrections } from "./text";

/** Ranks of the weights D, C (blocks), B (description and fields), A (title). */
const WEIGHTS = sql.raw(`'{0.05, 0.2, 0.4, 1.0}'::float4[]`);
/**
 * Characters of a hit's text its snippet is made from (./snippet.ts): the start of the description
 * and fields, then of the blocks, each read as a slice (`substr` reads only the TOASTed value's first
 * chunks; `left` of the whole text decompressed a long page's blocks whole, for every hit shown).
 */
const SNIPPET_CHARS = 3000;
/** The word similarity (pg_trgm) of a suggested title to what the reader typed, at least. */
const SUGGEST_SIMILARITY = 0.45;
/** Facet values counted per facet, most frequent first. */
const FACET_VALUES = 100;

interface Tables {
  nodes: SQL;
  translations: SQL;
}
const tablesOf = (r: Pick<SearchRequest, "version">): Tables =>
  r.version === "published" ? { nodes: sql.raw("published_nodes"), translations: sql.raw("published_translations") } : { nodes: sql.raw("nodes"), translations: sql.raw("translations") };

/**
 * The tsquery of a parsed query in a text-search configuration (`configOf`). `alternatives` (the typo fallback)
 * replace each typo word by itself or its corrections; `relaxed` matches any of the plain words
 * (with their alternatives) instead of all, phrases and exclusions still applying.
 */
function tsquery(config: string, p: ParsedQuery, alternatives: readonly string[][] | null, relaxed = false): SQL {
  const cfg = sql`${config}::regconfig`;
  const parts: SQL[] = [];
  const prefixPart = p.prefix === null ? null : sql`to_tsquery(${cfg}, ${lexemeQuery(p.prefix, true)})`;
  if (relaxed) {
    const alts = new Map(p.typoWords.map((w, i) => [w, alternatives?.[i] ?? null]));
    const any = p.words.map((w) => alts.get(w)?.join(" | ") ?? lexemeQuery(w, w === p.prefix));
    if (p.webWithoutWords.trim() !== "") parts.push(sql`websearch_to_tsquery(${cfg}, ${p.webWithoutWords})`);
    if (any.length > 0) parts.push(sql`to_tsquery(${cfg}, ${any.join(" | ")})`);
  } else if (alternatives === null) {
    if (p.web.trim() !== "") parts.push(sql`websearch_to_tsquery(${cfg}, ${p.web})`);
    if (prefixPart !== null) parts.push(prefixPart);
  } else {
    if (p.webWithoutTypos.trim() !== "") parts.push(sql`websearch_to_tsquery(${cfg}, ${p.webWithoutTypos})`);
    for (const alts of alternatives) parts.push(sql`to_tsquery(${cfg}, ${alts.join(" | ")})`);
    if (prefixPart !== null && p.prefix !== null && !p.typoWords.includes(p.prefix)) parts.push(prefixPart);
  }
  return parts.length === 0 ? sql`''::tsquery` : sql.join(parts, sql` && `);
}

/** The row locale of a search: "" (the base content) in the default locale. */
const rowLocale = (r: Pick<SearchRequest, "locale" | "isDefault">): string => (r.isDefault ? "" : r.locale);

/** A node's path in a non-default locale: each ancestor's translated slug (a published one, on the published version), else its slug. */
export function localPath(r: Pick<SearchRequest, "version" | "locale" | "isDefault">, id: SQL, basePath: SQL): SQL {
  if (r.isDefault) return basePath;
  const t = tablesOf(r);
  const live = r.version === "published" ? sql` and t.status = 'published'` : sql``;
  return sql`(with recursive up as (
      select x.id, x.parent_id, x.slug, 0 as depth from ${t.nodes} x where x.id = ${id}
      union all select x.id, x.parent_id, x.slug, up.depth + 1 from up join ${t.nodes} x on x.id = up.parent_id where up.depth < 64
    ) select string_agg(coalesce(nullif(btrim(t.meta->>'slug'), ''), up.slug), '/' order by up.depth desc)
    from up left join ${t.translations} t on t.node_id = up.id and t.locale = ${r.locale}${live})`;
}

/** Conditions every hit meets: the project, the version, the locale; on the published version, delivered (published, no hidden ancestor). */
function scope(r: Pick<SearchRequest, "projectId" | "version" | "locale" | "isDefault">): SQL {
  const base = sql`d.project_id = ${r.projectId} and d.published = ${r.version === "published"} and d.locale = ${rowLocale(r)}`;
  if (r.version === "working") return base;
  // A page below an unpublished or archived node is not delivered (its tombstone keeps the path).
  // Tombstones are few: read once (an index range per status), not once per hit.
  return sql`${base} and n.status = 'published' and not exists (select 1 from (select h.path from published_nodes h
    where h.project_id = ${r.projectId} and h.status in ('draft', 'archived') offset 0) h where starts_with(n.path, h.path || '/'))`;
}

/**
 * The published pages of the project below an unpublished or archived node (tombstones keep their
 * path): not delivered, so never found. One index range per tombstone, once per search.
 */
export const hiddenIds = (projectId: string): SQL =>
  sql`select x.id from published_nodes h join published_nodes x on x.project_id = h.project_id and x.path ~>=~ (h.path || '/') and x.path ~<~ (h.path || '0')
    where h.project_id = ${projectId} and h.status in ('draft', 'archived')`;

function statement(r: SearchRequest, tq: SQL): SQL {
  const t = tablesOf(r);
  const published = r.version === "published";
  const col =
    r.collection === null
      ? null
      : sql`(select c.id from ${t.nodes} c where c.project_id = ${r.projectId} and c.path = ${r.collection} and c.type = 'collection'${published ? sql` and c.status = 'published'` : sql``})`;
  const fieldFacets = r.facets.some((f) => "expression" in f);
  const filters = sql.join(
    [
      r.type === null ? sql`` : sql` and d.type = ${r.type}`,
      col === null ? sql`` : sql` and d.parent_id = ${col}`,
      published ? sql` and not exists (select 1 from hidden x where x.id = d.node_id)` : sql``,
    ],
    sql``,
  );
  const facetCols = r.facets.map((f, i) => {
    const expr = "expression" in f ? sql`(h.fields->>${f.name})` : sql`h.type`;
    return sql`, (select coalesce(json_object_agg(f.v, f.c), '{}'::json) from (
        select ${expr} as v, count(*)::int as c from hits h where ${expr} is not null group by 1 order by 2 desc, 1 limit ${FACET_VALUES}
      ) f) as ${sql.raw(`facet_${i}`)}`;
  });
  const offset = Math.min((r.page - 1) * r.perPage, Number.MAX_SAFE_INTEGER);
  // The hits are the matching rows of the project's version and locale, at most MAX_HITS + 1 of
  // them: those whose title matches (its own index, `titles`) first, then as many of the others as
  // the index gives them as the cap leaves room for (the title hits left out by a hashed `not in`:
  // as a union, each branch read and ranked up to the cap, 2,002 rows for 1,001 kept, and the
  // union's hash over all of them; `not exists` made a generic plan scan the titles once per row,
  // as it expects a few of them). Both
  // indexes are scoped (search_scoped, migration 0022): their lexemes carry the row's version and
  // locale, so the query (`q.scoped`, its lexemes scoped alike) reads the posting lists of its
  // version and locale alone. They hold no positions: a phrase is matched there as its words
  // (`<->` read as `&`) and checked on the row's own `doc` (`q.phrase`); with an exclusion as well
  // the phrase is kept (a phrase under `!` read as `&` would exclude rows holding its words apart),
  // and the index's answer is rechecked on the row (a phrase without positions matches: the
  // superset the check on `doc` narrows). Each hit is ranked on its row alone (head stays in the
  // row; doc, TOASTed, is read for a phrase only) and the node is joined for the page's hits only
  // (its path, its state), or for every hit when a field is faceted. Beyond MAX_HITS, total says so
  // (total_exact false). The project, version and locale are checked on the rows the index gives
  // (`is true`: not an index condition; as index conditions PostgreSQL intersected the text index
  // with the project's, a read of every row id of the project's locale).
  const from = sql`from q, search_documents d${fieldFacets ? sql` join ${t.nodes} n on n.id = d.node_id` : sql``}
      where search_scoped(d.doc, d.published, d.locale) @@ q.scoped
        and (d.project_id = ${r.projectId} and d.published = ${sql.raw(String(published))} and d.locale = ${rowLocale(r)} and (not q.phrase or d.doc @@ q.tq)) is true${filters}`;
  // The title hits: the titles' scoped index. A title that matches a query without an exclusion
  // (`!`) puts its whole text in the hits too (the title is `doc`'s first part, positions and all):
  // only with an exclusion is the text read (TOASTed, about 7 µs a row), and only on the rows of the
  // project, version and locale (one expression, evaluated in order: as two filters PostgreSQL ran
  // the costlier text match first, on every title's row).
  const titleFrom = sql`from q, search_documents d${fieldFacets ? sql` join ${t.nodes} n on n.id = d.node_id` : sql``}
      where search_scoped(to_tsvector(d.config, d.title), d.published, d.locale) @@ q.scoped
        and (d.project_id = ${r.projectId} and d.published = ${sql.raw(String(published))} and d.locale = ${rowLocale(r)} and (not q.phrase or to_tsvector(d.config, d.title) @@ q.tq) and (not q.excludes or d.doc @@ q.tq)) is true${filters}`;
  const cols = sql`d.node_id, d.type, ${fieldFacets ? sql`n.fields` : sql`null::jsonb as fields`}, ts_rank(${WEIGHTS}, d.head, q.tq) as score`;
  // The scope search_scoped puts before a row's lexemes; a locale holds none of `\`, `&` or `'`.
  const scope = `${published ? "" : "~"}${rowLocale(r)}:`.replace(/[\\&']/g, "");
  return sql`with q as (select t.tq, regexp_replace(case when t.excludes then t.text else regexp_replace(t.text, $re$<[0-9-]+>$re$, '&', 'g') end,
        $re$'((?:[^']|'')*)'$re$, ${`'${scope}\\1'`}, 'g')::tsquery as scoped, t.phrase, t.excludes
      from (select tq, tq::text as text, strpos(tq::text, '<') > 0 as phrase, strpos(tq::text, '!') > 0 as excludes from (select ${tq} as tq) x) t),${published ? sql` hidden as materialized (${hiddenIds(r.projectId)}),` : sql``}
    titles as materialized (select ${cols} ${titleFrom} limit ${MAX_HITS + 1}),
    hits as (
      select * from titles
      union all
      (select ${cols} ${from} and d.node_id not in (select t.node_id from titles t) limit (select ${MAX_HITS + 1} - count(*) from titles))
    ), page as (
      select * from hits order by score desc, node_id limit ${r.perPage} offset ${offset}
    )
    select (select count(*) from hits)::int as total${col === null ? sql`` : sql`, ${col} as collection_id`}${sql.join(facetCols, sql``)},
      p.node_id as id, sd.title, p.type, n.status, ${published ? sql`false` : sql`n.changed`} as changed, p.score::float8 as score,
      ${localPath(r, sql`p.node_id`, sql`n.path`)} as path,
      left(substr(sd.body, 1, ${SNIPPET_CHARS}) || E'\\n' || substr(sd.blocks, 1, ${SNIPPET_CHARS}), ${SNIPPET_CHARS}) as text, q.tq::text as tq
    from (select 1) one cross join q left join page p on true
      left join search_documents sd on sd.node_id = p.node_id and sd.published = ${sql.raw(String(published))} and sd.locale = ${rowLocale(r)}
      left join ${t.nodes} n on n.id = p.node_id
    order by p.score desc, p.node_id`;
}

type Row = {
  total: number;
  collection_id?: string | null;
  id: string | null;
  title: string;
  type: string;
  status: string;
  changed: boolean;
  score: number;
  path: string;
  /** The start of the hit's text (description, fields, blocks) and the query run, as text: what its snippet is made from. */
  text: string | null;
  tq: string;
} & Record<`facet_${number}`, Record<string, number> | string | null>;

/**
 * A locale's text-search configuration (`search_config`, migration 0017), read once per database and
 * locale (the configurations exist from the migration on), for the statement and the snippets: in the
 * statement it was a scan of the catalog with a 30-way CASE, run by every planning (0.5 ms a run).
 */
const configs = new WeakMap<Db, Map<string, Promise<string>>>();
function configOf(db: Db, locale: string): Promise<string> {
  let known = configs.get(db);
  if (!known) configs.set(db, (known = new Map()));
  let config = known.get(locale);
  if (!config) {
    config = db.execute(sql`select search_config(${locale})::text as c`).then((r) => String(rows<{ c: string }>(r)[0]?.c));
    config.catch(() => known.delete(locale));
    known.set(locale, config);
  }
  return config;
}

async function run(db: Db, r: SearchRequest, tq: SQL): Promise<{ rows: Row[]; total: number; noCollection: boolean }> {
  // Prepared (delivery/prepared.ts). PostgreSQL makes a custom plan for each search (1.6-2 ms of
  // planning on the bench); forced to keep the generic plan (plan_cache_mode, in the same round
  // trip), the 60 queries of bench/search took 6-10 % longer one at a time: left to choose.
  const found = await preparedRows<Row>(db, statement(r, tq));
  const first = found[0];
  return { rows: found, total: Number(first?.total ?? 0), noCollection: r.collection !== null && (first?.collection_id ?? null) === null };
}

function result(r: SearchRequest, config: string, found: Row[], total: number, fuzzy: boolean): SearchResult {
  const first = found[0];
  const facets =
    r.facets.length === 0
      ? null
      : Object.fromEntries(
          r.facets.map((f, i) => {
            const v = first?.[`facet_${i}`];
            const counts = typeof v === "string" ? (JSON.parse(v) as Record<string, number>) : (v ?? {});
            return [f.name === "type" && !("expression" in f) ? "type" : `field.${f.name}`, counts];
          }),
        );
  const terms = queryTerms(first?.tq ?? "");
  const hits: SearchHit[] = found.flatMap((x) =>
    x.id === null
      ? []
      : [
          {
            id: x.id,
            path: x.path,
            title: x.title,
            type: x.type,
            locale: r.locale,
            snippet: makeSnippet(x.text ?? "", terms, config),
            score: Math.round(Number(x.score) * 1e4) / 1e4,
            ...(r.version === "working" ? { status: x.status, changed: Boolean(x.changed) } : {}),
          },
        ],
  );
  // Past MAX_HITS the hits were not all counted: total is what was (a lower bound).
  return { hits, total, totalExact: total <= MAX_HITS, fuzzy, facets };
}

/** Words in the titles of the searched rows that are like `words` (trigrams over the title index): the typo fallback's candidates. */
async function titleWords(db: Db, r: SearchRequest, words: readonly string[]): Promise<string[]> {
  const t = tablesOf(r);
  return db.transaction(async (tx) => {
    // Looser than the default 0.6 for the candidates; typoCorrections keeps those one typo away.
    await tx.execute(sql`select set_config('pg_trgm.word_similarity_threshold', '0.3', true)`);
    const found = rows<{ w: string }>(
      await tx.execute(sql`select distinct w from unnest(${sqlArray(words, "text")}) q(word)
        cross join lateral (
          select d.title_folded from search_documents d join ${t.nodes} n on n.id = d.node_id
          where ${scope(r)} and d.title_folded %> search_fold(q.word) limit 50
        ) d cross join lateral regexp_split_to_table(d.title_folded, '[^[:alnum:]]+') w
        where length(w) >= 3`),
    );
    return found.map((x) => x.w);
  });
}

export function postgresDriver(db: Db): SearchDriver {
  return {
    async search(r) {
      // The working copies' rows of nodes written since the indexer last looked (./indexer.ts): indexed first.
      if (r.version === "working") await indexQueued(db, r.projectId);
      const parsed = parseQuery(r.q);
      const config = await configOf(db, r.locale);
      const exact = await run(db, r, tsquery(config, parsed, null));
      if (exact.noCollection) return { hits: [], total: 0, totalExact: true, fuzzy: false, facets: null, noCollection: true };
      if (exact.total > 0) return result(r, config, exact.rows, exact.total, false);
      // Nothing found: each word of TYPO_MIN_LETTERS letters or more may be one typo away from a title word…
      const alternatives = parsed.typoWords.length === 0 ? null : typoCorrections(parsed, await titleWords(db, r, parsed.typoWords));
      if (alternatives !== null) {
        const corrected = await run(db, r, tsquery(config, parsed, alternatives));
        if (corrected.total > 0) return result(r, config, corrected.rows, corrected.total, true);
      }
      // …and then any of several words will do (ranked by how many match), as a search engine relaxes a query.
      if (parsed.words.length < 2) return result(r, config, exact.rows, 0, false);
      const relaxed = await run(db, r, tsquery(config, parsed, alternatives, true));
      return result(r, config, relaxed.rows, relaxed.total, relaxed.total > 0);
    },
    async suggest(r, limit) {
      const q = cleanQuery(r.q).trim();
      if (q === "") return [];
      const letters = [...q].length;
      const t = tablesOf(r);
      // What was typed, folded as titles are (search_fold), once per statement: each use is a
      // parameter of the plan (an InitPlan), where a call in a row's condition or order ran
      // search_fold (an SQL function, parsed and planned anew on each statement) once per row.
      const folded = sql`(select f.typed from f)`;
      const published = r.version === "published";
      // Titles starting with what was typed, in order: a range of the prefix index (a range, not
      // LIKE, so that a prepared statement's generic plan uses the index too)…
      const startsWith = sql`d.title_folded ~>=~ ${folded} and d.title_folded ~<~ (select f.typed || chr(1114111) from f)`;
      // …then, from 3 letters (what the trigram index needs), titles holding it (a word starting
      // with it first)…
      const holds = sql`d.title_folded like (select f.holds from f)`;
      // …and only then, from 4 letters, titles a typo away (the costliest look-up: every title
      // sharing a few trigrams is checked), with a word similarity of SUGGEST_SIMILARITY (the
      // default, 0.6, misses one typo in a short word; set for this statement alone).
      const steps: { where: SQL; order: SQL; gate?: SQL }[] = [{ where: startsWith, order: sql`d.title_folded, d.node_id` }];
      if (letters >= 3) {
        steps.push({
          where: sql`not (${startsWith}) and ${holds}`,
          order: sql`d.title_folded like (select f.word from f) desc, word_similarity(${folded}, d.title_folded) desc, length(d.title), d.node_id`,
        });
      }
      if (letters >= TYPO_MIN_LETTERS) {
        steps.push({
          where: sql`not (${startsWith}) and not (${holds}) and d.title_folded %> ${folded}`,
          order: sql`word_similarity(${folded}, d.title_folded) desc, length(d.title), d.node_id`,
          gate: sql`(select set_config('pg_trgm.word_similarity_threshold', ${String(SUGGEST_SIMILARITY)}, true)) is not null`,
        });
      }
      // One statement: each step runs only when the steps before it found fewer than `limit` titles
      // (a condition on them alone, checked before the step's scan starts); the index rows alone
      // are read, and the node is joined for the (at most `limit`) answers' paths.
      const ctes = steps.map((step, i) => {
        const before = steps.slice(0, i).map((_, k) => sql`(select count(*) from ${sql.raw(`s${k}`)})`);
        const gates = [...(before.length === 0 ? [] : [sql`${sql.join(before, sql` + `)} < ${limit}`]), ...(step.gate ? [step.gate] : [])];
        return sql`${sql.raw(`s${i}`)} as materialized (select d.node_id as id, d.title, d.type, ${i}::int as step, row_number() over (order by ${step.order}) as rank
          from search_documents d
          where ${gates.length === 0 ? sql`` : sql`${sql.join(gates, sql` and `)} and `}d.project_id = ${r.projectId} and d.published = ${sql.raw(String(published))} and d.locale = ${rowLocale(r)}${published ? sql` and not exists (select 1 from hidden h where h.id = d.node_id)` : sql``}
            and ${step.where}
          order by ${step.order} limit ${limit})`;
      });
      const found = sql.join(
        steps.map((_, i) => sql`select * from ${sql.raw(`s${i}`)}`),
        sql` union all `,
      );
      return preparedRows<Suggestion>(
        db,
        sql`with f as materialized (select search_fold(${q}) as typed, search_fold(${`%${escapeLike(q)}%`}) as holds, search_fold(${`% ${escapeLike(q)}%`}) as word),
          ${published ? sql`hidden as materialized (${hiddenIds(r.projectId)}), ` : sql``}${sql.join(ctes, sql`, `)}
          select s.id, s.title, s.type, ${localPath(r, sql`s.id`, sql`n.path`)} as path from (${found}) s join ${t.nodes} n on n.id = s.id
          order by s.step, s.rank limit ${limit}`,
      );
    },
  };
}
