// The MCP transport of the declared operations: each operation with tool annotations is a tool,
// its schemas, description and scopes as declared (src/lib/operation.ts).
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { McpCaller } from "../lib/caller";
import { assertStorableStrings } from "../lib/json";
import type { OperationContext, ProjectOperation } from "../lib/operation";
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
        const out = (await tool.run({ ...ctx, progress }, args as never)) as Record<string, unknown>;
        return { structuredContent: out, content: [{ type: "text", text: JSON.stringify(out) }] };
      } catch (err) {
        return errorResult(err, tool.name, ctx.deps.log);
      }
    },
  );
}
