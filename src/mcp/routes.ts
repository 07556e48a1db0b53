import { type Context, Elysia } from "elysia";
import type { AppDeps } from "../core/deps";
import { handleMcpPost, MCP_PATH, mcpMethodNotAllowed, mcpPreflight } from "./endpoint";

const mcpDoc = (summary: string, description?: string) => ({ tags: ["mcp"], summary, description, security: [{ bearerAuth: [] }] });
// Handlers hand back the transport's Response as is; set.status keeps the request log honest.
const answer = (set: Context["set"], res: Response): Response => ((set.status = res.status), res);

export function mcpRoutes(deps: AppDeps) {
  const notAllowed = ({ request, set }: Context) => answer(set, mcpMethodNotAllowed(deps, request));
  return new Elysia()
    .post(MCP_PATH, async ({ request, set }) => answer(set, await handleMcpPost(deps, request)), {
      detail: mcpDoc(
        "MCP endpoint (JSON-RPC over stateless Streamable HTTP)",
        "Authorization: Bearer <MCP token (cms_mcp_…) or OAuth access token>. Send Accept: application/json, text/event-stream and Content-Type: application/json. " +
          "Answers are JSON (no SSE, no sessions). 401 carries WWW-Authenticate with the protected resource metadata URL.",
      ),
    })
    .get(MCP_PATH, notAllowed, { detail: mcpDoc("Not supported (405): no server-sent stream") })
    .delete(MCP_PATH, notAllowed, { detail: mcpDoc("Not supported (405): no sessions to end") })
    .put(MCP_PATH, notAllowed, { detail: { hide: true } })
    .patch(MCP_PATH, notAllowed, { detail: { hide: true } })
    .options(MCP_PATH, ({ request, set }) => answer(set, mcpPreflight(deps, request)), { detail: { hide: true } });
}
