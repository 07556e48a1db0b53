// Wire shapes of approvals, declared once as the operations' schemas.
import { z } from "zod";
import { ActorOut } from "../activity/model";
import { Id, Json, Page, PerPage, Timestamp } from "../lib/schemas";

const APPROVAL_STATUSES = ["pending", "approved", "rejected", "partial", "expired", "void", "used"] as const;

export const ApprovalOut = z.object({
  id: Id,
  node_id: Id,
  operation: z.string().describe("what was asked: publish_node, unpublish_node, archive_node, restore_node, delete_node, restore_revision…"),
  arguments: Json.describe("the tool's arguments as asked"),
  revision: z.number().int().describe("the node's revision when asked: a change since voids the request"),
  status: z
    .enum(APPROVAL_STATUSES)
    .describe(
      "pending; approved (the agent's retry will carry it out once); rejected; partial (approved in part: the person published the accepted parts, the retry hears what was left out); expired; void (the node changed); used (carried out, or the decision answered)",
    ),
  requested_by: ActorOut.describe("the MCP credential that asked"),
  decided_by: ActorOut.nullable().describe("who approved or rejected it"),
  decided_at: Timestamp.nullable(),
  note: z.string().nullable().describe("what the person who decided wrote for the agent"),
  parts: z
    .object({ accepted: z.array(z.string()), left_out: z.array(z.string()) })
    .nullable()
    .describe("approved in part: the parts (JSON Pointers) published and those left out, which went back to the published version"),
  used_at: Timestamp.nullable(),
  created_at: Timestamp,
  expires_at: Timestamp,
  url: z.string().describe("the approval page a person opens to decide"),
});

export const ApprovalQuery = {
  status: z.enum(APPROVAL_STATUSES).optional().describe("only approvals in this status"),
  page: Page,
  per_page: PerPage(20),
};

export const PartOut = z.object({
  pointer: z.string().describe("the part: /title, /slug, /type, /parent_id, /seo/{key}, /fields/{key}, /blocks/{blockId} or /translations/{locale}"),
  change: z.enum(["added", "changed", "removed"]),
  before: z.unknown().optional().describe("in the published version"),
  after: z.unknown().optional().describe("in the working copy, which publishing makes live"),
});
