import { sql } from "drizzle-orm";
import { type AnyPgColumn, boolean, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import type { Actor } from "./history";
import { projects } from "./projects";

export type NodeStatus = "draft" | "published" | "archived";
export interface NodeSeo {
  description?: string;
  canonical?: string | null;
  robots?: string | null;
  og_image?: string | null;
  noindex?: boolean;
  [key: string]: unknown;
}

/**
 * The columns a node's version has: the working copy (`nodes`, what the admin API, MCP and preview
 * read and write) and the published version (`published_nodes`, what delivery serves) alike.
 */
const nodeColumns = () => ({
  projectId: uuid("project_id")
    .notNull()
    .references(() => projects.id, { onDelete: "cascade" }),
  slug: text("slug").notNull(),
  path: text("path").notNull(),
  type: text("type").notNull(),
  title: text("title").notNull(),
  status: text("status").$type<NodeStatus>().notNull().default("draft"),
  position: integer("position").notNull().default(0),
  seo: jsonb("seo").$type<NodeSeo>().notNull().default({}),
  // Typed values of the node's type in the content model (author, date, category…); free-form without one.
  fields: jsonb("fields").$type<Record<string, unknown>>().notNull().default({}),
  // The node's current revision number (revisions.number of its latest change; 0 before any).
  revision: integer("revision").notNull().default(0),
  publishedAt: timestamp("published_at", { withTimezone: true, mode: "date" }),
  // Scheduled publishing: fired once by the scheduler (src/schedule/), then cleared.
  publishAt: timestamp("publish_at", { withTimezone: true, mode: "date" }),
  unpublishAt: timestamp("unpublish_at", { withTimezone: true, mode: "date" }),
  /** Who set the schedule: recorded with the scheduler's revision. */
  scheduledBy: jsonb("scheduled_by").$type<Actor>(),
  createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
});

/**
 * The working copy of every node. `status` is its lifecycle: draft (never published, or
 * unpublished), published (it has a published version), archived; `changed` says that a published
 * node's working copy differs from its published version (the state `changed`, src/content/state.ts).
 */
export const nodes = pgTable(
  "nodes",
  {
    id: uuid("id").primaryKey(),
    parentId: uuid("parent_id").references((): AnyPgColumn => nodes.id, { onDelete: "cascade" }),
    ...nodeColumns(),
    changed: boolean("changed").notNull().default(false),
  },
  (t) => [
    uniqueIndex("nodes_project_path_uq").on(t.projectId, t.path),
    index("nodes_parent_position_idx").on(t.parentId, t.position, t.id),
    index("nodes_project_status_idx").on(t.projectId, t.status, t.id),
    // Collection entries (children of a collection) by each sort key, id as tie-breaker.
    index("nodes_parent_updated_idx").on(t.parentId, t.status, t.updatedAt, t.id),
    index("nodes_parent_created_idx").on(t.parentId, t.status, t.createdAt, t.id),
    index("nodes_parent_title_idx").on(t.parentId, t.status, t.title, t.id),
    index("nodes_project_path_prefix_idx").on(t.projectId, sql`${t.path} text_pattern_ops`),
    index("nodes_publish_at_idx").on(t.publishAt).where(sql`${t.publishAt} is not null`),
    index("nodes_unpublish_at_idx").on(t.unpublishAt).where(sql`${t.unpublishAt} is not null`),
  ],
);

/**
 * Published versions (src/content/publish.ts): a copy of the working row made by publish_node, its
 * path built from the parent's published path. Delivery reads only these tables. A row whose status
 * is not `published` is a tombstone, kept while published descendants of an unpublished or
 * archived node remain, so that they stay hidden as before (delivery/service.ts).
 */
export const publishedNodes = pgTable(
  "published_nodes",
  {
    id: uuid("id")
      .primaryKey()
      .references(() => nodes.id, { onDelete: "cascade" }),
    parentId: uuid("parent_id"),
    ...nodeColumns(),
  },
  (t) => [
    uniqueIndex("published_nodes_project_path_uq").on(t.projectId, t.path),
    index("published_nodes_parent_position_idx").on(t.parentId, t.position, t.id),
    index("published_nodes_project_status_idx").on(t.projectId, t.status, t.id),
    index("published_nodes_parent_updated_idx").on(t.parentId, t.status, t.updatedAt, t.id),
    index("published_nodes_parent_created_idx").on(t.parentId, t.status, t.createdAt, t.id),
    index("published_nodes_parent_title_idx").on(t.parentId, t.status, t.title, t.id),
    index("published_nodes_project_path_prefix_idx").on(t.projectId, sql`${t.path} text_pattern_ops`),
  ],
);

const blockColumns = () => ({
  type: text("type").notNull(),
  order: integer("order").notNull(),
  data: jsonb("data").$type<Record<string, unknown>>().notNull().default({}),
});

export const blocks = pgTable(
  "blocks",
  {
    id: uuid("id").primaryKey(),
    nodeId: uuid("node_id")
      .notNull()
      .references(() => nodes.id, { onDelete: "cascade" }),
    ...blockColumns(),
  },
  (t) => [index("blocks_node_order_idx").on(t.nodeId, t.order)],
);

/** The blocks of published versions (same ids as the working blocks they were copied from). */
export const publishedBlocks = pgTable(
  "published_blocks",
  {
    id: uuid("id").primaryKey(),
    nodeId: uuid("node_id")
      .notNull()
      .references(() => publishedNodes.id, { onDelete: "cascade" }),
    ...blockColumns(),
  },
  (t) => [index("published_blocks_node_order_idx").on(t.nodeId, t.order)],
);

export interface TranslationMeta {
  title?: string;
  slug?: string;
  description?: string;
  og_image?: string;
  canonical?: string | null;
  robots?: string | null;
  noindex?: boolean;
  [key: string]: unknown;
}

const translationColumns = () => ({
  projectId: uuid("project_id")
    .notNull()
    .references(() => projects.id, { onDelete: "cascade" }),
  nodeId: uuid("node_id")
    .notNull()
    .references(() => nodes.id, { onDelete: "cascade" }),
  locale: text("locale").notNull(),
  meta: jsonb("meta").$type<TranslationMeta>().notNull().default({}),
  blocks: jsonb("blocks").$type<Record<string, Record<string, unknown>>>().notNull().default({}),
  // Overrides of the node's translatable fields in this locale (deep-merged over nodes.fields on read).
  fields: jsonb("fields").$type<Record<string, unknown>>().notNull().default({}),
  // published: the translation has a published version (published_translations); draft: never published, or unpublished.
  status: text("status").$type<"draft" | "published">().notNull().default("draft"),
  publishAt: timestamp("publish_at", { withTimezone: true, mode: "date" }),
  unpublishAt: timestamp("unpublish_at", { withTimezone: true, mode: "date" }),
  scheduledBy: jsonb("scheduled_by").$type<Actor>(),
  createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
});

/** The working copy of each translation; `changed` as on nodes. */
export const translations = pgTable(
  "translations",
  {
    id: uuid("id").primaryKey(),
    ...translationColumns(),
    changed: boolean("changed").notNull().default(false),
  },
  (t) => [
    uniqueIndex("translations_node_locale_uq").on(t.nodeId, t.locale),
    index("translations_project_locale_idx").on(t.projectId, t.locale),
    index("translations_project_locale_slug_idx").on(t.projectId, t.locale, sql`(${t.meta}->>'slug')`),
    index("translations_publish_at_idx").on(t.publishAt).where(sql`${t.publishAt} is not null`),
    index("translations_unpublish_at_idx").on(t.unpublishAt).where(sql`${t.unpublishAt} is not null`),
  ],
);

/** Published versions of translations (one locale each, published on its own or with its node). */
export const publishedTranslations = pgTable(
  "published_translations",
  {
    id: uuid("id").primaryKey(),
    ...translationColumns(),
  },
  (t) => [
    uniqueIndex("published_translations_node_locale_uq").on(t.nodeId, t.locale),
    index("published_translations_project_locale_idx").on(t.projectId, t.locale),
    // Delivery resolves localised paths by the translated slug (by-path in a non-default locale).
    index("published_translations_project_locale_slug_idx").on(t.projectId, t.locale, sql`(${t.meta}->>'slug')`),
  ],
);
