import { index, jsonb, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import type { Actor } from "./history";
import { projects } from "./projects";

/**
 * Preview tokens: short-lived, read-only bearers that let a frontend read a project's
 * latest content (drafts, draft translations, scheduled nodes) from the delivery API. Only the
 * SHA-256 of the token is stored; deleting the row revokes it at once on every instance.
 */
export const previewTokens = pgTable(
  "preview_tokens",
  {
    id: uuid("id").primaryKey(),
    projectId: uuid("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    name: text("name"),
    tokenHash: text("token_hash").notNull().unique(),
    tokenHint: text("token_hint").notNull(),
    /** Who minted it (names as they were then). */
    createdBy: jsonb("created_by").$type<Actor>().notNull(),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    expiresAt: timestamp("expires_at", { withTimezone: true, mode: "date" }).notNull(),
  },
  (t) => [index("preview_tokens_project_idx").on(t.projectId, t.createdAt)],
);
