import { Elysia, t } from "elysia";
import { adminAuth, adminDoc } from "../../auth";
import type { AppDeps } from "../../deps";
import { AppError } from "../../errors";
import { errorResponses, RefParams } from "../../lib/model";
import { McpTokenModel } from "./model";
import { createMcpToken, deleteMcpToken, listMcpTokens, tokenToWire } from "./service";

export function mcpTokenRoutes(deps: AppDeps) {
  const { db } = deps;
  return new Elysia({ prefix: "/admin/p/:ref/ai/mcp/tokens" })
    .use(adminAuth(deps))
    .get("", async ({ project }) => ({ data: (await listMcpTokens(db, project)).map(tokenToWire) }), {
      projectScope: "ai:read",
      params: RefParams,
      response: { 200: t.Object({ data: t.Array(McpTokenModel.token) }), ...errorResponses },
      detail: adminDoc("mcp", "List the project's MCP tokens (hints only, never the token)"),
    })
    .post(
      "",
      async ({ project, caller, body, set }) => {
        const { token, plaintext } = await createMcpToken(db, project, body, caller, deps.now());
        const w = tokenToWire(token);
        set.status = 201;
        set.headers["cache-control"] = "no-store";
        return { data: { id: w.id, name: w.name, token: plaintext, token_hint: w.token_hint, scopes: w.scopes, created_at: w.created_at, expires_at: w.expires_at } };
      },
      {
        projectScope: "ai:write",
        params: RefParams,
        body: McpTokenModel.create,
        response: { 201: t.Object({ data: McpTokenModel.created }), ...errorResponses },
        detail: adminDoc("mcp", "Create an MCP token; the plaintext is in this response only", "Scopes must be MCP scopes the calling key holds."),
      },
    )
    .delete(
      "",
      async ({ project, query, body, set }) => {
        const id = query.id ?? body?.id;
        if (!id) throw new AppError("missing_parameter", "give the token id as ?id= or a JSON body { \"id\" }", { field: "id" });
        await deleteMcpToken(db, project, id);
        set.status = 204;
        return undefined;
      },
      {
        projectScope: "ai:write",
        params: RefParams,
        query: McpTokenModel.deleteQuery,
        body: McpTokenModel.deleteBody,
        detail: adminDoc("mcp", "Delete an MCP token (by ?id= or JSON { id }); it stops working at once"),
      },
    )
    .delete(
      "/:id",
      async ({ project, params, set }) => {
        await deleteMcpToken(db, project, params.id);
        set.status = 204;
        return undefined;
      },
      {
        projectScope: "ai:write",
        params: McpTokenModel.idParams,
        detail: adminDoc("mcp", "Delete an MCP token by id; it stops working at once"),
      },
    );
}
