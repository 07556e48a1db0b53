import { AppError } from "../errors";
import { MAX_PAGE } from "../lib/paging";

// Delivery routes validate their own query strings (no Elysia schema), so that every answer,
// errors included, is built here with its CORS, ETag and Cache-Control headers. These OpenAPI
// fragments document them for Swagger.

type Param = { name: string; in: "query" | "path"; required?: boolean; description: string; schema: Record<string, unknown> };

const STRING = { type: "string" };
const query = (name: string, description: string, schema: Record<string, unknown> = STRING): Param => ({ name, in: "query", description, schema });
const path = (name: string, description: string, schema: Record<string, unknown> = STRING): Param => ({ name, in: "path", required: true, description, schema });
const UUID = { type: "string", format: "uuid" };
const locale = query("locale", "one of the project's locales (BCP 47, case-insensitive); default: the project's default_locale");
const fallback = query(
  "fallback",
  "none: only what the locale has (404 without a published translation in it; the fields it lacks left out, title null, named in missing). Left out (or empty): a field the locale lacks comes from its fallback chain (the project's fallbacks, else RFC 4647 lookup: de-AT → de → the default locale) and is named in fallback. Other values: 400 invalid_request",
  { type: "string", enum: ["none"] },
);

const renderable =
  "{ data: renderable node }: id, parent_id, slug, type, title, locale, path, fields (locale overrides merged; node references as { id, path, title, type } or null), blocks[{id, type, order, data}] (locale overrides merged), " +
  "seo{canonical, robots, og, twitter, hreflang[{locale, href}], jsonld, breadcrumbs[{title, path, href}]}, translated; " +
  'fallback: { "<pointer>": "<locale>" } naming each field taken from another locale along the locale\'s fallback chain, the base content\'s with the default locale (only when one was; never in the default locale); ' +
  "with ?fallback=none, missing: [pointer] naming the fields the locale lacks (left out of the answer)";
const nodeResponses = { 200: renderable, 400: "invalid_locale, invalid_request (fallback)", 401: "preview_token_invalid, preview_token_expired (a preview read only)", 404: "not_found" };
/** The routes that serve previews. */
const preview = query(
  "preview",
  "a preview token (cms_pv_…), for iframes; or send it as Authorization: Bearer. The answer is then the latest content (drafts, draft translations, scheduled nodes), Cache-Control: private, no-store, never cached",
);

/** `responses` by status: their descriptions. */
function doc(summary: string, description: string, parameters: Param[], responses: Record<number, string>) {
  return {
    tags: ["delivery"],
    summary,
    description: `${description} Anonymous; CORS open; strong ETag with If-None-Match → 304; Cache-Control from DELIVERY_CACHE_CONTROL (errors: DELIVERY_ERROR_CACHE_CONTROL).`,
    security: [],
    parameters: [path("ref", "project id or slug"), ...parameters],
    responses: Object.fromEntries(Object.entries({ ...responses, 304: "Not modified (If-None-Match matched the ETag)" }).map(([status, d]) => [status, { description: d }])),
  };
}

