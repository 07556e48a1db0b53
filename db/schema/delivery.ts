import { bigint, boolean, index, integer, pgTable, primaryKey, text, uuid } from "drizzle-orm/pg-core";
import { projects } from "./projects";

/**
 * Delivery answers stored when they are rendered (src/delivery/stored.ts): a cache miss on any
 * instance is one indexed read of these bytes. A row is valid for the project's `render_epoch`
 * (bumped by writes that may change any page: settings, theme, media, a page at the root) and
 * `model_version` as they were, for the renderer that made it (`signature`), until a write marks
 * it `stale` in its own transaction (src/write/answers.ts): by `deps`, the nodes it shows (the node,
 * its ancestors, the nodes it references), or by `watch`, the base paths whose pages may change it
 * (its own path's prefixes; "\u0000ref" when it references nodes).
 */
export const deliveryAnswers = pgTable(
  "delivery_answers",
  {
    projectId: uuid("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    /** The read's cache key (the plan key: "path en docs/guide", "id fr <uuid>", "tr fr <uuid>", their "-none" forms). */
    key: text("key").notNull(),
    epoch: bigint("epoch", { mode: "number" }).notNull(),
    modelVersion: integer("model_version").notNull(),
    signature: text("signature").notNull(),
    stale: boolean("stale").notNull().default(false),
    deps: uuid("deps").array().notNull(),
    watch: text("watch").array().notNull(),
    body: text("body").notNull(),
    etag: text("etag").notNull(),
    /** The base path of the page shown (the in-memory store's scope). */
    scope: text("scope"),
    /** The content version it was rendered at. */
    version: bigint("version", { mode: "number" }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.projectId, t.key] }),
    index("delivery_answers_deps").using("gin", t.deps),
    index("delivery_answers_watch").using("gin", t.watch),
    // No index on `stale`: marking changes that column alone, so with room on the page (the
    // migration sets fillfactor 70) it is a HOT update that touches no index (about half the time
    // of marking 10,000 answers with a partial index on it). The refresher scans for marked rows
    // only after a write was announced (src/delivery/routes.ts).
  ],
);
