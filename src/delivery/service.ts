// Delivery reads: published versions only (published_nodes, published_blocks,
// published_translations; src/content/publish.ts), each cold read in one SQL statement. A preview
// reads the working copies (nodes, blocks, translations) with the same statements.
//
// Visibility rule: a node is delivered only when it is `published` AND every ancestor is
// `published` too. A published child of a draft or archived node is invisible on every delivery
// endpoint (by-path, by-id, translations, node list, entries, sitemap), because its URL path runs
// through a page that does not exist publicly; it reappears, unchanged, when the ancestor is
// published again. Invisible and other projects' nodes answer exactly like ids that never existed.
//
// Localised slugs: a published translation's meta.slug replaces the node's slug in that locale; a
// node's path in a locale is built from each ancestor's localised slug (falling back to its base
// slug). In a non-default locale by-path resolves only the localised path (the base path of a
// translated node is not an alias), so every page has one URL per locale. Two siblings claiming the
// same localised slug resolve deterministically: an explicit translated slug beats a base slug,
// then the older node (smaller UUIDv7) wins.
import { and, asc, eq, getTableColumns, gt, ne, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { nodes, publishedNodes } from "../../db/schema";
import { ENTRY_SORTS, type EntrySort } from "../content/model";
import { type NodeWire, nodeToWire } from "../content/service";
import { AppError, notFound } from "../errors";
import { isUuid } from "../lib/ids";
import { rows } from "../lib/json";
import { canonicalLocale } from "../lib/locales";
import { readPaging } from "../lib/paging";
import { escapeLike } from "../lib/sql";
import { seoMediaId } from "../media/seo-image";
import { compiledModel } from "../model/cache";
import type { CompiledModel } from "../model/compile";
import { type FieldFilter, fieldOrder, fieldSortName, filterConditions } from "../model/field-filters";
import { ensureFieldFunctions } from "../model/indexes";
import { pathWatch, REF_WATCH, watchKey } from "../write/answers";
import type { DeliveryProject } from "./cache";
import { expandRefs, type NodeRef, type RefPaths, refPaths, refsColumn, seoMediaColumn } from "./fields";
import { preparedRows } from "./prepared";
import { type ChainNode, type RenderableNode, renderNode } from "./render";
import type { AnswerDeps } from "./stored";
import { PUBLISHED, type Version, versionOf } from "./version";

const MAX_DEPTH = 64;

const MAX_PATH_CHARS = 2048;
export const iso = (col: string): SQL => sql.raw(`to_char(${col} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);

/** The project's spelling of `locale` (omitted = default), or 400 invalid_locale. */
export function deliveryLocale(project: DeliveryProject, locale: string | undefined): string {
  if (locale === undefined || locale === "") return project.defaultLocale;
  if (project.locales.includes(locale)) return locale;
  const c = canonicalLocale(locale);
  const match = c ? project.locales.find((l) => l.toLowerCase() === c.toLowerCase()) : undefined;
  if (!match) throw new AppError("invalid_locale", `locale "${locale.slice(0, 40)}" is not one of this project's locales (${project.locales.join(", ")})`, { field: "locale" });
  return match;
}

/** Slug segments of a by-path request, or null when it cannot name a node (empty, `a//b`, too long). */
export function pathSegments(raw: string): string[] | null {
  let path: string;
  try {
    path = decodeURIComponent(raw).replace(/^\/+|\/+$/g, "");
  } catch {
    return null;
  }
  const segs = path.split("/");
  return path === "" || path.length > MAX_PATH_CHARS || segs.length > MAX_DEPTH || segs.includes("") ? null : segs;
}

/** How a value enters a delivery statement: as a parameter, or hidden from the planner (see chainQuery). */
type Param = (value: string | number, type: "uuid" | "text" | "int") => string | number | SQL;
const asParam: Param = (value) => value;
const hiddenParam = (value: string | number, type: "uuid" | "text" | "int"): SQL => sql`(select ${value}::${sql.raw(type)})`;

/** The locale's fallback chain before the default locale (fallback.ts): null for the default locale, a locale that falls back to it alone, and ?fallback=none. */
const fallbacksOf = (project: DeliveryProject, locale: string, none: boolean): readonly string[] | null => (none ? null : (project.fallbacks?.[locale] ?? null));

/**
 * The node's ancestor chain with its blocks and translations, in one statement. `start` selects
 * the node (by id or base path); `walk` is the CTE resolving a localised path, when used.
 *
 * Run prepared (./prepared.ts). The locale appears only in an aggregate FILTER, never in an index
 * condition, so PostgreSQL's generic plan costs what a custom one does and is chosen after five
 * executions: planning drops from ~0.19 ms to ~0.01 ms per read (a `t.locale = $n` lookup made the
 * generic plan look dearer, and every read was planned again).
 *
 * With a fallback chain the statement is another text, with a plan cache of its own, and its
 * values in index conditions (project, path, locale of the walk, node id) are hidden from the
 * planner (`(select $n::type)`): a custom plan then costs what the generic one does, which is kept.
 * Plain parameters let the first five chained reads decide, and a small project or a locale
 * without translated slugs made every custom plan look cheaper: each chained miss was planned
 * again (~0.55 ms of PostgreSQL CPU; the walk of the unchained statement has the same trait, see
 * bench/README.md "Fallback chains").
 */
function chainQuery(project: DeliveryProject, locale: string, start: SQL, walk: SQL | null, refs: RefPaths | null, preview: boolean, fallbacks: readonly string[] | null): SQL {
  const v = versionOf(preview);
  const projectId = fallbacks === null ? project.id : hiddenParam(project.id, "uuid");
  // A locale with a fallback chain (fallback.ts) reads the chain's translations of the node in the
  // same aggregate as its own: another FILTER, no other statement. Without one, nothing changes.
  const inChain = fallbacks === null ? null : sql`t.locale = any(string_to_array(${fallbacks.join(" ")}, ' ')) and c.depth = 0`;
  const chainAggs =
    inChain === null ? sql`` : sql`, jsonb_object_agg(t.locale, t.blocks) filter (where ${inChain}) as chain_blocks, jsonb_object_agg(t.locale, t.fields) filter (where ${inChain}) as chain_fields`;
  const chainRefs =
    inChain === null
      ? sql``
      : sql` union all select 'n', c.type, cf.value from jsonb_each(tt.chain_fields) cf
            union all select 'b', b.type, o.value from jsonb_each(tt.chain_blocks) cb
              cross join lateral jsonb_each(case when jsonb_typeof(cb.value) = 'object' then cb.value end) o
              join ${v.blocks} b on b.id::text = o.key and b.node_id = c.id`;
  // References in the node's fields, its blocks and the locale's (and its chain's) overrides of both (see fields.ts).
  const refsCol =
    refs === null
      ? sql``
      : sql`, case when c.depth = 0 then ${refsColumn(
          projectId,
          locale === project.defaultLocale ? "" : locale,
          refs,
          sql`select 'n', c.type, c.fields union all select 'n', c.type, tt.field_overrides
            union all select 'b', b.type, b.data from ${v.blocks} b where b.node_id = c.id
            union all select 'b', b.type, o.value from ${v.blocks} b join jsonb_each(case when jsonb_typeof(tt.overrides) = 'object' then tt.overrides end) o on o.key = b.id::text where b.node_id = c.id${chainRefs}`,
          fallbacks,
        )} end as refs`;
  // A preview reads the node's revision too, and translations in every status.
  const rev = (alias: string): SQL => (preview ? sql.raw(`, ${alias}.revision`) : sql``);
  return sql`with recursive ${walk ?? sql``} chain as (
    select n.id, n.parent_id, n.slug, n.path, n.type, n.title, n.status, n.seo, n.fields, n.published_at, n.updated_at, 0 as depth${rev("n")}
    from ${v.nodes} n where n.project_id = ${projectId} and ${start}
    union all
    select a.id, a.parent_id, a.slug, a.path, a.type, a.title, a.status, a.seo, null::jsonb, a.published_at, a.updated_at, c.depth + 1${rev("a")}
    from chain c join ${v.nodes} a on a.id = c.parent_id
    where a.project_id = ${projectId} and c.depth < ${sql.raw(String(MAX_DEPTH))}
  )
  select c.id, c.parent_id, c.slug, c.path, c.type, c.title, c.status, c.seo, c.fields, c.depth${rev("c")},
    ${iso("c.published_at")} as published_at, ${iso("c.updated_at")} as updated_at, tt.tr,
    case when c.depth = 0 then (select json_agg(json_build_object('id', b.id, 'type', b.type, 'order', b."order", 'data', b.data)
                                        order by b."order", b.id) from ${v.blocks} b where b.node_id = c.id) end as blocks,
    tt.overrides, tt.field_overrides${inChain === null ? sql`` : sql`, tt.chain_blocks, tt.chain_fields`}${refsCol}
  from chain c left join lateral (
    select coalesce(json_object_agg(t.locale, t.meta), '{}'::json) as tr,
      (array_agg(t.blocks) filter (where t.locale = ${locale} and c.depth = 0))[1] as overrides,
      (array_agg(t.fields) filter (where t.locale = ${locale} and c.depth = 0))[1] as field_overrides${chainAggs}
    from ${v.translations} t where t.node_id = c.id${preview ? sql`` : sql` and t.status = 'published'`}
  ) tt on true
  order by c.depth desc`;
}

/**
 * Walks a localised path down from the roots: at each level a child matches by its published
 * translation's slug in `locale`, or by its base slug when that translation sets no slug.
 */
function walkQuery(project: string, language: string, segs: string[], preview: boolean, p: Param = asParam): SQL {
  const projectId = p(project, "uuid");
  const locale = p(language, "text");
  const path = p(segs.join("/"), "text");
  const v = versionOf(preview);
  const live = preview ? sql`n.status <> 'archived'` : sql`n.status = 'published'`;
  const trLive = preview ? sql`true` : sql`t.status = 'published'`;
  const seg = sql`(string_to_array(${path}, '/'))[w.depth + 1]`;
  return sql`walk(id, path, depth, rank) as (
    select null::uuid, ''::text, 0, ''::text
    union all
    select x.id, x.path, w.depth + 1, w.rank || x.r
    from walk w cross join lateral (
      select n.id, n.path, '1'::text as r from ${v.nodes} n
      where n.project_id = ${projectId} and ${live}
        and n.path = (case when w.depth = 0 then '' else w.path || '/' end) || ${seg}
        and not exists (select 1 from ${v.translations} t where t.node_id = n.id and t.locale = ${locale}
                        and ${trLive} and coalesce(t.meta->>'slug', '') <> '')
      union all
      select n.id, n.path, '0'::text from ${v.translations} t join ${v.nodes} n on n.id = t.node_id
      where t.project_id = ${projectId} and t.locale = ${locale} and ${trLive} and t.meta->>'slug' = ${seg}
        and n.project_id = ${projectId} and ${live} and n.parent_id is not distinct from w.id
    ) x
    where w.depth < ${p(segs.length, "int")}
  ),`;
}

/**
 * The renderable node whose chain `start` and `walk` select (see chainQuery); 404 unless the whole
 * chain is published. A preview shows drafts and draft translations too (archived
 * nodes stay hidden), and says so: `preview: true` and the node's `revision`.
 */
async function renderChain(
  db: Db,
  project: DeliveryProject,
  locale: string,
  start: SQL,
  walk: SQL | null,
  preview: boolean,
  none: boolean,
  fallbacks: readonly string[] | null,
): Promise<RenderableNode> {
  const model = await deliveryModel(db, project);
  const refs = refPaths(model);
  const chain = await preparedRows<ChainNode & { revision?: number }>(db, chainQuery(project, locale, start, walk, refs, preview, fallbacks));
  if (chain[0]?.parent_id !== null || chain.some((c) => (preview ? c.status === "archived" : c.status !== "published"))) throw notFound("node");
  // Only what the locale has: a node without its translation in that locale has nothing to show.
  if (none && locale !== project.defaultLocale && chain[chain.length - 1]?.tr[locale] === undefined) throw notFound("translation");
  await readSeoMedia(db, project.id, chain[chain.length - 1], locale);
  // Every locale but the default one names what it lacks (from its chain, else the base content): the default locale has it all.
  const rendered = renderNode(project, chain, locale, refs, locale === project.defaultLocale && !none ? null : { chain: fallbacks ?? [], none, model });
  const node = preview ? { ...rendered, status: chain[chain.length - 1]?.status, preview: true, revision: Number(chain[chain.length - 1]?.revision ?? 0) } : rendered;
  const basePath = chain[chain.length - 1]?.path ?? "";
  basePaths.set(node, basePath);
  if (!preview) answerDeps.set(node, dependencies(project.id, chain, basePath, refs !== null));
  return node;
}

/**
 * What the answer of a node shows (stored.ts, write/answers.ts): the node and its ancestors, the
 * nodes and media it references (as read), its path's prefixes, and, when the model declares
 * references, REF_WATCH (a reference not shown may be shown after a page is brought).
 */
function dependencies(projectId: string, chain: readonly ChainNode[], basePath: string, refs: boolean): AnswerDeps {
  const deps = chain.map((c) => c.id);
  const targets = chain[chain.length - 1]?.refs;
  if (targets) for (const id of Object.keys(targets)) deps.push(id);
  const watch = pathWatch(projectId, basePath);
  if (refs) watch.push(watchKey(projectId, REF_WATCH));
  return { deps, watch };
}

/**
 * A node whose SEO image (its own, or its translation's in `locale`) names a media item gets the
 * item read (seo_media), in a statement of its own: most nodes name none, and a column of the
 * chain's statement would cost every read its planning (about 15 % of an embedded miss).
 */
async function readSeoMedia(db: Db, projectId: string, node: ChainNode | undefined, locale: string): Promise<void> {
  if (!node) return;
  const ids = [seoMediaId(node.seo?.og_image), seoMediaId(node.tr?.[locale]?.og_image)].filter((id) => id !== null);
  if (ids.length === 0) return;
  const [row] = rows<{ seo_media: ChainNode["seo_media"] }>(
    await db.execute(
      sql`select ${seoMediaColumn(
        projectId,
        sql`values ${sql.join(
          ids.map((id) => sql`(${id})`),
          sql`, `,
        )}`,
      )} as seo_media`,
    ),
  );
  node.seo_media = row?.seo_media ?? null;
}

const answerDeps = new WeakMap<RenderableNode, AnswerDeps>();
/** What a rendered node's answer shows, for storing it (stored.ts); undefined for a preview. */
export const dependenciesOf = (node: RenderableNode): AnswerDeps | undefined => answerDeps.get(node);

const basePaths = new WeakMap<RenderableNode, string>();
/** The node's path in the default locale (a rendered node's own path is localised): the scope of its answers. */
export const basePathOf = (node: RenderableNode): string | undefined => basePaths.get(node);

/** The node at these slug segments (pathSegments) in `locale`; `none`: ?fallback=none (only what the locale has). */
export async function getNodeByPath(db: Db, project: DeliveryProject, segs: string[], locale: string, preview = false, none = false): Promise<RenderableNode> {
  if (locale === project.defaultLocale) return renderChain(db, project, locale, sql`n.path = ${segs.join("/")}`, null, preview, none, null);
  const fallbacks = fallbacksOf(project, locale, none);
  const p = fallbacks === null ? asParam : hiddenParam;
  const start = sql`n.id = (select id from walk where depth = ${p(segs.length, "int")} order by rank, id limit 1)`;
  return renderChain(db, project, locale, start, walkQuery(project.id, locale, segs, preview, p), preview, none, fallbacks);
}

export async function getNodeById(db: Db, project: DeliveryProject, id: string, locale: string, preview = false, none = false): Promise<RenderableNode> {
  if (!isUuid(id)) throw notFound("node");
  const fallbacks = fallbacksOf(project, locale, none);
  return renderChain(db, project, locale, sql`n.id = ${fallbacks === null ? id.toLowerCase() : hiddenParam(id.toLowerCase(), "uuid")}`, null, preview, none, fallbacks);
}

/** The project's content model at the version delivery read with the project (compiled once per version); null without one. */
export async function deliveryModel(db: Db, project: DeliveryProject): Promise<CompiledModel | null> {
  // No model, nothing to compile: a project without one costs no validator instance here.
  return project.modelVersion ? compiledModel(db, project.id, project.modelVersion) : null;
}

// ---- visibility in bulk (node list, sitemap) ----

/**
 * Path prefixes ("a/b/") that hide published descendants: drafts and archived nodes with a
 * published child. Usually empty or tiny, so page queries filter with one LIKE ANY.
 */
export async function hiddenPrefixes(db: Db, projectId: string, preview = false): Promise<string[]> {
  // A preview hides only what is archived (and below it).
  const hiding = preview ? sql`h.status = 'archived'` : sql`h.status in ('draft', 'archived')`;
  const shown = preview ? sql`c.status <> 'archived'` : sql`c.status = 'published'`;
  const v = versionOf(preview);
  const found = rows<{ path: string }>(
    await db.execute(sql`select h.path from ${v.nodes} h
      where h.project_id = ${projectId} and ${hiding}
        and exists (select 1 from ${v.nodes} c where c.parent_id = h.id and ${shown})
      order by h.path`),
  )
    .map((r) => `${r.path}/`)
    .sort();
  // Sorted, the paths under a kept prefix follow it directly: the last kept one is the only candidate.
  const kept: string[] = [];
  for (const p of found) if (!p.startsWith(kept.at(-1) ?? "\0")) kept.push(p);
  return kept;
}

/** SQL condition: the node is published and no ancestor hides it. */
export function visibleCondition(projectId: string, hidden: string[], preview = false): SQL {
  const t = versionOf(preview).table;
  // biome-ignore lint/style/noNonNullAssertion: and() is undefined only when every condition is
  const base = and(eq(t.projectId, projectId), preview ? ne(t.status, "archived") : eq(t.status, "published"))!;
  if (hidden.length === 0) return base;
  const patterns = hidden.map((h) => `${escapeLike(h)}%`).join("\n");
  // biome-ignore lint/style/noNonNullAssertion: and() is undefined only when every condition is
  return and(base, sql`not (${t.path} like any (string_to_array(${patterns}, E'\\n')))`)!;
}

/**
 * Rows in path order after `after` (null: from the start), at most `pageSize` per query (keyset on
 * path): `read(where)` runs the page query with `cond` and the paths after the last one read.
 */
export async function* pathPages<T extends { path: string }>(
  cond: SQL,
  after: string | null,
  pageSize: number,
  read: (where: SQL) => Promise<T[]>,
  table: Version["table"] = PUBLISHED.table,
): AsyncGenerator<T[]> {
  for (;;) {
    // biome-ignore lint/style/noNonNullAssertion: and() is undefined only when every condition is
    const page = await read(after === null ? cond : and(cond, gt(table.path, after))!);
    const last = page[page.length - 1];
    if (last === undefined) return;
    yield page;
    if (page.length < pageSize) return;
    after = last.path;
  }
}

/**
 * Every visible node as a raw row (admin wire form) with its `fields` (references expanded, in the
 * default locale), in path order, `pageSize` rows per query.
 */
export async function* listPublishedNodes(db: Db, project: DeliveryProject, pageSize = 500, preview = false): AsyncGenerator<(Omit<NodeWire, "state"> & { fields: Record<string, unknown> })[]> {
  const refs = refPaths(await deliveryModel(db, project));
  const visible = visibleCondition(project.id, await hiddenPrefixes(db, project.id, preview), preview);
  const t = versionOf(preview).table;
  const targets = refs === null ? sql<null>`null` : sql<Record<string, NodeRef>>`${refsColumn(project.id, "", refs, sql`select 'n', ${t.type}, ${t.fields}`)}`;
  const read = (where: SQL) =>
    (t === nodes ? db.select({ ...getTableColumns(nodes), refs: targets }).from(nodes) : db.select({ ...getTableColumns(publishedNodes), refs: targets }).from(publishedNodes))
      .where(where)
      .orderBy(asc(t.path))
      .limit(pageSize);
  for await (const page of pathPages(visible, null, pageSize, read, t)) {
    // The rows as they always were: a reader has no use for the working copy's state.
    yield page.map(({ refs: found, ...n }) => {
      const { state: _state, ...wire } = nodeToWire(n);
      return { ...wire, fields: refs === null ? n.fields : expandRefs(n.fields, refs.nodes.get(n.type), found ?? {}, { project, locale: "" }) };
    });
  }
}

// ---- entries ----

/** The ORDER BY of a sort key; the id tie-breaker makes the order total, so no entry can appear on two pages. */
function entriesOrder(sort: EntrySort): SQL {
  const dir = sort.startsWith("-") ? "desc" : "asc";
  return sql.raw(`e.${sort.replace("-", "")} ${dir}, e.id ${dir}`);
}

type EntriesInput = Record<"collection" | "page" | "per_page" | "q" | "sort", string | undefined> & { filters?: FieldFilter[] };
export type EntriesQuery = ReturnType<typeof entriesQuery>;

/** Validated, normalised entries query (also the cache key's source); a collection path that names no node → 404. */
export function entriesQuery(input: EntriesInput) {
  if (input.collection === undefined || input.collection.trim() === "") {
    throw new AppError("missing_parameter", "collection is required (the collection's slug path)", { field: "collection" });
  }
  // The shared paging bound; per_page above 100 is clamped, however large (decisions.md).
  const { page, perPage } = readPaging(input, { defaultPerPage: 20, clampPerPage: true });
  const sort = input.sort === undefined || input.sort === "" ? "-updated_at" : input.sort;
  // field.<name> sorts are checked against the content model when the list is read (entries.ts).
  if (!(ENTRY_SORTS as readonly string[]).includes(sort) && fieldSortName(sort) === null) {
    throw new AppError("invalid_sort", `sort must be one of ${ENTRY_SORTS.join(", ")}, or field.<name> / -field.<name> for an indexed field`, { field: "sort", allowed: ENTRY_SORTS });
  }
  const q = input.q?.trim() ?? "";
  if (q.length > 200) throw new AppError("invalid_request", "q must be at most 200 characters", { field: "q" });
  const segs = pathSegments(input.collection);
  if (!segs) throw notFound("collection");
  return { collection: segs.join("/"), page, perPage, q: q === "" ? null : q, sort: sort as EntrySort | `${"" | "-"}field.${string}`, filters: input.filters ?? [] };
}

/** The one statement of an entries page (exported for the EXPLAIN test); 400 for a filter or sort the model does not allow. */
export async function entriesStatement(db: Db, project: DeliveryProject, input: EntriesQuery, preview = false): Promise<SQL> {
  const v = versionOf(preview);
  const hiding = preview ? sql`x.status = 'archived'` : sql`x.status <> 'published'`;
  const live = preview ? sql`e.status <> 'archived'` : sql`e.status = 'published'`;
  // A preview's entries say which are drafts.
  const status = preview ? sql`, e.status` : sql``;
  const q = input.q === null ? sql`` : sql`and (e.title ilike ${`%${escapeLike(input.q)}%`} or e.slug ilike ${`%${escapeLike(input.q)}%`})`;
  let match = q;
  // The entries' parent: the visible collection, found by the statement itself (one round trip)...
  let parent = sql`(select id from col)`;
  const byField = fieldSortName(input.sort) !== null;
  let order = byField ? null : entriesOrder(input.sort as EntrySort);
  const model = await deliveryModel(db, project);
  // Each entry's fields, references expanded as on a node read (in the same statement).
  const refs = refPaths(model);
  const targets = refs === null ? sql`null` : refsColumn(project.id, "", refs, sql`select 'n', e.type, e.fields`);
  if (byField || input.filters.length > 0) {
    const filtered = filterConditions(model, input.filters);
    const sorted = byField ? fieldOrder(model, input.sort) : null;
    if (sorted) order = sorted.order;
    if ([...filtered.fields, ...(sorted ? [sorted.field] : [])].some((f) => f.kind === "date")) await ensureFieldFunctions(db);
    // The project: the first column of the shared field indexes (model/indexes.ts), before the
    // parent, the status and the field's expression, so the index gives the order of the page.
    match = sql`${q} and e.project_id = ${project.id}${filtered.where}`;
    // ...or, by field, found first and written as a literal: against a parameter the planner
    // guesses how many entries a collection has from the number of parents in the table, and
    // with a category's tenth guessed as a few rows it sorted the whole category by date (50 ms)
    // rather than walk the date index (3 ms). The statement still checks that this collection is
    // the visible one, in its own snapshot.
    const found = rows<{ id: string }>(await db.execute(sql`${collectionChain(project, input, hiding, v)} select id from col`))[0];
    if (!found) throw notFound("collection");
    parent = sql.raw(`'${found.id}'::uuid`);
    match = sql`${match} and exists (select 1 from col where col.id = ${parent})`;
  }
  if (order === null) throw new Error("a field sort without its order");
  return sql`${collectionChain(project, input, hiding, v)}
    select (select id from col) as collection_id,
      (select count(*) from ${v.nodes} e where e.parent_id = ${parent} and ${live} ${match})::int as total,
      e.id, e.slug, e.title, e.path, ${iso("e.updated_at")} as updated_at, e.type, e.fields, ${targets} as refs${status}
    from (select 1) one left join lateral (
      select e.id, e.slug, e.title, e.path, e.updated_at, e.created_at, e.position, e.type, e.fields${status} from ${v.nodes} e
      where e.parent_id = ${parent} and ${live} ${match}
      order by ${order}
      limit ${input.perPage} offset ${Math.min((input.page - 1) * input.perPage, Number.MAX_SAFE_INTEGER)}
    ) e on true
    order by ${order}`;
}

/** `col`: the id of the collection at `input.collection` when it and every ancestor are published (else no row; `hiding`: what hides it). */
const collectionChain = (project: DeliveryProject, input: EntriesQuery, hiding: SQL, v: Version): SQL => sql`with recursive chain as (
      select n.id, n.parent_id, n.status, n.type, 0 as depth from ${v.nodes} n
      where n.project_id = ${project.id} and n.path = ${input.collection}
      union all
      select a.id, a.parent_id, a.status, a.type, c.depth + 1 from chain c join ${v.nodes} a on a.id = c.parent_id
      where a.project_id = ${project.id} and c.depth < ${sql.raw(String(MAX_DEPTH))}
    ), col as (
      select c.id from chain c where c.depth = 0 and c.type = 'collection'
        and not exists (select 1 from chain x where ${hiding})
        and exists (select 1 from chain x where x.parent_id is null)
    )`;

/** An entry's fields as delivered: references expanded to their published targets, or null. */
const entryFields = (r: { type: string; fields: Record<string, unknown> | null; refs: Record<string, NodeRef> | null }, refs: RefPaths | null, project: DeliveryProject): Record<string, unknown> =>
  refs === null ? (r.fields ?? {}) : expandRefs(r.fields ?? {}, refs.nodes.get(r.type), r.refs ?? {}, { project, locale: "" });

/** A page of a visible collection's published children; unknown or invisible collection → 404. */
export async function listEntries(db: Db, project: DeliveryProject, input: EntriesQuery, preview = false) {
  type Row = {
    collection_id: string | null;
    total: number;
    id: string | null;
    slug: string;
    title: string;
    path: string;
    updated_at: string;
    type: string;
    fields: Record<string, unknown>;
    refs: Record<string, NodeRef> | null;
    status?: string;
  };
  const statement = await entriesStatement(db, project, input, preview);
  const refs = refPaths(await deliveryModel(db, project));
  // By field: planned for its values each time (~0.5 ms). A prepared statement's generic plan knows
  // neither the filter's value nor the page size, and chose to sort a whole category by date
  // (80 ms on the bench) over walking the date index backwards (3 ms).
  const byField = input.filters.length > 0 || fieldSortName(input.sort) !== null;
  const result = byField ? rows<Row>(await db.execute(statement)) : await preparedRows<Row>(db, statement);
  const first = result[0];
  if (!first || first.collection_id === null) throw notFound("collection");
  return {
    data: result.flatMap((r) =>
      r.id === null ? [] : [{ id: r.id, slug: r.slug, title: r.title, path: r.path, updated_at: r.updated_at, fields: entryFields(r, refs, project), ...(preview ? { status: r.status } : {}) }],
    ),
    total: Number(first.total),
    page: input.page,
    per_page: input.perPage,
  };
}
