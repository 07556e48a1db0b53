// The MCP transport of the declared operations: each operation with tool annotations is a tool,
// its schemas, description and scopes as declared (src/lib/operation.ts).
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { McpCaller } from "../lib/caller";
import { assertStorableStrings } from "../lib/json";
import { isPlainObject } from "../lib/merge";
import { type OperationContext, type ProjectOperation, runOperation, undeclaredFields, undeclaredFieldsError } from "../lib/operation";
import { unmetScopes } from "../lib/scopes";
import { OPERATIONS } from "../operations";
import { errorResult, missingScopeError } from "./errors";

/** What every tool, resource and prompt runs with: resolved from the bearer on each request. */
export type ToolContext = OperationContext<McpCaller>;

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
      if (missing.length > 0) return missingScopeError(tool.name, missing, ctx.caller.scopes);
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
        const out = (await runOperation(tool, { ...ctx, progress }, args)) as Record<string, unknown>;
        return { structuredContent: out, content: [{ type: "text", text: JSON.stringify(out) }] };
      } catch (err) {
        return errorResult(err, tool.name, ctx.deps.log);
      }
    },
  );
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
    if (tool && unmetScopes(tool.scopes, ctx.caller.scopes).length === 0) {
      const fields = undeclaredFields(tool, params.arguments ?? {});
      if (fields.length > 0) return errorResult(undeclaredFieldsError(tool, fields), tool.name, ctx.deps.log);
    }
    return inner(request, extra);
  });
}
