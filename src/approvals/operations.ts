// The approvals' admin API: an editorial UI lists requests and decides them as the
// approval page does. Admin routes only, never MCP tools: an agent cannot approve its own request.
import { z } from "zod";
import { projectOperation } from "../core/operation";
import { Id } from "../lib/schemas";
import { PUBLISH_SCOPES } from "../lib/scopes";
import { ApprovalOut, ApprovalQuery } from "./model";
import { approvalToWire, decideApproval, listApprovals } from "./service";

const PageInfo = { total: z.number().int(), page: z.number().int(), per_page: z.number().int() };

const listApprovalsOp = projectOperation({
  name: "list_approvals",
  title: "List approval requests",
  description:
    "The project's approval requests, newest first: what an MCP caller without content:publish asked to publish, unpublish, archive, restore or delete, " +
    "and their status (pending, approved, rejected, expired, void: the node changed since, used: carried out). Filter with status.",
  scopes: ["content:read"],
  input: z.object(ApprovalQuery),
  output: z.object({ approvals: z.array(ApprovalOut), ...PageInfo }),
  http: { method: "GET", path: "/admin/p/:ref/approvals", data: "approvals", tag: "approvals", summary: "List approval requests (pending, approved, rejected, expired…), newest first" },
  run: ({ deps, project, now }, args) => listApprovals(deps.db, deps.config, project.id, args, now),
});

const decisionOp = (decision: "approved" | "rejected") =>
  projectOperation({
    name: decision === "approved" ? "approve_approval" : "reject_approval",
    title: decision === "approved" ? "Approve a request" : "Reject a request",
    description:
      decision === "approved"
        ? "Approve a pending request: the agent's retry of the same call then carries it out, once, if the node has not changed since it asked (409 conflict and the request void otherwise)."
        : "Reject a pending request: the agent's retry of the same call answers that it was rejected.",
    scopes: PUBLISH_SCOPES,
    input: z.object({ approval_id: Id, note: z.string().max(2000).optional().describe("for the agent: its retry reads it (why it was rejected, what to change)") }),
    output: z.object({ approval: ApprovalOut }),
    activity: { kind: "approval" },
    http: {
      method: "POST",
      path: `/admin/p/:ref/approvals/:id/${decision === "approved" ? "approve" : "reject"}`,
      params: { id: "approval_id" },
      data: "approval",
      tag: "approvals",
      errors: [409],
    },
    run: async ({ deps, project, now, write }, args) => ({
      approval: approvalToWire(deps.config, await decideApproval(deps.db, write, project.id, args.approval_id, decision, now, args.note ?? null)),
    }),
  });

export const approvalOperations = [listApprovalsOp, decisionOp("approved"), decisionOp("rejected")];
