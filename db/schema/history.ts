import { boolean, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { projects } from "./projects";

/** Who made a change, as recorded (names as they were then; secrets never). */
export interface Actor {
  readonly kind: "admin_key" | "mcp_token" | "oauth" | "user" | "system" | "scheduler";
  readonly id: string | null;
  readonly name: string | null;
  /** OAuth: the user and the client the token was issued to; user: a person signed in on a page of this service (the approval page). */
  readonly user?: { readonly id: string; readonly email: string | null } | null;
  readonly client?: { readonly id: string; readonly name: string | null } | null;
  /** The scheduler: who set the schedule it carried out. */
  readonly scheduled_by?: Actor | null;
}

/**
 * Every change to a node is a revision: its number (nodes.revision after the change),
 * the operation, the actor and the node's full state after the change. No foreign key to nodes: a
 * deleted node's revisions are its trash (restorable for the retention period).
 */
export const revisions = pgTable(
  "revisions",
  {
    id: uuid("id").primaryKey(),
    projectId: uuid("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    nodeId: uuid("node_id").notNull(),
    number: integer("number").notNull(),
    operation: text("operation").notNull(),
    actor: jsonb("actor").$type<Actor>().notNull(),
    snapshot: jsonb("snapshot").$type<Record<string, unknown>>().notNull(),
    /** The change published the node (or one of its translations): its published version is this snapshot. */
    published: boolean("published").notNull().default(false),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex("revisions_node_number_uq").on(t.nodeId, t.number), index("revisions_project_created_idx").on(t.projectId, t.createdAt)],
);

/** Every write in a project, newest first when read: what, who, when, on what (secrets never). */
export const activity = pgTable(
  "activity",
  {
    id: uuid("id").primaryKey(),
    projectId: uuid("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    operation: text("operation").notNull(),
    actor: jsonb("actor").$type<Actor>().notNull(),
    /** What the write acted on: { kind: "node" | "translation" | "model" | "theme" | "provider" | "mcp_token" | "member" | …, id, … }. */
    target: jsonb("target").$type<Record<string, unknown>>().notNull(),
    nodeId: uuid("node_id"),
    revision: integer("revision"),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [index("activity_project_created_idx").on(t.projectId, t.createdAt, t.id), index("activity_node_idx").on(t.nodeId, t.createdAt)],
);
