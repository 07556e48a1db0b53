import { Elysia } from "elysia";
import type { AppDeps } from "../deps";
import { handleMcpPost, MCP_PATH, mcpMethodNotAllowed, mcpPreflight } from "./endpoint";

const mcpDoc = (summary: string, description?: string) => ({ tags: ["mcp"], summary, description, security: [{ bearerAuth: [] }] });

export function mcpRoutes(deps: AppDeps) {
  // Handlers hand back the transport's Response as is; set.status keeps the request log honest.
  return new Elysia()
    .post(
      MCP_PATH,
      async ({ request, set }) => {
        const res = await handleMcpPost(deps, request);
        set.status = res.status;
        return res;
      },
      {
        detail: mcpDoc(
          "MCP endpoint (JSON-RPC over stateless Streamable HTTP)",
          "Authorization: Bearer <MCP token (cms_mcp_…) or OAuth access token>. Send Accept: application/json, text/event-stream and Content-Type: application/json. " +
            "Answers are JSON (no SSE, no sessions). 401 carries WWW-Authenticate with the protected resource metadata URL.",
        ),
      },
    )
    .get(MCP_PATH, ({ request, set }) => ((set.status = 405), mcpMethodNotAllowed(deps, request)), { detail: mcpDoc("Not supported (405): no server-sent stream") })
    .delete(MCP_PATH, ({ request, set }) => ((set.status = 405), mcpMethodNotAllowed(deps, request)), { detail: mcpDoc("Not supported (405): no sessions to end") })
    .put(MCP_PATH, ({ request, set }) => ((set.status = 405), mcpMethodNotAllowed(deps, request)), { detail: { hide: true } })
    .patch(MCP_PATH, ({ request, set }) => ((set.status = 405), mcpMethodNotAllowed(deps, request)), { detail: { hide: true } })
    .options(
      MCP_PATH,
      ({ request, set }) => {
        const res = mcpPreflight(deps, request);
        set.status = res.status;
        return res;
      },
      { detail: { hide: true } },
    );
}
