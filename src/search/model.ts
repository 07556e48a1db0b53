// Search's wire shapes: the delivery routes' OpenAPI entries and the admin operation's schemas.
import { z } from "zod";
import { MAX_PAGE } from "../lib/paging";
import { Locale, Page } from "../lib/schemas";
import { MAX_HITS, MAX_QUERY_CHARS, TYPO_MIN_LETTERS } from "./query";

type Param = { name: string; in: "query" | "path"; required?: boolean; description: string; schema: Record<string, unknown> };
const param = (name: string, description: string, schema: Record<string, unknown> = { type: "string" }, where: "query" | "path" = "query"): Param => ({
  name,
  in: where,
  description,
  schema,
  ...(where === "path" ? { required: true } : {}),
});

const Q_SYNTAX =
  `web-search syntax: words (all must match, stemmed in the locale's language, accents folded), "exact phrase", -excluded, or; the last word (3 letters or more) matches as a prefix. ` +
  `When nothing matches, each word of ${TYPO_MIN_LETTERS} letters or more may be one typo (two from 9 letters) away from a word of a title; the answer then says fuzzy: true and total counts the hits of that corrected search. ` +
  `At most ${MAX_QUERY_CHARS} characters are read; no input is an error (an empty q finds nothing).`;

const doc = (summary: string, description: string, parameters: Param[], responses: Record<number, string>) => ({
  tags: ["delivery"],
  summary,
  description: `${description} Anonymous; CORS open; cached and ETagged with the project's content version; strong ETag with If-None-Match → 304.`,
  security: [],
  parameters: [param("ref", "project id or slug", { type: "string" }, "path"), ...parameters],
  responses: Object.fromEntries(Object.entries({ ...responses, 304: "Not modified" }).map(([status, d]) => [status, { description: d }])),
});

const locale = param("locale", "one of the project's locales; default: the project's default_locale. Each locale is searched in its own language, translations under their own paths");

export const SearchDocs = {
  search: doc(
    "Search published pages",
    "Ranked full-text search of the published pages: title above SEO description and translatable fields above block text. snippet is HTML-escaped text with the matches in <mark>, and no other tag.",
    [
      param("q", Q_SYNTAX, { type: "string", maxLength: MAX_QUERY_CHARS }),
      locale,
      param("collection", "slug path of a collection: its entries only"),
      param("type", "node type"),
      param("page", `page number, from 1 to ${MAX_PAGE} (default 1)`, { type: "integer", minimum: 1, maximum: MAX_PAGE }),
      param("per_page", "1..100 (default 20; above 100 is clamped)", { type: "integer", minimum: 1 }),
      param("facets", "comma-separated: type and field.<name> of fields marked index: true; counts of every hit per value, as facets: { name: { value: count } }"),
      param(
        "mode",
        "keyword, or hybrid: the keyword and vector rankings merged by reciprocal rank fusion when the project has semantic search (docs/search.md); the answer then says mode, and semantic (off, daily_cap, unavailable) when it is the keyword ranking alone",
        { type: "string", enum: ["keyword", "hybrid"] },
      ),
    ],
    {
      200: `{ data: [{ id, path, title, type, locale, snippet, score }], total, total_exact, page, per_page, fuzzy, facets? } (past ${MAX_HITS} hits, total_exact is false and total a lower bound)`,
      400: "invalid_locale, invalid_request (details.field: page, per_page, facets, type)",
      404: "not_found (unknown project, or a collection that is not delivered)",
    },
  ),
  suggest: doc(
    "Search-box suggestions",
    "Up to 8 published titles for a search box as the reader types: every word a prefix of a title word, or a title close to q (trigrams, tolerating typos); titles starting with q first.",
    [param("q", "what the reader typed so far"), locale],
    { 200: "{ data: [{ id, title, path, type }] }", 400: "invalid_locale" },
  ),
};

export const SearchContentIn = z.object({
  query: z.string().max(1000).describe(Q_SYNTAX),
  locale: Locale.optional().describe("one of the project's locales (default: the default locale); translations are searched under their own locale"),
  collection: z.string().max(2048).optional().describe("slug path of a collection: its entries only"),
  type: z.string().max(64).optional().describe("node type"),
  include_drafts: z
    .boolean()
    .optional()
    .describe("true (default): search the working copies, drafts and archived nodes included, each hit with its status; false: only what readers see (the published versions)"),
  limit: z.number().int().min(1).max(50).optional().describe("hits per page, 1-50 (default 10)"),
  page: Page,
  mode: z.enum(["keyword", "hybrid"]).optional().describe("hybrid (with include_drafts: false): the keyword and vector rankings merged, when the project has semantic search; default keyword"),
});

const SearchHitOut = z.object({
  id: z.string(),
  path: z.string().describe("the page's path in the locale"),
  title: z.string(),
  type: z.string(),
  locale: z.string(),
  snippet: z.string().describe("HTML-escaped text with the matches in <mark>…</mark>"),
  score: z.number(),
  status: z.string().describe("draft, published or archived"),
  state: z.enum(["draft", "published", "changed", "archived"]).describe("changed: published, with unpublished changes in its working copy"),
  uri: z.string().describe("the node as an MCP resource: cms://{project slug}/nodes/{id}"),
});

export const SearchContentOut = z.object({
  hits: z.array(SearchHitOut),
  total: z.number().int(),
  total_exact: z.boolean().describe(`false: more pages match than one search counts (${MAX_HITS}); total is then a lower bound`),
  page: z.number().int(),
  per_page: z.number().int(),
  fuzzy: z.boolean().describe("true: nothing matched exactly; these are the hits of the typo-tolerant search"),
  mode: z.enum(["keyword", "hybrid"]).optional().describe("the ranking answered, when mode was asked for"),
  semantic: z.enum(["off", "daily_cap", "unavailable"]).optional().describe("why a hybrid search answered with the keyword ranking alone"),
});

// ---- Semantic search settings (GET and PUT /admin/p/{ref}/search/semantic) ----

export const SemanticIn = z.object({
  provider_id: z.uuid().nullable().describe("one of the project's AI providers, of kind openai, gemini, mistral or openrouter; null turns semantic search off and deletes its vectors"),
  model: z.string().min(1).max(200).nullable().optional().describe("embedding model with 1024-dimensional vectors; default per kind (text-embedding-3-small, gemini-embedding-001, mistral-embed)"),
  daily_cap: z.number().int().min(0).max(10_000_000).optional().describe("embedding calls per UTC day, pages and queries together (default 10,000)"),
});

export const SemanticOut = z.object({
  semantic: z
    .object({
      provider_id: z.string(),
      kind: z.string(),
      model: z.string(),
      daily_cap: z.number().int(),
      calls_today: z.number().int(),
      vectors: z.number().int().describe("pages (per locale) with a vector of the current model"),
      pending: z.number().int().describe("published pages (per locale) waiting for a vector"),
    })
    .nullable(),
  embedding_kinds: z.array(z.string()).describe("provider kinds with an embeddings endpoint"),
  vector_engine: z.literal("memory").describe("how the vector ranking is computed: cosine similarity in the service"),
  pgvector_available: z.boolean().describe("whether this PostgreSQL could load the pgvector extension (not required)"),
});
