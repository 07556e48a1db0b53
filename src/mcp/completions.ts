// completion/complete: values for prompt arguments and resource-template variables, from the
// caller's project (node paths and ids by prefix, its locales, its collections).
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { CompleteRequestSchema, type CompleteResult, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { describeError } from "../errors";
import { type ArgKind, promptArgKind } from "./prompts";
import { byIdTemplate, byPathTemplate } from "./resources";
import { type Suggestions, suggestCollections, suggestFrom, suggestNodeIds, suggestNodePaths } from "./suggest";
import type { ToolContext } from "./tools";

const DAYS = ["1", "7", "14", "30", "90", "365"];
const NOTHING: CompleteResult = { completion: { values: [], total: 0, hasMore: false } };

export function registerCompletions(server: McpServer, ctx: ToolContext): void {
  const low = server.server;
  low.registerCapabilities({ completions: {} });
  low.setRequestHandler(CompleteRequestSchema, async (req): Promise<CompleteResult> => {
    const { ref, argument } = req.params;
    const kind = ref.type === "ref/prompt" ? promptArgKind(ref.name, argument.name) : templateVarKind(ctx, ref.uri, argument.name);
    // A reference this server does not have completes to nothing, the spec's "no suggestions":
    // clients ask while the user is still typing, and an error there only gets in the way.
    if (kind === null) return NOTHING;
    if (!ctx.caller.scopes.includes("content:read")) throw new McpError(ErrorCode.InvalidParams, "completions read the project's content: this token lacks the content:read scope");
    try {
      const s = await suggestions(ctx, kind, argument.value.slice(0, 2048));
      return { completion: { values: s.values, total: s.total, hasMore: s.hasMore } };
    } catch (err) {
      ctx.deps.log.error("mcp completion failed", describeError(err));
      throw new McpError(ErrorCode.InternalError, "internal error");
    }
  });
}

function templateVarKind(ctx: ToolContext, uri: string, variable: string): ArgKind | "id" | null {
  const slug = ctx.project.slug;
  if (variable === "locale" && (uri === byIdTemplate(slug) || uri === byPathTemplate(slug))) return "locale";
  if (uri === byIdTemplate(slug) && variable === "id") return "id";
  if (uri === byPathTemplate(slug) && variable === "path") return "path";
  return null;
}

function suggestions(ctx: ToolContext, kind: ArgKind | "id", value: string): Promise<Suggestions> | Suggestions {
  const { db, project } = ctx;
  switch (kind) {
    case "path":
      return suggestNodePaths(db, project.id, value.replace(/^\/+/, ""));
    case "id":
      return suggestNodeIds(db, project.id, value);
    case "collection":
      return suggestCollections(db, project.id, value.replace(/^\/+/, ""));
    case "locale":
      return suggestFrom(project.locales, value);
    case "days":
      return suggestFrom(DAYS, value);
  }
}
