// The one declared search operation: the admin route GET /admin/p/{ref}/search and the MCP tool
// search_content come from it (src/core/operation.ts).
import { z } from "zod";
import type { Db } from "../../db/client";
import type { ContentState } from "../content/publish";
import { projectOperation, READ_ONLY } from "../core/operation";
import { AppError } from "../errors";
import { EMBEDDING_KINDS } from "./embeddings";
import { modeFields, modeSearch } from "./hybrid";
import { SearchContentIn, SearchContentOut, SemanticIn, SemanticOut } from "./model";
import { semanticStatus, setSemantic } from "./semantic";
import { searchDriver, searchLocale, searchRequest } from "./service";
import { pgvectorAvailable } from "./vectors";

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
    // Vectors are made of the published versions only.
    if (args.mode === "hybrid" && version !== "published") throw new AppError("invalid_request", "mode hybrid searches what readers see: pass include_drafts: false", { field: "mode" });
    const request = searchRequest(project.id, version, { q: args.query, locale, isDefault: locale === project.defaultLocale, collection: args.collection, type: args.type, page, perPage, facets: [] });
    const found = args.mode === undefined ? await searchDriver(deps.db).search(request) : await modeSearch(deps.db, searchDriver(deps.db), request, project.contentVersion, args.mode);
    const hits = found.hits.map(({ changed, ...h }) => {
      const status = h.status ?? "published";
      const state: ContentState = status === "published" && changed ? "changed" : (status as ContentState);
      return { ...h, status, state, uri: `cms://${project.slug}/nodes/${h.id}` };
    });
    return { hits, total: found.total, total_exact: found.totalExact, page, per_page: perPage, fuzzy: found.fuzzy, ...modeFields(found) };
  },
});

const readSemantic = async (db: Db, projectId: string, now: Date): Promise<z.input<typeof SemanticOut>> => ({
  semantic: await semanticStatus(db, projectId, now),
  embedding_kinds: Object.keys(EMBEDDING_KINDS),
  vector_engine: "memory",
  pgvector_available: await pgvectorAvailable(db),
});

const semanticRoute = { path: "/admin/p/:ref/search/semantic", tag: "projects" } as const;

const readSemanticOp = projectOperation({
  name: "read_semantic_search",
  title: "Read the project's semantic search",
  description: "The AI provider and model that embed the project's published pages for mode=hybrid, the daily cap on embedding calls and today's calls, and how many pages have a vector.",
  scopes: ["projects:read"],
  input: z.object({}),
  output: SemanticOut,
  http: { ...semanticRoute, method: "GET", summary: "Read the project's semantic search settings" },
  run: ({ deps, project, now }) => readSemantic(deps.db, project.id, now),
});

const setSemanticOp = projectOperation({
  name: "set_semantic_search",
  title: "Set the project's semantic search",
  description: "Name one of the project's AI providers (kind openai, gemini, mistral or openrouter) to embed its published pages with its key, or null to turn semantic search off.",
  scopes: ["projects:write"],
  input: SemanticIn,
  output: SemanticOut,
  http: { ...semanticRoute, method: "PUT", summary: "Set the project's semantic search provider, model and daily cap" },
  run: async (ctx, args) => {
    await setSemantic(ctx.deps.db, ctx.project.id, args, ctx.now);
    return readSemantic(ctx.deps.db, ctx.project.id, ctx.now);
  },
});

export const searchOperations = [searchContentOp, readSemanticOp, setSemanticOp];
