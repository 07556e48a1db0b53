// POST /mcp: stateless Streamable HTTP. Each request gets its own McpServer and transport, bound
// to the project and scopes its bearer resolves to, so any instance can answer any request.
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { authenticateMcpBearer, bearerOf } from "../auth";
import type { Config } from "../config";
import type { AppDeps } from "../deps";
import { type ErrorCode, errorBody } from "../errors";
import { MAX_BODY_BYTES } from "../lib/json";
import { MCP_SCOPES } from "../lib/scopes";
import { findProject } from "../projects/service";
import { onlyRejected, readMessages, withRejected } from "./jsonrpc";
import { buildMcpServer } from "./server";
import { TOOLS } from "./tools";

export const MCP_PATH = "/mcp";
/** /mcp reads its own body (JSON-RPC errors, not the admin error body): the app's parser skips it. */
export const isMcpPath = (path: string): boolean => path === MCP_PATH || path === MCP_PATH + "/";

const TOOL_NAMES: ReadonlySet<string> = new Set(TOOLS.map((t) => t.name));
const ALLOW_HEADERS = "authorization, content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id";
const EXPOSE_HEADERS = "www-authenticate, mcp-session-id, mcp-protocol-version";

export async function handleMcpPost(deps: AppDeps, request: Request): Promise<Response> {
  const { config, db } = deps;
  const refused = checkHostAndOrigin(config, request);
  if (refused) return refused;
  const cors = corsHeaders(config, request);

  const authorization = request.headers.get("authorization");
  const now = deps.now();
  const caller = await authenticateMcpBearer(db, authorization, `${config.publicUrl}${MCP_PATH}`, now);
  const project = caller ? await findProject(db, caller.projectId) : null;
  if (!caller || !project) {
    return httpError(401, "unauthorized", "a valid MCP token or OAuth access token is required (Authorization: Bearer …)", {
      ...cors,
      "www-authenticate": wwwAuthenticate(config, bearerOf(authorization) !== null),
    });
  }

  const read = await readMessages(request, TOOL_NAMES);
  if (read instanceof Response) return withHeaders(read, cors);
  const answered = onlyRejected(read);
  if (answered) return withHeaders(answered, { ...cors, "cache-control": "no-store" });

  const server = buildMcpServer({ deps, db, project, caller, now });
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true, maxRequestBodySize: MAX_BODY_BYTES });
  try {
    await server.connect(transport);
    const res = await withRejected(await transport.handleRequest(request, { parsedBody: read.body }), read);
    return withHeaders(res, { ...cors, "cache-control": "no-store" });
  } finally {
    // JSON response mode: every answer is in `res` already, nothing streams after this point.
    await server.close().catch(() => {});
  }
}

/** GET (server-sent stream) and DELETE (session end) have no meaning for a stateless server. */
export function mcpMethodNotAllowed(deps: AppDeps, request: Request): Response {
  return httpError(405, "method_not_allowed", `${request.method} is not supported on ${MCP_PATH}: use POST (stateless Streamable HTTP, no sessions)`, {
    allow: "POST",
    ...corsHeaders(deps.config, request),
  });
}

/** CORS preflight for browser-based MCP clients served from an allowed Origin. */
export function mcpPreflight(deps: AppDeps, request: Request): Response {
  const refused = checkHostAndOrigin(deps.config, request);
  if (refused) return refused;
  return new Response(null, {
    status: 204,
    headers: {
      ...corsHeaders(deps.config, request),
      "access-control-allow-methods": "POST",
      "access-control-allow-headers": ALLOW_HEADERS,
      "access-control-max-age": "600",
      allow: "POST",
    },
  });
}

export function wwwAuthenticate(config: Config, tokenPresented: boolean): string {
  const parts = [`resource_metadata="${config.publicUrl}/.well-known/oauth-protected-resource${MCP_PATH}"`, `scope="${MCP_SCOPES.join(" ")}"`];
  if (tokenPresented) parts.push('error="invalid_token"');
  return `Bearer ${parts.join(", ")}`;
}

/**
 * DNS rebinding defence: the Host must be this service's public host or a loopback name, and a
 * browser's Origin (when present) must be on the allow-list.
 */
function checkHostAndOrigin(config: Config, request: Request): Response | null {
  if (!hostAllowed(config, request)) return httpError(403, "forbidden", "Host header not allowed for /mcp");
  const origin = request.headers.get("origin");
  if (origin !== null && !originAllowed(config, origin)) return httpError(403, "forbidden", `Origin ${origin.slice(0, 200)} is not allowed for /mcp`);
  return null;
}

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

export function hostAllowed(config: Config, request: Request): boolean {
  const raw = request.headers.get("host") ?? new URL(request.url).host;
  const pub = new URL(config.publicUrl);
  let host: URL;
  try {
    host = new URL(`${pub.protocol}//${raw}`);
  } catch {
    return false;
  }
  if (host.host === pub.host || LOOPBACK.has(host.hostname)) return true;
  return config.mcpAllowedHosts.some((h) => h.toLowerCase() === host.host || h.toLowerCase() === host.hostname);
}

function originAllowed(config: Config, origin: string): boolean {
  const o = origin.toLowerCase();
  return config.mcpAllowedOrigins.some((a) => a === "*" || a.toLowerCase() === o);
}

function corsHeaders(config: Config, request: Request): Record<string, string> {
  const origin = request.headers.get("origin");
  if (origin === null || !originAllowed(config, origin)) return {};
  return { "access-control-allow-origin": origin, "access-control-expose-headers": EXPOSE_HEADERS, vary: "Origin" };
}

function httpError(status: number, code: ErrorCode, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(errorBody(code, message)), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", ...headers },
  });
}

function withHeaders(res: Response, headers: Record<string, string>): Response {
  for (const [k, v] of Object.entries(headers)) res.headers.set(k, v);
  return res;
}
