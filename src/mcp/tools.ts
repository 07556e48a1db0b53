// The MCP transport of the declared operations: each operation with tool annotations is a tool,
// its schemas, description and scopes as declared (src/core/operation.ts).
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { type CallToolResult, UrlElicitationRequiredError } from "@modelcontextprotocol/sdk/types.js";
import type { Approval } from "../../db/schema";
import { approvalUrl, gateApproval, releaseApproval } from "../approvals/service";
import { getNode, nodeToWire } from "../content/service";
import { type OperationContext, type ProjectOperation, runOperation, undeclaredFields, undeclaredFieldsError } from "../core/operation";
import { AppError } from "../errors";
import type { McpCaller } from "../lib/caller";
import { assertStorableStrings } from "../lib/json";
import { isPlainObject } from "../lib/merge";
import { PUBLISH_SCOPE, unmetScopes } from "../lib/scopes";
import { OPERATIONS } from "../operations";
import { errorResult, missingScopeError } from "./errors";

/**
 * What every tool, resource and prompt runs with: resolved from the bearer on each request, with
 * whether the client declared URL elicitation (2026-07-28: in this request's _meta; 2025-11-25: at
 * its initialize, remembered per credential) and the protocol revision the request speaks.
 */
export type ToolContext = Omit<OperationContext<McpCaller>, "write"> & { readonly urlElicitation?: () => Promise<boolean>; readonly protocolVersion: string };

/**
 * resource_link content came with 2025-06-18 (its changelog: "resource links in tool call
 * results"); a client of an older revision validates a result against a schema without it.
 */
const RESOURCE_LINK_SINCE = "2025-06-18";

/** Every tool /mcp serves, in the order tools/list shows them. */
export const TOOLS: readonly ProjectOperation[] = OPERATIONS.filter((op): op is ProjectOperation => op.target === "project" && op.tool !== undefined);

export function registerTool(server: McpServer, ctx: ToolContext, tool: ProjectOperation, logging: boolean): void {
  server.registerTool(
    tool.name,
    {
      title: tool.title,
      description: `${tool.description} Requires scope: ${"anyOf" in tool.scopes ? tool.scopes.anyOf.join(" or ") : tool.scopes.join(", ")}.`,
      inputSchema: tool.input,
      outputSchema: tool.output,
      annotations: { title: tool.title, ...tool.tool },
    },
    async (args: unknown, extra): Promise<CallToolResult> => {
      const missing = unmetScopes(tool.scopes, ctx.caller.scopes);
      // Lacking only content:publish: a person may approve the call (a dry run writes nothing and needs no approval).
      if (needsApproval(tool, missing, args, ctx.caller.scopes)) return approvalGate(ctx, tool, args as Record<string, unknown>);
      if (missing.length > 0 && !(isDryRun(args) && onlyPublish(missing) && ctx.caller.scopes.includes("content:write")))
        return missingScopeError(tool.name, missing, ctx.caller.scopes, "anyOf" in tool.scopes);
      const token = extra._meta?.progressToken;
      // Progress only for a client that asked (a progressToken); the endpoint streams such answers.
      const progress: ToolContext["progress"] =
        token === undefined
          ? undefined
          : async (done, total, message) => {
              await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: done, total, message } });
              if (logging) await extra.sendNotification({ method: "notifications/message", params: { level: "info", logger: tool.name, data: message } });
            };
      try {
        assertStorableStrings(args);
        return toolResult(ctx, tool, (await runOperation(tool, { ...ctx, progress }, args)) as Record<string, unknown>);
      } catch (err) {
        return errorResult(err, tool.name, ctx.deps.log);
      }
    },
  );
}

/**
 * A tool's answer: the structured output, the same as JSON text, and a resource_link for each
 * resource the operation declares its answer names (dates order the revisions: YYYY-MM-DD).
 */
function toolResult(ctx: ToolContext, tool: ProjectOperation, out: Record<string, unknown>): CallToolResult {
  const links = tool.links && ctx.protocolVersion >= RESOURCE_LINK_SINCE ? tool.links(out).map((link) => ({ type: "resource_link" as const, ...link })) : [];
  return { structuredContent: out, content: [{ type: "text", text: JSON.stringify(out) }, ...links] };
}

const onlyPublish = (missing: readonly string[]): boolean => missing.length === 1 && missing[0] === PUBLISH_SCOPE;
const isDryRun = (args: unknown): boolean => isPlainObject(args) && args.dry_run === true;
/** A caller that may edit drafts (content:write) but not publish asks a person; one that may not even edit is refused. */
const needsApproval = (tool: ProjectOperation, missing: readonly string[], args: unknown, held: readonly string[]): boolean =>
  onlyPublish(missing) && held.includes("content:write") && !isDryRun(args) && isPlainObject(args) && typeof args.node_id === "string" && !("anyOf" in tool.scopes);

