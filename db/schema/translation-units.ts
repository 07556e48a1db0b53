import { sql } from "drizzle-orm";
import { boolean, check, foreignKey, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { translations } from "./content";
import type { Actor } from "./history";

export type UnitStatus = "machine" | "needs_review" | "stale" | "approved" | "published";

/** Who made a unit's translated text: a person, an agent (MCP), the machine (a provider's kind and model), the translation memory, a file imported. */
export interface UnitOrigin {
  readonly kind: "person" | "agent" | "machine" | "memory" | "import";
  readonly actor?: Actor | null;
  readonly provider_kind?: string | null;
  readonly model?: string | null;
}

/**
 * The state of each translated unit (docs/translation.md): per node, locale and JSON Pointer, the
 * hash and revision of the source text it was made from, its status, origin and whether a person
 * edited it. Written with the translation (and marked stale by the node's writes) in the same
 * transaction; a unit the translation does not carry has no row (it is missing).
 */
export const translationUnits = pgTable(
  "translation_units",
  {
    projectId: uuid("project_id").notNull(),
    nodeId: uuid("node_id").notNull(),
    locale: text("locale").notNull(),
    pointer: text("pointer").notNull(),
    status: text("status").$type<UnitStatus>().notNull(),
    sourceHash: text("source_hash").notNull(),
    sourceRevision: integer("source_revision").notNull(),
    origin: jsonb("origin").$type<UnitOrigin>().notNull(),
    humanEdited: boolean("human_edited").notNull().default(false),
    /** When its source changed (status stale), and the source hash it changed to. */
    staleSince: timestamp("stale_since", { withTimezone: true, mode: "date" }),
    updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.nodeId, t.locale, t.pointer] }),
    foreignKey({ columns: [t.nodeId, t.locale], foreignColumns: [translations.nodeId, translations.locale], name: "translation_units_translation_fk" }).onDelete("cascade"),
    index("translation_units_stale_idx").on(t.projectId, t.locale).where(sql`${t.status} = 'stale'`),
    check("translation_units_status_check", sql`${t.status} in ('machine', 'needs_review', 'stale', 'approved', 'published')`),
  ],
);

export type TranslationUnitRow = typeof translationUnits.$inferSelect;
