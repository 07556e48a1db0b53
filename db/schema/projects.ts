import { bigint, integer, jsonb, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";

export const projects = pgTable("projects", {
  id: uuid("id").primaryKey(),
  slug: text("slug").notNull().unique(),
  name: text("name").notNull(),
  defaultLocale: text("default_locale").notNull(),
  locales: jsonb("locales").$type<string[]>().notNull(),
  publicBaseUrl: text("public_base_url"),
  // The site's draft-mode entry, a template with {token} (and {path}, {locale}): the studio's Preview opens it.
  previewUrl: text("preview_url"),
  // Bumped by every content write; delivery caches are keyed by it on every instance.
  contentVersion: bigint("content_version", { mode: "number" }).notNull().default(1),
  // Bumped by the content writes that may change any delivery answer (settings, theme, media, a page at the root): stored answers of an older one are not read (db/schema/delivery.ts).
  renderEpoch: bigint("render_epoch", { mode: "number" }).notNull().default(0),
  // The content model's version (content_models.version; 0: the project has none, all free-form).
  modelVersion: integer("model_version").notNull().default(0),
  // The media storage quota; null: MEDIA_QUOTA_BYTES.
  mediaQuotaBytes: bigint("media_quota_bytes", { mode: "number" }),
  // Translation (docs/translation.md): each locale's fallback chain, the locales machine-translated when a source is published, a monthly token cap.
  fallbacks: jsonb("fallbacks").$type<Record<string, string[]>>().notNull().default({}),
  autoTranslate: jsonb("auto_translate").$type<{ locales: string[] }>().notNull().default({ locales: [] }),
  aiMonthlyTokenCap: bigint("ai_monthly_token_cap", { mode: "number" }),
  createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
});

export const themes = pgTable("themes", {
  projectId: uuid("project_id")
    .primaryKey()
    .references(() => projects.id, { onDelete: "cascade" }),
  logoUrl: text("logo_url"),
  faviconUrl: text("favicon_url"),
  accentColor: text("accent_color"),
  nameOverride: text("name_override"),
  updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
});

export type Project = typeof projects.$inferSelect;
