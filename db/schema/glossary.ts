import { sql } from "drizzle-orm";
import { boolean, check, index, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { projects } from "./projects";
import type { UnitOrigin } from "./translation-units";

export type GlossaryKind = "forced" | "dnt" | "forbidden";

/**
 * A project's glossary (docs/translation.md, "The machine obeys the house"): per locale (or `*` for
 * every locale), forced terms (source → target), do-not-translate terms and forbidden terms.
 */
export const glossaryTerms = pgTable(
  "glossary_terms",
  {
    id: uuid("id").primaryKey(),
    projectId: uuid("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    locale: text("locale").notNull(),
    kind: text("kind").$type<GlossaryKind>().notNull(),
    source: text("source").notNull(),
    target: text("target"),
    caseSensitive: boolean("case_sensitive").notNull().default(false),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("glossary_terms_uq").on(t.projectId, t.locale, t.kind, t.source),
    check("glossary_terms_kind_check", sql`${t.kind} in ('forced', 'dnt', 'forbidden')`),
    check("glossary_terms_target_check", sql`(${t.kind} = 'forced') = (${t.target} is not null)`),
  ],
);

/** The project's style notes for machine translation: a default and one per locale (formal or informal address, tone). */
export interface TranslationStyle {
  default?: string;
  locales?: Record<string, string>;
}

export const translationSettings = pgTable("translation_settings", {
  projectId: uuid("project_id")
    .primaryKey()
    .references(() => projects.id, { onDelete: "cascade" }),
  style: jsonb("style").$type<TranslationStyle>().notNull().default({}),
  updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
});

/**
 * The translation memory: a source text already translated into a locale (by its SHA-256), reused
 * without calling the vendor. Filled by every translated unit stored as approved, published or by
 * the machine (never one that failed its checks).
 */
export const translationMemory = pgTable(
  "translation_memory",
  {
    projectId: uuid("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    locale: text("locale").notNull(),
    sourceHash: text("source_hash").notNull(),
    target: text("target").notNull(),
    origin: jsonb("origin").$type<UnitOrigin>().notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.locale, t.sourceHash] }), index("translation_memory_project_idx").on(t.projectId)],
);
