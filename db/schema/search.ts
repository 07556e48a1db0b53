import { sql } from "drizzle-orm";
import { boolean, customType, index, integer, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { aiProviders } from "./ai";
import { nodes } from "./content";
import { projects } from "./projects";

const tsvector = customType<{ data: string }>({ dataType: () => "tsvector" });
const regconfig = customType<{ data: string }>({ dataType: () => "regconfig" });

/**
 * The search index (src/search/): one row per (node, version, locale). `published` rows come from
 * the published version (published_nodes, published_blocks, published_translations) and are what
 * delivery searches; the others from the working copy, for the admin search. `locale` is "" for the
 * node's base content (the project's default locale) and the translation's locale otherwise. The
 * text is kept as text (reduced from markdown and html) for snippets; `doc` weighs the title (A)
 * above the description and translatable fields (B) above the blocks (C), under the text-search
 * configuration of the row's language (`search_config`, accents folded). Paths are not stored:
 * a parent's move would make them stale; reads join the node for them.
 */
export const searchDocuments = pgTable(
  "search_documents",
  {
    projectId: uuid("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    nodeId: uuid("node_id")
      .notNull()
      .references(() => nodes.id, { onDelete: "cascade" }),
    published: boolean("published").notNull(),
    locale: text("locale").notNull(),
    /** The node's type and parent (a collection's entries), as the row's version has them: filters read them without the node. */
    type: text("type").notNull(),
    parentId: uuid("parent_id"),
    config: regconfig("config").notNull(),
    title: text("title").notNull(),
    body: text("body").notNull(),
    blocks: text("blocks").notNull(),
    /** The title in lower case, accents folded (search_fold): what as-you-type and the typo fallback compare with. */
    titleFolded: text("title_folded").notNull().generatedAlwaysAs(sql`search_fold(title)`),
    /**
     * The title (A) and the description and fields (B) alone: small enough to stay in the row (the
     * whole `doc` is TOASTed), so ranking a hit reads no more than the hit's row.
     */
    head: tsvector("head").notNull().generatedAlwaysAs(sql`setweight(to_tsvector(config, title), 'A') || setweight(to_tsvector(config, left(body, 2000)), 'B')`),
    doc: tsvector("doc").notNull().generatedAlwaysAs(sql`setweight(to_tsvector(config, title), 'A') || setweight(to_tsvector(config, body), 'B') || setweight(to_tsvector(config, blocks), 'C')`),
  },
  (t) => [
    primaryKey({ columns: [t.nodeId, t.published, t.locale] }),
    index("search_documents_project_idx").on(t.projectId, t.published, t.locale),
    // Each row's lexemes scoped to its version and locale (search_scoped, migration 0022): a query
    // reads the posting lists of its version and locale alone, and a short prefix expands over
    // their words alone (src/search/postgres.ts).
    index("search_documents_doc_scoped_idx").using("gin", sql`search_scoped(${t.doc}, ${t.published}, ${t.locale})`),
    // The hits whose title matches, found first: never left out when a common word's hits are capped.
    index("search_documents_title_scoped_idx").using("gin", sql`search_scoped(to_tsvector(${t.config}, ${t.title}), ${t.published}, ${t.locale})`),
    // Typos and as-you-type on titles (pg_trgm), accents folded; titles starting with what was typed, in order.
    index("search_documents_title_trgm_idx").using("gin", sql`${t.titleFolded} gin_trgm_ops`),
    index("search_documents_title_prefix_idx").on(t.projectId, t.published, t.locale, sql`${t.titleFolded} text_pattern_ops`),
  ],
);

/**
 * What a project's index was built under: the default locale (the base content's language) and the
 * string fields the content model marks translatable (`search_fields_key`, read again only when the
 * model's version moved). A change of either rebuilds the whole project's index in the write that
 * made it; any other model change does not.
 */
export const searchProjects = pgTable("search_projects", {
  projectId: uuid("project_id")
    .primaryKey()
    .references(() => projects.id, { onDelete: "cascade" }),
  modelVersion: integer("model_version").notNull(),
  fieldsKey: text("fields_key").notNull(),
  defaultLocale: text("default_locale").notNull(),
});

/**
 * Nodes whose working-copy rows (the admin search's) wait to be indexed: a content write queues the
 * nodes it changed here, in its transaction (one small insert), instead of extracting their text
 * inside the write; the indexer (src/search/indexer.ts) takes them in batches on every instance,
 * and an admin search first indexes its project's queue, so it never misses a commit. `published`:
 * the published rows are rebuilt too (a content model or default locale change: the whole project).
 * One row per node: the queue never outgrows the content.
 */
export const searchPending = pgTable(
  "search_pending",
  {
    nodeId: uuid("node_id").primaryKey(),
    projectId: uuid("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    published: boolean("published").notNull().default(false),
    queuedAt: timestamp("queued_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("search_pending_project_idx").on(t.projectId, t.queuedAt)],
);

// ---- Semantic search (src/search/semantic/, docs/search.md "Semantic search") ----

const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({ dataType: () => "bytea" });

/**
 * A project's semantic search: the AI provider (one of the project's, of a kind with an embeddings
 * endpoint) whose key embeds its published pages, the embedding model, and the daily cap on
 * embedding calls. No row: keyword search only. Deleting the provider turns it off.
 */
export const searchSemantic = pgTable("search_semantic", {
  projectId: uuid("project_id")
    .primaryKey()
    .references(() => projects.id, { onDelete: "cascade" }),
  providerId: uuid("provider_id")
    .notNull()
    .references(() => aiProviders.id, { onDelete: "cascade" }),
  model: text("model").notNull(),
  dailyCap: integer("daily_cap").notNull().default(10000),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});

/**
 * One vector per published index row (node, locale as search_documents spells it) and model:
 * float32 little-endian in `embedding` (portable: neither PostgreSQL here nor PGlite ships
 * pgvector), the SHA-256 of the text embedded (unchanged text is never embedded again) and the
 * index row's `xmin` when it was read (a row not rewritten since is not even hashed again).
 */
export const searchVectors = pgTable(
  "search_vectors",
  {
    projectId: uuid("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    nodeId: uuid("node_id")
      .notNull()
      .references(() => nodes.id, { onDelete: "cascade" }),
    locale: text("locale").notNull(),
    model: text("model").notNull(),
    dimensions: integer("dimensions").notNull(),
    textHash: text("text_hash").notNull(),
    sourceXmin: text("source_xmin").notNull(),
    embedding: bytea("embedding").notNull(),
    embeddedAt: timestamp("embedded_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.nodeId, t.locale, t.model] }), index("search_vectors_project_idx").on(t.projectId, t.locale, t.model)],
);

/**
 * The embedding outbox's leases and retries: the work itself is derived (published index rows
 * without a vector of their text), this table holds who has an item (`leased_until`) and when a
 * failed one is tried again (`next_attempt_at`, backing off).
 */
export const searchEmbedLeases = pgTable(
  "search_embed_leases",
  {
    nodeId: uuid("node_id").notNull(),
    locale: text("locale").notNull(),
    projectId: uuid("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    attempts: integer("attempts").notNull().default(0),
    leasedUntil: timestamp("leased_until", { withTimezone: true }),
    nextAttemptAt: timestamp("next_attempt_at", { withTimezone: true }).notNull().defaultNow(),
    lastError: text("last_error"),
  },
  (t) => [primaryKey({ columns: [t.nodeId, t.locale] }), index("search_embed_leases_project_idx").on(t.projectId)],
);

/** Embedding calls per project and UTC day ("2026-11-03"): the daily cap counts them. */
export const searchEmbedCalls = pgTable(
  "search_embed_calls",
  {
    projectId: uuid("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    day: text("day").notNull(),
    calls: integer("calls").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.day] })],
);
