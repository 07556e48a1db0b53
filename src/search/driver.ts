// The search driver: every search read (delivery, the admin search, the MCP tool, suggest) goes
// through this interface; PostgreSQL (./postgres.ts, over the index the write path keeps) is the
// default and the only driver shipped. docs/search.md says how an external engine plugs in.

/** Which version is searched: the published one (delivery, readers) or the working copies (admin, drafts included). */
export type SearchVersion = "published" | "working";

export interface SearchRequest {
  readonly projectId: string;
  readonly version: SearchVersion;
  /** The locale searched (one of the project's, as the project spells it). */
  readonly locale: string;
  /** Whether `locale` is the project's default locale (its rows are the nodes' base content). */
  readonly isDefault: boolean;
  readonly q: string;
  /** Slug path of a collection: only its entries (children). */
  readonly collection: string | null;
  readonly type: string | null;
  readonly page: number;
  readonly perPage: number;
  /** Facets to count over every hit: "type", or the name of an `index: true` field with its SQL expression over the node's `fields` column. */
  readonly facets: readonly Facet[];
}

export type Facet = { readonly name: "type" } | { readonly name: string; readonly expression: string };

export interface SearchHit {
  readonly id: string;
  /** The page's path in the locale (localised slugs applied), joined at read time. */
  readonly path: string;
  readonly title: string;
  readonly type: string;
  readonly locale: string;
  /** HTML-escaped text with the matches in <mark>…</mark>, and no other tag. */
  readonly snippet: string;
  readonly score: number;
  /** Working copies only: the node's lifecycle status and whether it has unpublished changes. */
  readonly status?: string;
  readonly changed?: boolean;
}

export interface SearchResult {
  readonly hits: SearchHit[];
  /** Hits of the query run (the corrected one when `fuzzy`). */
  readonly total: number;
  /** False when there were more hits than one search counts (MAX_HITS of the PostgreSQL driver): total is then a lower bound. */
  readonly totalExact: boolean;
  /** True when the exact query found nothing and the answer is that of its typo-tolerant form. */
  readonly fuzzy: boolean;
  readonly facets: Record<string, Record<string, number>> | null;
  /** The collection named does not exist (or is not delivered). */
  readonly noCollection?: true;
}

export interface Suggestion {
  readonly id: string;
  readonly title: string;
  readonly path: string;
  readonly type: string;
}

export interface SearchDriver {
  search(request: SearchRequest): Promise<SearchResult>;
  /** Up to `limit` titles for a search box as the reader types `q`. */
  suggest(request: Pick<SearchRequest, "projectId" | "version" | "locale" | "isDefault" | "q">, limit: number): Promise<Suggestion[]>;
}