export const DeliveryDocs = {
  byPath: doc(
    "Published node by slug path",
    "The rest of the path after by-path/ is the node's slug path in the requested locale (localised slugs apply). An empty path is 404.",
    [path("path", "slug path, e.g. blog/hello-world"), locale, fallback, preview],
    nodeResponses,
  ),
  byId: doc("Published node by id", "Same renderable node, resolved by id.", [path("id", "node id", UUID), locale, fallback, preview], nodeResponses),
  list: doc(
    "All published nodes (raw rows)",
    "{ data: [row] }, rows are the node's own columns without blocks, with fields (references expanded, default locale), in path order; streamed.",
    [preview],
    {
      200: "{ data: [raw node row] }",
      401: "preview_token_invalid, preview_token_expired",
      404: "Error body: { error: { code, message, details? } }",
    },
  ),
  entries: doc(
    "Entries of a collection",
    "Published children of the collection node at the given slug path. sort: updated_at, -updated_at (default), title, -title, created_at, -created_at, position, or field.<name> / -field.<name> for a field marked index: true in the content model; ties broken by id. Field filters: field.<name>=v, field.<name>[in]=a,b, field.<name>[gt|gte|lt|lte]=v (numbers and date-times).",
    [
      { ...query("collection", "slug path of a node of type collection"), required: true },
      query("page", `page number, from 1 to ${MAX_PAGE} (default 1)`, { type: "integer", minimum: 1, maximum: MAX_PAGE }),
      query("per_page", "1..100 (default 20; above 100 is clamped)", { type: "integer", minimum: 1 }),
      query("q", "case-insensitive substring of title or slug", { type: "string", maxLength: 200 }),
      query("sort", "sort key; - prefix for descending; field.<name> for an indexed field"),
      query("field.{name}", "filter by an indexed field: field.<name>=v, field.<name>[in]=a,b, field.<name>[gt|gte|lt|lte]=v (repeatable for different fields, at most 10)"),
      preview,
    ],
    {
      200: "{ data: [{ id, slug, title, path, updated_at }], total, page, per_page }",
      400: "missing_parameter, invalid_request (details.field names the parameter), invalid_sort",
      401: "preview_token_invalid, preview_token_expired",
      404: "not_found (unknown or unpublished collection)",
    },
  ),
  translation: doc(
    "Published node merged with a locale's translation",
    "The renderable node in that locale; 404 when the locale has no published translation of it (a chain locale's does not stand in). What the translation lacks falls back along the locale's chain, as on the node reads.",
    [path("nodeId", "node id", UUID), { ...locale, required: true, description: "a non-default project locale" }, fallback, preview],
    { 200: renderable, 400: "missing_parameter, invalid_locale, invalid_request (fallback)", 401: "preview_token_invalid, preview_token_expired", 404: "not_found" },
  ),
  sitemap: doc(
    "Sitemap",
    "A urlset (one <url> per indexable node version: published, default locale or published translation, not noindex, canonical to itself; with its hreflang set as xhtml:link alternates), or a sitemapindex of {public_base_url}/sitemap-{n}.xml shards above 5,000 nodes or when one file would pass 50,000 URLs or 45 MiB.",
    [],
    { 200: "application/xml", 404: "sitemap_unavailable (no public_base_url)" },
  ),
  shard: doc("Sitemap shard", "The n-th shard (path order; at most 5,000 nodes, 50,000 URLs, 45 MiB) as a urlset; past the end → 404.", [path("file", "sitemap-{n}.xml")], {
    200: "application/xml",
    404: "not_found, sitemap_unavailable",
  }),
  robots: doc("robots.txt", "User-agent: * / Allow: /, plus a Sitemap line when public_base_url is set.", [], { 200: "text/plain" }),
  theme: doc("Tenant brand", "The bare object { logo_url, favicon_url, accent_color, name_override }.", [], { 200: "{ logo_url, favicon_url, accent_color, name_override }" }),
};

/** Swagger leaves wildcard routes out, so the by-path route is described here (merged in app.ts). */
export const DELIVERY_OPENAPI_PATHS = {
  "/api/p/{ref}/nodes/by-path/{path}": { get: DeliveryDocs.byPath },
};

/** The query string of a request (parsed here: Elysia collapses repeated parameters). */
export function queryOf(request: Request): URLSearchParams {
  const url = request.url;
  const q = url.indexOf("?");
  if (q < 0) return EMPTY;
  const hash = url.indexOf("#", q);
  return new URLSearchParams(hash < 0 ? url.slice(q + 1) : url.slice(q + 1, hash));
}
const EMPTY = new URLSearchParams();

/** One query parameter as a string; a repeated parameter is ambiguous and refused. */
export function queryParam(query: URLSearchParams, name: string): string | undefined {
  const all = query.getAll(name);
  if (all.length > 1) throw new AppError("invalid_request", `${name} must be given once`, { field: name });
  return all[0];
}
