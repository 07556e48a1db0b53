import { z } from "zod";
import { Id, Json, NodeId, Page, PerPage, Timestamp } from "../lib/schemas";

const ACTOR_KINDS = ["admin_key", "mcp_token", "oauth", "user", "system", "scheduler"] as const;

export const ActorOut = z.object({
  kind: z.enum(ACTOR_KINDS),
  id: z.string().nullable().describe("admin key id, MCP token id, the OAuth user's id; null for the system"),
  name: z.string().nullable().describe("the key's or token's name, the OAuth user's email (the activity log shows current names; a revision, those of its time)"),
  user: z.object({ id: z.string(), email: z.string().nullable() }).nullable().optional(),
  client: z.object({ id: z.string(), name: z.string().nullable() }).nullable().optional(),
  scheduled_by: z
    .object({ kind: z.enum(ACTOR_KINDS), id: z.string().nullable(), name: z.string().nullable() })
    .nullable()
    .optional()
    .describe("scheduler only: who set the schedule it carried out"),
});

export const ActivityOut = z.object({
  id: Id,
  operation: z.string().describe('the operation that wrote, e.g. "update_node"; "system" for writes outside one (the demo seed)'),
  actor: ActorOut,
  target: Json.describe('what the write acted on: { kind: "node" | "translation" | "theme" | "ai_provider" | "mcp_token" | "member" | …, id, … }'),
  node_id: Id.nullable(),
  revision: z.number().int().nullable().describe("the node's revision after the write"),
  created_at: Timestamp,
});

const When = z.iso.datetime({ offset: true });

export const ActivityQuery = z.object({
  actor_kind: z.enum(ACTOR_KINDS).optional(),
  actor_id: z.string().min(1).max(200).optional().describe("an admin key, MCP token, OAuth user or OAuth client id"),
  node_id: NodeId.optional(),
  from: When.optional().describe("entries at or after this time (ISO 8601)"),
  to: When.optional().describe("entries before this time (ISO 8601)"),
  page: Page,
  per_page: PerPage(50),
});
