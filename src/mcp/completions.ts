// completion/complete: values for prompt arguments and resource-template variables, from the
// caller's project (node paths and ids by prefix, its locales, its collections).
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { CompleteRequestSchema, type CompleteResult, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { hidden } from "./errors";
import { type ArgKind, promptArgKind } from "./prompts";
import { byIdTemplate, byPathTemplate } from "./resources";
import { suggestFrom, suggestNodes } from "./suggest";
import type { ToolContext } from "./tools";

const DAYS = ["1", "7", "14", "30", "90", "365"];

export function registerCompletions(server: McpServer, ctx: ToolContext): void {
  server.server.setRequestHandler(CompleteRequestSchema, async (req): Promise<CompleteResult> => {
    const { ref, argument } = req.params;
    const kind = ref.type === "ref/prompt" ? promptArgKind(ref.name, argument.name) : templateVarKind(ctx, ref.uri, argument.name);
    // A reference this server does not have completes to nothing, the spec's "no suggestions":
    // clients ask while the user is still typing, and an error there only gets in the way.
    if (kind === null) return { completion: { values: [], total: 0, hasMore: false } };
    if (!ctx.caller.scopes.includes("content:read")) throw new McpError(ErrorCode.InvalidParams, "completions read the project's content: this token lacks the content:read scope");
    const value = argument.value.slice(0, 2048);
    if (kind === "locale" || kind === "days") return { completion: suggestFrom(kind === "locale" ? ctx.project.locales : DAYS, value) };
    const completion = await suggestNodes(ctx.deps.db, ctx.project.id, kind, kind === "id" ? value : value.replace(/^\/+/, "")).catch((err: unknown) => {
      throw hidden(ctx.deps.log, err, "mcp completion failed");
    });
    return { completion };
  });
}

function templateVarKind(ctx: ToolContext, uri: string, variable: string): ArgKind | "id" | null {
  // Each variable of the two node templates completes as the kind it is named after.
  const vars: readonly (ArgKind | "id")[] = uri === byIdTemplate(ctx.project.slug) ? ["id", "locale"] : uri === byPathTemplate(ctx.project.slug) ? ["path", "locale"] : [];
  return vars.find((v) => v === variable) ?? null;
}
