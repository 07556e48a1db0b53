import { sql } from "drizzle-orm";
import { boolean, check, index, integer, jsonb, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import type { Actor } from "./history";
import { projects } from "./projects";

export type ApprovalStatus = "pending" | "approved" | "rejected" | "partial" | "expired" | "void" | "used";

/** A publication approved in part: the units (JSON Pointers) published and those left out. */
export interface ApprovalParts {
  readonly accepted: readonly string[];
  readonly left_out: readonly string[];
}

/**
 * A publish (or delete, archive…) an MCP caller without content:publish asked for, waiting
 * for a person's yes. Bound to the node's revision when asked (history numbers): a change since
 * voids it. Single use: the retry that carries it out marks it used. No foreign key to nodes: the
 * request outlives a deleted node (it is then void).
 */
export const approvals = pgTable(
  "approvals",
  {
    id: uuid("id").primaryKey(),
    projectId: uuid("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    nodeId: uuid("node_id").notNull(),
    operation: text("operation").notNull(),
    /** The tool's arguments as asked (without expected_revision and dry_run): the retry must ask the same. */
    arguments: jsonb("arguments").$type<Record<string, unknown>>().notNull(),
    revision: integer("revision").notNull(),
    /** Who asked (the MCP credential), and the key its retries are matched by. */
    requestedBy: jsonb("requested_by").$type<Actor>().notNull(),
    requester: text("requester").notNull(),
    status: text("status").$type<ApprovalStatus>().notNull().default("pending"),
    decidedBy: jsonb("decided_by").$type<Actor>(),
    decidedAt: timestamp("decided_at", { withTimezone: true, mode: "date" }),
    /** What the person who decided wrote for the agent (the agent's retry reads it). */
    decisionNote: text("decision_note"),
    /** Approved in part (status partial, then used): what was published and what was left out. */
    decisionParts: jsonb("decision_parts").$type<ApprovalParts>(),
    usedAt: timestamp("used_at", { withTimezone: true, mode: "date" }),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    expiresAt: timestamp("expires_at", { withTimezone: true, mode: "date" }).notNull(),
  },
  (t) => [
    index("approvals_project_created_idx").on(t.projectId, t.createdAt),
    index("approvals_requester_idx").on(t.projectId, t.requester, t.operation, t.nodeId),
    check("approvals_status_check", sql`${t.status} in ('pending', 'approved', 'rejected', 'partial', 'expired', 'void', 'used')`),
  ],
);

/**
 * What an MCP client declared at initialize (2025-11-25), per credential: a stateless server sees
 * the capabilities only on that request, and the -32042 error may go only to a client that
 * declared URL elicitation.
 */
export const mcpClientCapabilities = pgTable("mcp_client_capabilities", {
  requester: text("requester").primaryKey(),
  urlElicitation: boolean("url_elicitation").notNull(),
  updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
});

export type Approval = typeof approvals.$inferSelect;
