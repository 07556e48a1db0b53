// Wire shapes of revisions and the trash, declared once as the operations' schemas.
import { z } from "zod";
import { ActorOut } from "../activity/model";
import { Id, Json, Page, PerPage, Timestamp } from "../lib/schemas";

/** A revision number as an input: 1 and up. */
export const RevisionNumber = z.number().int("a revision number is an integer from 1").min(1, "a revision number is an integer from 1").max(2_147_483_647).describe("revision number (1, 2, …)");

export const RevisionOut = z.object({
  node_id: Id,
  number: z.number().int(),
  operation: z.string().describe("the operation that made it (update_node, publish_node, translate_node, restore_revision, delete_node…)"),
  actor: ActorOut,
  created_at: Timestamp,
  deleted: z.boolean().describe("true: the node's state just before it was deleted (the trash)"),
});

const DiffEntry = z.object({
  path: z.string().describe('JSON Pointer into the snapshot, e.g. "/fields/author" or "/blocks/0/data/body"'),
  before: z.unknown().optional().describe("absent when the value was added"),
  after: z.unknown().optional().describe("absent when the value was removed"),
});

export const RevisionDetailOut = RevisionOut.extend({
  snapshot: Json.describe("the node after the change: fields, SEO, status, path, parent, blocks with ids, translations"),
  diff: z.object({
    against: z.number().int().nullable().describe("the revision compared with (the previous one kept, or ?against=); null: compared with nothing"),
    changes: z.array(DiffEntry),
  }),
});

export const TrashEntryOut = z.object({
  node_id: Id,
  revision: z.number().int().describe("restore this revision to bring the node back"),
  path: z.string(),
  title: z.string(),
  type: z.string(),
  status: z.string(),
  deleted_with: Id.describe("the node the delete named: this one, or the ancestor whose deletion took it (restoring that one restores both)"),
  deleted_at: Timestamp,
  actor: ActorOut,
});

export const PagingIn = { page: Page, per_page: PerPage(20) };
export const PageInfo = { total: z.number().int(), page: z.number().int(), per_page: z.number().int() };

/** An agent credential whose changes are undone: an MCP token, or an OAuth client (for one person, or for everyone it acted for). */
export const AgentIn = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("mcp_token"), id: Id.describe("the MCP token's id") }),
  z.object({
    kind: z.literal("oauth"),
    client_id: z.string().min(1).max(2048).describe("the OAuth client's id"),
    user_id: Id.optional().describe("only what the client did for this person"),
  }),
]);

export const UndoAgentOut = z.object({
  restored: z.array(z.object({ node_id: Id, title: z.string().nullable(), to_revision: z.number().int(), revision: z.number().int().describe("the new revision the restore made") })),
  deleted: z.array(z.object({ node_id: Id, title: z.string() })).describe("nodes the agent created, now in the trash"),
  left: z
    .array(z.object({ node_id: Id, title: z.string().nullable(), reason: z.string(), revision: z.number().int().describe("the later change"), by: ActorOut }))
    .describe("nodes someone else changed after the agent: left as they are"),
});
