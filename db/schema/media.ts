import { bigint, index, integer, jsonb, pgTable, primaryKey, real, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { projects } from "./projects";

/**
 * A media item: the metadata of one upload. Its bytes live in the media storage (local
 * disk or S3) under the content hash, so two items of the same bytes share one object; the object
 * goes when no item in any project names the hash any more.
 */
export const media = pgTable(
  "media",
  {
    id: uuid("id").primaryKey(),
    projectId: uuid("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    /** SHA-256 of the stored bytes, hex: the storage key. */
    hash: text("hash").notNull(),
    /** The type sniffed from the bytes (image/jpeg…), never the name's or the header's. */
    type: text("type").notNull(),
    filename: text("filename").notNull(),
    size: bigint("size", { mode: "number" }).notNull(),
    width: integer("width"),
    height: integer("height"),
    title: text("title"),
    /** Alt text by locale. */
    alt: jsonb("alt").$type<Record<string, string>>().notNull().default({}),
    /** Machine-written alt text by locale, waiting for review (describe_media). */
    altDraft: jsonb("alt_draft").$type<Record<string, string>>().notNull().default({}),
    focalX: real("focal_x"),
    focalY: real("focal_y"),
    /** ThumbHash, base64. */
    placeholder: text("placeholder"),
    /** #rrggbb */
    dominantColor: text("dominant_color"),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [index("media_project_created_idx").on(t.projectId, t.createdAt, t.id), index("media_hash_idx").on(t.hash)],
);

export type MediaRow = typeof media.$inferSelect;

/**
 * A variant delivery rendered and stored for an item (src/media/render.ts): its bytes count in the
 * project's media storage, beside the originals. Charged to the item whose URL rendered it; goes
 * with the item.
 */
export const mediaVariants = pgTable(
  "media_variants",
  {
    mediaId: uuid("media_id")
      .notNull()
      .references(() => media.id, { onDelete: "cascade" }),
    projectId: uuid("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    /** The canonical variant name (src/media/variants.ts), as stored under the item's hash. */
    name: text("name").notNull(),
    size: bigint("size", { mode: "number" }).notNull(),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.mediaId, t.name] }), index("media_variants_project_idx").on(t.projectId)],
);
