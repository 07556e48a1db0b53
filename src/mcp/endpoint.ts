// POST /mcp: stateless Streamable HTTP. Each request gets its own McpServer and transport, bound
// to the project and scopes its bearer resolves to, so any instance can answer any request.
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { authenticateMcpBearer, bearerOf } from "../auth";
import type { Config } from "../config";
import type { AppDeps } from "../deps";
import { AppError, type ErrorCode, errorBody } from "../errors";
import { MAX_BODY_BYTES, parseJsonBody, readBodyText } from "../lib/json";
import { MCP_SCOPES } from "../lib/scopes";
import { findProject } from "../projects/service";
import { buildMcpServer } from "./server";

export const MCP_PATH = "/mcp";
/** /mcp reads its own body (JSON-RPC errors, not the admin error body): the app's parser skips it. */
export const isMcpPath = (path: string): boolean => path === MCP_PATH || path === MCP_PATH + "/";

// Batches are legal in 2025-03-26 and gone since 2025-06-18; a small bound keeps one request's work small.
export const MAX_BATCH = 20;
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

  const parsed = await readMessages(request);
  if (parsed instanceof Response) return withHeaders(parsed, cors);

  const server = buildMcpServer({ deps, db, project, caller, now });
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true, maxRequestBodySize: MAX_BODY_BYTES });
  try {
    await server.connect(transport);
    const res = await transport.handleRequest(request, { parsedBody: parsed.body });
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

async function readMessages(request: Request): Promise<{ body: unknown } | Response> {
  if (!isJsonPost(request)) return { body: undefined }; // the transport answers 406/415 without reading
  let body: unknown;
  try {
    body = parseJsonBody(await readBodyText(request, MAX_BODY_BYTES));
  } catch (err) {
    if (err instanceof AppError && err.code === "payload_too_large") return rpcError(413, -32600, `Invalid Request: body exceeds ${MAX_BODY_BYTES} bytes`);
    return rpcError(400, -32700, `Parse error: ${err instanceof AppError ? err.message : "invalid JSON"}`);
  }
  if (body === undefined) return rpcError(400, -32700, "Parse error: empty body");
  const messages = Array.isArray(body) ? body : [body];
  if (messages.length === 0) return rpcError(400, -32600, "Invalid Request: empty batch");
  if (messages.length > MAX_BATCH) return rpcError(400, -32600, `Invalid Request: a batch may hold at most ${MAX_BATCH} messages`);
  // JSON that is not a JSON-RPC 2.0 message is an Invalid Request (-32600), not a parse error.
  if (messages.some((m) => !JSONRPCMessageSchema.safeParse(m).success)) return rpcError(400, -32600, "Invalid Request: not a JSON-RPC 2.0 message");
  return { body };
}

function isJsonPost(request: Request): boolean {
  const accept = request.headers.get("accept") ?? "";
  const type = (request.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  return accept.includes("application/json") && accept.includes("text/event-stream") && type === "application/json";
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

function rpcError(status: number, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), {
    status,
    headers: { "content-type": "application/json" },
  });
}

function withHeaders(res: Response, headers: Record<string, string>): Response {
  for (const [k, v] of Object.entries(headers)) res.headers.set(k, v);
  return res;
}
