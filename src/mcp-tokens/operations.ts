import { z } from "zod";
import { asAdminCaller } from "../auth";
import { projectOperation } from "../core/operation";
import { AppError } from "../errors";
import { Empty } from "../lib/schemas";
import { McpTokenIn, McpTokenOut } from "./model";
import { createMcpToken, deleteMcpToken, listMcpTokens, tokenToWire } from "./service";

const BASE = "/admin/p/:ref/ai/mcp/tokens";

const listTokensOp = projectOperation({
  name: "list_mcp_tokens",
  title: "List MCP tokens",
  description: "List the project's MCP tokens (hints only, never the token).",
  scopes: ["ai:read"],
  input: z.object({}),
  output: z.object({ tokens: z.array(McpTokenOut) }),
  http: { method: "GET", path: BASE, data: "tokens", tag: "mcp", summary: "List the project's MCP tokens (hints only, never the token)" },
  run: async ({ deps, project }) => ({ tokens: (await listMcpTokens(deps.db, project)).map(tokenToWire) }),
});

const createTokenOp = projectOperation({
  name: "create_mcp_token",
  title: "Create an MCP token",
  description: "Create an MCP token; the plaintext is in this response only. Scopes must be MCP scopes the calling key holds.",
  scopes: ["ai:write"],
  input: McpTokenIn,
  output: z.object({
    token: McpTokenOut.omit({ last_used_at: true }).extend({ token: z.string().describe("the plaintext bearer (cms_mcp_…), shown in this response only") }),
  }),
  http: {
    method: "POST",
    path: BASE,
    status: 201,
    data: "token",
    noStore: true,
    tag: "mcp",
    summary: "Create an MCP token; the plaintext is in this response only",
    description: "Scopes must be MCP scopes the calling key holds.",
  },
  async run({ deps, project, caller, now }, args) {
    const { token, plaintext } = await createMcpToken(deps.db, project, args, asAdminCaller(caller), now);
    const { last_used_at: _, ...wire } = tokenToWire(token);
    return { token: { ...wire, token: plaintext } };
  },
});

const deleteTokenOp = projectOperation({
  name: "delete_mcp_token",
  title: "Delete an MCP token",
  description: "Delete an MCP token; it stops working at once.",
  scopes: ["ai:write"],
  input: z.object({ id: z.string().max(64).optional().describe("token id (or pass { id } as a JSON body)") }),
  output: Empty,
  http: [
    { method: "DELETE", path: BASE, status: 204, bodyOrQuery: true, tag: "mcp", summary: "Delete an MCP token (by ?id= or JSON { id }); it stops working at once" },
    { method: "DELETE", path: `${BASE}/:id`, status: 204, tag: "mcp", summary: "Delete an MCP token by id; it stops working at once" },
  ],
  async run({ deps, project }, args) {
    if (!args.id) throw new AppError("missing_parameter", 'give the token id as ?id= or a JSON body { "id" }', { field: "id" });
    await deleteMcpToken(deps.db, project, args.id);
    return {};
  },
});

export const mcpTokenOperations = [listTokensOp, createTokenOp, deleteTokenOp];