/**
 * The call of a caller without content:publish. Approved (at the node's revision): carried
 * out, bound to that revision. Rejected: says so, once. Otherwise the person is asked: a URL
 * elicitation of the approval page for a client that declared it (the -32042 error, which the
 * 2026-07-28 endpoint answers as an input_required result), else a tool error with the link.
 */
async function approvalGate(ctx: ToolContext, tool: ProjectOperation, args: Record<string, unknown>): Promise<CallToolResult> {
  const { deps, project, caller } = ctx;
  try {
    const gate = await gateApproval(deps.db, deps.config, project.id, caller, tool.name, args, deps.now());
    const { approval } = gate;
    if (gate.kind === "approved") {
      try {
        return toolResult(ctx, tool, (await runOperation(tool, ctx, { ...args, expected_revision: approval.revision })) as Record<string, unknown>);
      } catch (err) {
        await releaseApproval(deps.db, approval.id);
        throw err;
      }
    }
    const what = `${tool.name} of node ${approval.nodeId} (revision ${approval.revision})`;
    if (gate.kind === "partial") return partlyApproved(ctx, approval, what);
    const url = approvalUrl(deps.config, approval.id);
    if (gate.kind === "rejected") {
      const note = approval.decisionNote ? ` Their note: ${approval.decisionNote}` : "";
      throw new AppError("approval_rejected", `rejected: a person rejected ${what}; nothing was done.${note}`, { approval_id: approval.id, status: "rejected", note: approval.decisionNote });
    }
    const voided = gate.voided ? ` The earlier request was void: the node changed since it was asked (revision ${gate.voided.revision}).` : "";
    const message = `${tool.name} needs the content:publish scope, which this credential lacks: a person must approve ${what}.${voided} Once they have, call ${tool.name} again with the same arguments.`;
    if (ctx.urlElicitation && (await ctx.urlElicitation())) throw new UrlElicitationRequiredError([{ mode: "url", message, url, elicitationId: approval.id }], message);
    throw new AppError("approval_required", `${message} Ask a person who may publish in this project to open ${url} and approve it (expires ${approval.expiresAt.toISOString()}).`, {
      approval_id: approval.id,
      url,
      expires_at: approval.expiresAt.toISOString(),
    });
  } catch (err) {
    if (err instanceof UrlElicitationRequiredError) throw err;
    return errorResult(err, tool.name, deps.log);
  }
}

/**
 * The retry of a request a person approved in part: they published the accepted parts themselves
 * (the node as it is now is the answer, as publish_node's), and the agent reads what was left out.
 */
async function partlyApproved(ctx: ToolContext, approval: Approval, what: string): Promise<CallToolResult> {
  const parts = approval.decisionParts ?? { accepted: [], left_out: [] };
  const node = nodeToWire(await getNode(ctx.deps.db, ctx.project.id, approval.nodeId));
  const note = approval.decisionNote ? ` Their note: ${approval.decisionNote}` : "";
  const text =
    `approved in part: a person published ${what} without ${parts.left_out.join(", ")} (set back to the published version in the working copy); ` + `published: ${parts.accepted.join(", ")}.${note}`;
  const out = { node };
  return {
    structuredContent: out,
    content: [
      { type: "text", text },
      { type: "text", text: JSON.stringify({ ...out, approval: { id: approval.id, status: "partial", ...parts, note: approval.decisionNote } }) },
    ],
  };
}

const TOOL_BY_NAME: ReadonlyMap<string, ProjectOperation> = new Map(TOOLS.map((t) => [t.name, t]));

/**
 * Undeclared arguments of a tools/call answer invalid_input, as over REST. The SDK parses the
 * arguments before a tool's handler runs and drops every field the schema does not declare, so the
 * check sits in front of its tools/call handler, on the arguments as sent. A caller lacking the
 * tool's scope is left to the handler: it learns the scope it needs, not how its input is judged.
 */
export function refuseUndeclaredArguments(server: McpServer, ctx: ToolContext): void {
  // Cast: the handler map is private in the SDK's Protocol (as in server.ts's tools/list wrapper).
  const handlers = (server.server as unknown as { _requestHandlers: Map<string, (request: unknown, extra: unknown) => Promise<unknown>> })._requestHandlers;
  const inner = handlers.get("tools/call");
  if (!inner) return;
  handlers.set("tools/call", async (request, extra) => {
    const params = isPlainObject(request) && isPlainObject(request.params) ? request.params : {};
    const tool = typeof params.name === "string" ? TOOL_BY_NAME.get(params.name) : undefined;
    const unmet = tool ? unmetScopes(tool.scopes, ctx.caller.scopes) : [];
    if (tool && (unmet.length === 0 || onlyPublish(unmet))) {
      const fields = undeclaredFields(tool, params.arguments ?? {});
      if (fields.length > 0) return errorResult(undeclaredFieldsError(tool, fields), tool.name, ctx.deps.log);
    }
    return inner(request, extra);
  });
}
