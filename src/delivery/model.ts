import { AppError } from "../errors";
import { MAX_PAGE } from "../lib/paging";

// Delivery routes validate their own query strings (no Elysia schema), so that every answer,
// errors included, is built here with its CORS, ETag and Cache-Control headers. These OpenAPI
// fragments document them for Swagger.

type Param = { name: string; in: "query" | "path"; required?: boolean; description: string; schema: Record<string, unknown> };

const ref: Param = { name: "ref", in: "path", required: true, description: "project id or slug", schema: { type: "string" } };
const locale: Param = {
  name: "locale",
  in: "query",
  description: "one of the project's locales (BCP 47, case-insensitive); default: the project's default_locale",
  schema: { type: "string" },
};

const error = { description: "Error body: { error: { code, message, details? } }" };

const renderable = {
  description:
    "{ data: renderable node }: id, parent_id, slug, type, title, locale, path, blocks[{id, type, order, data}] (locale overrides merged), " +
    "seo{canonical, robots, og, twitter, hreflang[{locale, href}], jsonld, breadcrumbs[{title, path, href}]}, translated",
};

function doc(summary: string, description: string, parameters: Param[], responses: Record<string, { description: string }>) {
  return {
    tags: ["delivery"],
    summary,
    description: `${description} Anonymous; CORS open; strong ETag with If-None-Match → 304; Cache-Control from DELIVERY_CACHE_CONTROL (errors: DELIVERY_ERROR_CACHE_CONTROL).`,
    security: [],
    parameters: [ref, ...parameters],
    responses: { ...responses, 304: { description: "Not modified (If-None-Match matched the ETag)" } },
  };
}

export const DeliveryDocs = {
  byPath: doc(
    "Published node by slug path",
    "The rest of the path after by-path/ is the node's slug path in the requested locale (localised slugs apply). An empty path is 404.",
    [{ name: "path", in: "path", required: true, description: "slug path, e.g. blog/hello-world", schema: { type: "string" } }, locale],
    { 200: renderable, 400: { description: "invalid_locale" }, 404: { description: "not_found" } },
  ),
  byId: doc("Published node by id", "Same renderable node, resolved by id.", [{ name: "id", in: "path", required: true, description: "node id", schema: { type: "string", format: "uuid" } }, locale], {
    200: renderable,
    400: { description: "invalid_locale" },
    404: { description: "not_found" },
  }),
  list: doc("All published nodes (raw rows)", "{ data: [row] }, rows are the node's own columns without blocks, in path order; streamed.", [], {
    200: { description: "{ data: [raw node row] }" },
    404: error,
  }),
  entries: doc(
    "Entries of a collection",
    "Published children of the collection node at the given slug path. sort: updated_at, -updated_at (default), title, -title, created_at, -created_at, position; ties broken by id.",
    [
      { name: "collection", in: "query", required: true, description: "slug path of a node of type collection", schema: { type: "string" } },
      { name: "page", in: "query", description: `page number, from 1 to ${MAX_PAGE} (default 1)`, schema: { type: "integer", minimum: 1, maximum: MAX_PAGE } },
      { name: "per_page", in: "query", description: "1..100 (default 20; above 100 is clamped)", schema: { type: "integer", minimum: 1 } },
      { name: "q", in: "query", description: "case-insensitive substring of title or slug", schema: { type: "string", maxLength: 200 } },
      { name: "sort", in: "query", description: "sort key; - prefix for descending", schema: { type: "string" } },
    ],
    {
      200: { description: "{ data: [{ id, slug, title, path, updated_at }], total, page, per_page }" },
      400: { description: "missing_parameter, invalid_request, invalid_sort" },
      404: { description: "not_found (unknown or unpublished collection)" },
    },
  ),
  translation: doc(
    "Published node merged with a locale's translation",
    "The renderable node in that locale; 404 when the locale has no published translation of it.",
    [
      { name: "nodeId", in: "path", required: true, description: "node id", schema: { type: "string", format: "uuid" } },
      { ...locale, required: true, description: "a non-default project locale" },
    ],
    { 200: renderable, 400: { description: "missing_parameter, invalid_locale" }, 404: { description: "not_found" } },
  ),
  sitemap: doc(
    "Sitemap",
    "A urlset (one <url> per indexable node version: published, default locale or published translation, not noindex, canonical to itself; with its hreflang set as xhtml:link alternates), or a sitemapindex of {public_base_url}/sitemap-{n}.xml shards above 5,000 nodes or when one file would pass 50,000 URLs or 45 MiB.",
    [],
    { 200: { description: "application/xml" }, 404: { description: "sitemap_unavailable (no public_base_url)" } },
  ),
  shard: doc(
    "Sitemap shard",
    "The n-th shard (path order; at most 5,000 nodes, 50,000 URLs, 45 MiB) as a urlset; past the end → 404.",
    [{ name: "file", in: "path", required: true, description: "sitemap-{n}.xml", schema: { type: "string" } }],
    { 200: { description: "application/xml" }, 404: { description: "not_found, sitemap_unavailable" } },
  ),
  robots: doc("robots.txt", "User-agent: * / Allow: /, plus a Sitemap line when public_base_url is set.", [], { 200: { description: "text/plain" } }),
  theme: doc("Tenant brand", "The bare object { logo_url, favicon_url, accent_color, name_override }.", [], {
    200: { description: "{ logo_url, favicon_url, accent_color, name_override }" },
  }),
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
  if (all.length === 0) return undefined;
  if (all.length > 1) throw new AppError("invalid_request", `${name} must be given once`, { field: name });
  return all[0];
}
