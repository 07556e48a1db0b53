// The approvals' admin API: an editorial UI lists requests and decides them as the
// approval page does. Admin routes only, never MCP tools: an agent cannot approve its own request.
import { z } from "zod";
import { projectOperation } from "../core/operation";
import { Id } from "../lib/schemas";
import { PUBLISH_SCOPES } from "../lib/scopes";
import { ApprovalOut, ApprovalQuery, PartOut } from "./model";
import { approveInPart, publicationParts } from "./parts";
import { approvalToWire, decideApproval, getApproval, listApprovals } from "./service";

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
    input: z.object({
      approval_id: Id,
      note: z.string().max(2000).optional().describe("for the agent: its retry reads it (why it was rejected, what to change)"),
      ...(decision === "approved"
        ? {
            left_out: z
              .array(z.string().max(600))
              .max(500)
              .optional()
              .describe(
                "approve in part (publish_node of a whole node): the parts not to publish, as get_approval lists them; they go back to the published version in the working copy, the rest is published now",
              ),
          }
        : {}),
    }),
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
    run: async ({ deps, project, now, write }, args: { approval_id: string; note?: string; left_out?: string[] }) => {
      const note = args.note ?? null;
      // Approved in part: the person's own content write publishes what was accepted.
      const decided =
        args.left_out && args.left_out.length > 0
          ? await approveInPart(deps.db, write, project, await getApproval(deps.db, project.id, args.approval_id, now), args.left_out, note, now)
          : await decideApproval(deps.db, write, project.id, args.approval_id, decision, now, note);
      return { approval: approvalToWire(deps.config, decided) };
    },
  });

const getApprovalOp = projectOperation({
  name: "get_approval",
  title: "Read an approval request",
  description:
    "One approval request, with the parts of its change when it can be approved in part (a pending publish_node of a whole node): each part's pointer, change and values before (published) and after (the working copy). Null otherwise.",
  scopes: ["content:read"],
  input: z.object({ approval_id: Id }),
  output: z.object({ approval: ApprovalOut, parts: z.array(PartOut).nullable() }),
  http: { method: "GET", path: "/admin/p/:ref/approvals/:id", params: { id: "approval_id" }, data: "approval", tag: "approvals" },
  run: async ({ deps, project, now }, args) => {
    const found = await getApproval(deps.db, project.id, args.approval_id, now);
    return { approval: approvalToWire(deps.config, found), parts: await publicationParts(deps.db, found) };
  },
});

export const approvalOperations = [listApprovalsOp, getApprovalOp, decisionOp("approved"), decisionOp("rejected")];
