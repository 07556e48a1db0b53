import { sql } from "drizzle-orm";
import { check, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { projects } from "./projects";

/** Instance role: an owner acts in every project; a member only where a project_members row says. */
export type UserRole = "owner" | "member";
export type MemberRole = "viewer" | "editor" | "admin";

export const users = pgTable(
  "users",
  {
    id: uuid("id").primaryKey(),
    email: text("email").notNull().unique(),
    passwordHash: text("password_hash").notNull(),
    role: text("role").$type<UserRole>().notNull().default("member"),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [check("users_role_check", sql`${t.role} in ('owner', 'member')`)],
);

/** A user's role in one project. */
export const projectMembers = pgTable(
  "project_members",
  {
    projectId: uuid("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    role: text("role").$type<MemberRole>().notNull(),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.userId] }), index("project_members_user_idx").on(t.userId), check("project_members_role_check", sql`${t.role} in ('viewer', 'editor', 'admin')`)],
);

export const adminKeys = pgTable(
  "admin_keys",
  {
    id: uuid("id").primaryKey(),
    name: text("name").notNull(),
    keyHash: text("key_hash").notNull().unique(),
    keyHint: text("key_hint").notNull(),
    scopes: jsonb("scopes").$type<string[]>().notNull(),
    // null = every project; otherwise the only projects this key may act on.
    projectIds: jsonb("project_ids").$type<string[] | null>(),
    createdBy: uuid("created_by"),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true, mode: "date" }),
    revokedAt: timestamp("revoked_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [index("admin_keys_created_idx").on(t.createdAt)],
);

/** Fixed-window counters shared by every instance (rate limits that must hold cluster-wide). */
export const rateLimits = pgTable("rate_limits", {
  key: text("key").primaryKey(),
  count: integer("count").notNull(),
  windowStart: timestamp("window_start", { withTimezone: true, mode: "date" }).notNull(),
});

/** Set once by the first start, so bootstrap runs exactly once per database. */
export const systemState = pgTable("system_state", {
  key: text("key").primaryKey(),
  value: jsonb("value").notNull(),
  updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
});

/**
 * A person signed in to the studio (/studio): the cookie holds a random id, stored here hashed.
 * Ends when idle for STUDIO_SESSION_IDLE_HOURS, at expires_at (STUDIO_SESSION_MAX_DAYS after
 * sign-in) whatever the use, on sign-out, or with the user.
 */
export const studioSessions = pgTable(
  "studio_sessions",
  {
    id: uuid("id").primaryKey(),
    tokenHash: text("token_hash").notNull().unique(),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    userAgent: text("user_agent"),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull(),
    lastSeenAt: timestamp("last_seen_at", { withTimezone: true, mode: "date" }).notNull(),
    expiresAt: timestamp("expires_at", { withTimezone: true, mode: "date" }).notNull(),
  },
  (t) => [index("studio_sessions_user_idx").on(t.userId)],
);
