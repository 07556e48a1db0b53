// The one declared search operation: the admin route GET /admin/p/{ref}/search and the MCP tool
// search_content come from it (src/core/operation.ts).
import type { ContentState } from "../content/publish";
import { projectOperation, READ_ONLY } from "../core/operation";
import { SearchContentIn, SearchContentOut } from "./model";
import { searchDriver, searchLocale, searchRequest } from "./service";

const searchContentOp = projectOperation({
  name: "search_content",
  title: "Search content",
  description:
    "Find pages by what they say: ranked full-text search of titles, SEO descriptions, translatable fields and block text, in the locale's language (stemming, accents folded, a typo tolerated when nothing matches exactly). " +
    'query takes web-search syntax ("exact phrase", -excluded, or; the last word matches as a prefix). ' +
    "Each hit has its snippet (matches in <mark>), status and state, and uri: the node as a resource (cms://{project slug}/nodes/{id}), to read with get_node or resources/read. " +
    "include_drafts (default true) searches the working copies, drafts and archived nodes included; false searches only what readers see.",
  scopes: ["content:read"],
  input: SearchContentIn,
  output: SearchContentOut,
  tool: READ_ONLY,
  // Each hit as the resource resources/read answers (the node with its blocks), named as resources/list names it.
  links: (out) => out.hits.map((h) => ({ uri: h.uri, name: h.path, title: h.title, description: `${h.type} · ${h.state}`, mimeType: "application/json" })),
  http: { method: "GET", path: "/admin/p/:ref/search", data: "hits", tag: "content", summary: "Search the project's content (drafts included), ranked, with snippets" },
  run: async ({ deps, project }, args) => {
    const locale = searchLocale(project, args.locale);
    const perPage = args.limit ?? 10;
    const page = args.page ?? 1;
    const version = args.include_drafts === false ? "published" : "working";
    const found = await searchDriver(deps.db).search(
      searchRequest(project.id, version, { q: args.query, locale, isDefault: locale === project.defaultLocale, collection: args.collection, type: args.type, page, perPage, facets: [] }),
    );
    const hits = found.hits.map(({ changed, ...h }) => {
      const status = h.status ?? "published";
      const state: ContentState = status === "published" && changed ? "changed" : (status as ContentState);
      return { ...h, status, state, uri: `cms://${project.slug}/nodes/${h.id}` };
    });
    return { hits, total: found.total, total_exact: found.totalExact, page, per_page: perPage, fuzzy: found.fuzzy };
  },
});

export const searchOperations = [searchContentOp];
