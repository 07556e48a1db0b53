import { sql } from "drizzle-orm";
import { bigint, boolean, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { projects } from "./projects";

export const aiProviders = pgTable(
  "ai_providers",
  {
    id: uuid("id").primaryKey(),
    projectId: uuid("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    kind: text("kind").notNull(),
    model: text("model"),
    baseUrl: text("base_url"),
    // v1:<key id>:<nonce>:<ciphertext+tag>; never the plaintext.
    apiKeySealed: text("api_key_sealed"),
    apiKeyHint: text("api_key_hint"),
    capabilities: jsonb("capabilities").$type<Record<string, unknown>>().notNull().default({}),
    isDefault: boolean("is_default").notNull().default(false),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [index("ai_providers_project_idx").on(t.projectId), uniqueIndex("ai_providers_one_default_uq").on(t.projectId).where(sql`${t.isDefault}`)],
);

/**
 * Token use per project, provider and calendar month (UTC, "2026-11"), from the vendors' usage
 * fields, every call counted (docs/ai.md, "Usage and the monthly cap"). No foreign key to the
 * provider: its use stays counted after it is deleted.
 */
export const aiUsage = pgTable(
  "ai_usage",
  {
    projectId: uuid("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    providerId: uuid("provider_id").notNull(),
    month: text("month").notNull(),
    kind: text("kind").notNull(),
    inputTokens: bigint("input_tokens", { mode: "number" }).notNull().default(0),
    outputTokens: bigint("output_tokens", { mode: "number" }).notNull().default(0),
    calls: integer("calls").notNull().default(0),
    updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.providerId, t.month] })],
);

export const mcpTokens = pgTable(
  "mcp_tokens",
  {
    id: uuid("id").primaryKey(),
    projectId: uuid("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    tokenHash: text("token_hash").notNull().unique(),
    tokenHint: text("token_hint").notNull(),
    scopes: jsonb("scopes").$type<string[]>().notNull(),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true, mode: "date" }),
    expiresAt: timestamp("expires_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [index("mcp_tokens_project_idx").on(t.projectId)],
);
