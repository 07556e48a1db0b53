import { assertStorableStrings } from "../lib/json";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { errorResult, missingScopeError } from "./errors";
import { registerNodeResources } from "./resources";
import { TOOLS } from "./tools";
import type { ToolContext, ToolDef } from "./tools/tool";

export const SERVER_INFO = { name: "content-service", title: "Content Service", version: "0.1.0" } as const;
// Bounds the work one tools/call can ask for (block arrays, translation maps): about a megabyte of small values.
const MAX_TOOL_INPUT_ELEMENTS = 20_000;

function instructions(ctx: ToolContext): string {
  const p = ctx.project;
  return [
    `This server manages the content of one project: "${p.name}" (slug ${p.slug}, id ${p.id}).`,
    `Locales: ${p.locales.join(", ")} (default ${p.defaultLocale}).`,
    `This credential holds the scopes: ${ctx.caller.scopes.join(", ") || "none"}.`,
    "Nodes are pages, collections and entries addressed by id or slug path; new nodes are drafts until publish_node.",
    "Nodes are also readable as resources cms://{project slug}/nodes/{id}.",
  ].join(" ");
}

/** A fresh server per HTTP request (stateless): everything it serves is bound to the caller's project. */
export function buildMcpServer(ctx: ToolContext): McpServer {
  const server = new McpServer(SERVER_INFO, {
    capabilities: { tools: {} },
    instructions: instructions(ctx),
    maxToolInputElements: MAX_TOOL_INPUT_ELEMENTS,
  });
  for (const tool of TOOLS) registerTool(server, ctx, tool);
  registerNodeResources(server, ctx);
  return server;
}

function registerTool(server: McpServer, ctx: ToolContext, tool: ToolDef): void {
  server.registerTool(
    tool.name,
    {
      title: tool.title,
      description: `${tool.description} Requires scope: ${tool.scopes.join(", ")}.`,
      inputSchema: tool.input,
      outputSchema: tool.output,
      annotations: { title: tool.title, ...tool.annotations },
    },
    async (args: unknown): Promise<CallToolResult> => {
      const missing = tool.scopes.filter((s) => !ctx.caller.scopes.includes(s));
      if (missing.length > 0) return missingScopeError(tool.name, missing, ctx.caller.scopes);
      try {
        assertStorableStrings(args);
        const out = (await tool.run(ctx, args as never)) as Record<string, unknown>;
        return { structuredContent: out, content: [{ type: "text", text: JSON.stringify(out) }] };
      } catch (err) {
        return errorResult(err, tool.name, ctx.deps.log);
      }
    },
  );
}
