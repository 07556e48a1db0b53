// POST /mcp: stateless Streamable HTTP. Each request gets its own McpServer and transport, bound
// to the project and scopes its bearer resolves to, so any instance can answer any request.
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { DEFAULT_NEGOTIATED_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { declaredUrlElicitation, rememberUrlElicitation } from "../approvals/service";
import { authenticateMcpBearer, bearerOf } from "../auth";
import type { Config } from "../config";
import type { AppDeps } from "../core/deps";
import { type ErrorCode, errorBody } from "../errors";
import type { McpCaller } from "../lib/caller";
import { type CorsPolicy, corsHeaders, corsPreflight, originAllowed } from "../lib/cors";
import { MAX_BODY_BYTES } from "../lib/json";
import { isPlainObject } from "../lib/merge";
import { DEFAULT_MCP_SCOPES, MCP_SCOPES, missingScopes, PUBLISH_SCOPE } from "../lib/scopes";
import { metaOf, onlyRejected, readMessages, streamsProgress, withRejected } from "./jsonrpc";
import { CLIENT_CAPABILITIES, handleModern, isModernRequest } from "./modern";
import { buildMcpServer } from "./server";
import { TOOLS } from "./tools";

export const MCP_PATH = "/mcp";

/**
 * The scopes each tool's call is challenged for. content:publish is not: a credential the person gave
 * without it asks for each publish through an approval, not for the scope.
 */
const TOOL_SCOPES: ReadonlyMap<string, readonly string[]> = new Map(TOOLS.map((t) => [t.name, "anyOf" in t.scopes ? [] : t.scopes.filter((s) => s !== PUBLISH_SCOPE)]));
const ALLOW_HEADERS = "authorization, content-type, accept, mcp-protocol-version, mcp-method, mcp-name, mcp-session-id, last-event-id";
const EXPOSE_HEADERS = "www-authenticate, mcp-session-id, mcp-protocol-version";
const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

export async function handleMcpPost(deps: AppDeps, request: Request): Promise<Response> {
  const { config, db } = deps;
  const refused = checkHostAndOrigin(config, request);
  if (refused) return refused;
  const cors = corsHeaders(mcpCors(config), request.headers.get("origin"));

  const authorization = request.headers.get("authorization");
  const now = deps.now();
  const caller = await authenticateMcpBearer(db, authorization, `${config.publicUrl}${MCP_PATH}`, now);
  if (!caller) {
    const params = [resourceMetadata(config), `scope="${DEFAULT_MCP_SCOPES.join(" ")}"`, ...(bearerOf(authorization) !== null ? ['error="invalid_token"'] : [])];
    return httpError(401, "unauthorized", "a valid MCP token or OAuth access token is required (Authorization: Bearer …)", { ...cors, "www-authenticate": `Bearer ${params.join(", ")}` });
  }

  const { request: forTransport, answer } = negotiate(request);
  const read = await readMessages(forTransport, TOOL_SCOPES);
  if (read instanceof Response) return withHeaders(read, cors);
  const challenge = scopeChallenge(config, read.body, caller);
  if (challenge) return withHeaders(challenge, cors);
  const headers = { ...cors, "cache-control": "no-store" };
  const reply = async (res: Response) => withHeaders(answer === "sse" ? await asEventStream(res) : res, headers);
  // The revision the request speaks: 2026-07-28 checks the header against _meta before anything runs;
  // after a 2025 initialize, a request without the header is 2025-03-26 (transports, Protocol Version Header).
  const protocolVersion = request.headers.get("mcp-protocol-version")?.trim() || DEFAULT_NEGOTIATED_PROTOCOL_VERSION;
  const ctx = { deps, project: caller.project, caller, now, protocolVersion };
  if (isModernRequest(read.original, request.headers)) {
    const modern = { ...ctx, urlElicitation: async () => declaresUrlElicitation(isPlainObject(read.original) ? metaOf(read.original)?.[CLIENT_CAPABILITIES] : undefined) };
    return reply(await handleModern(read.original, request.headers, read.rejected[0] ?? null, () => buildMcpServer(modern, "modern")));
  }
  await rememberInitialize(deps, caller, read.body, now);
  const answered = onlyRejected(read);
  if (answered) return reply(answered);

  const { server } = buildMcpServer({ ...ctx, urlElicitation: () => declaredUrlElicitation(db, caller) }, "legacy");
  // A client gone before its answer: the server's handlers stop (a tasks/result waiting for a job's end).
  request.signal.addEventListener("abort", () => void server.close().catch(() => {}), { once: true });
  const stream = streamsProgress(read.body, request.headers);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !stream, maxRequestBodySize: MAX_BODY_BYTES });
  let open = false;
  try {
    await server.connect(transport);
    const res = await withRejected(await transport.handleRequest(forTransport, { parsedBody: read.body }), read);
    if (stream && res.body && (res.headers.get("content-type") ?? "").includes("text/event-stream")) {
      open = true;
      // The stream ends with the tool's answer; the server is closed then, not before.
      const body = res.body.pipeThrough(new TransformStream({ flush: () => void server.close().catch(() => {}) }));
      return withHeaders(new Response(body, { status: res.status, headers: res.headers }), { ...headers, "x-accel-buffering": "no" });
    }
    return await reply(res);
  } finally {
    // JSON response mode: every answer is in `res` already, nothing streams after this point.
    if (!open) await server.close().catch(() => {});
  }
}

/**
 * The transport wants `Accept: application/json, text/event-stream` (the spec's MUST), yet real
 * clients send less: only application/json (Claude Code and the Claude Agent SDK at times, plain
 * JSON-RPC clients), `*\/*` or nothing (curl), or only text/event-stream (claude.ai's connector
 * proxy at times). Every answer here is one JSON body, so any of them can be served: JSON when the
 * client takes it, else the same body as one server-sent event. Anything else stays a 406.
 */
function negotiate(request: Request): { request: Request; answer: "json" | "sse" } {
  const types = (request.headers.get("accept") ?? "*/*").split(",").map((t) => t.split(";")[0]?.trim().toLowerCase() ?? "");
  const json = types.some((t) => t === "application/json" || t === "application/*" || t === "*/*");
  const sse = types.some((t) => t === "text/event-stream" || t === "text/*");
  const answer = json ? "json" : "sse";
  // Neither (a 406 from the transport), or both spelled out already: the request goes on as it is.
  if ((!json && !sse) || (types.includes("application/json") && types.includes("text/event-stream"))) return { request, answer };
  return { request: withHeaders(new Request(request), { accept: "application/json, text/event-stream" }), answer };
}

/** A JSON answer re-sent as one server-sent event, for a client that accepts only text/event-stream. */
async function asEventStream(res: Response): Promise<Response> {
  if (res.status !== 200 || !(res.headers.get("content-type") ?? "").includes("application/json")) return res;
  return withHeaders(new Response(`event: message\ndata: ${await res.text()}\n\n`, { status: 200, headers: res.headers }), { "content-type": "text/event-stream" });
}

/** The scopes each request of a message (or batch) needs: a tool's own, content:read for resources, prompts and completions. */
function requiredScopes(body: unknown): string[] {
  const needed = new Set<string>();
  for (const m of Array.isArray(body) ? body : body === undefined ? [] : [body]) {
    if (m === null || typeof m !== "object" || !("id" in m)) continue;
    const { method, params } = m as { method?: unknown; params?: { name?: unknown } };
    if (method === "tools/call") for (const s of TOOL_SCOPES.get(String(params?.name)) ?? []) needed.add(s);
    if (method === "resources/list" || method === "resources/read" || method === "prompts/get" || method === "completion/complete") needed.add("content:read");
  }
  return MCP_SCOPES.filter((s) => needed.has(s));
}

/**
 * The MCP authorization spec's scope challenge (2025-06-18 and 2025-11-25, RFC 6750 §3.1): an OAuth
 * token lacking a scope the call needs gets 403 `insufficient_scope` naming the scopes to ask for,
 * so the client can send its user back to consent for more. Only when the user could consent to
 * them: otherwise (and for MCP tokens, which cannot be stepped up) the tool answers a tool error
 * naming the missing scope, which the agent can read.
 */
function scopeChallenge(config: Config, body: unknown, caller: McpCaller): Response | null {
  const { roleScopes } = caller;
  if (caller.kind !== "oauth" || roleScopes === null) return null;
  const missing = missingScopes(requiredScopes(body), caller.scopes);
  if (missing.length === 0 || !missing.every((s) => roleScopes.includes(s))) return null;
  // 2025-11-25 recommends asking for what the token holds plus what is missing, so the new token loses nothing.
  const scope = MCP_SCOPES.filter((s) => caller.scopes.includes(s) || missing.includes(s)).join(" ");
  const message = `this call needs the ${missing.join(" and ")} scope${missing.length > 1 ? "s" : ""}, which the access token lacks; authorize again with scope "${scope}"`;
  const challenge = `Bearer error="insufficient_scope", scope="${scope}", ${resourceMetadata(config)}, error_description="${message.replace(/"/g, "'")}"`;
  return httpError(403, "insufficient_scope", message, { "www-authenticate": challenge, "cache-control": "no-store" }, { required: missing });
}

/** `elicitation: { url: {} }` among a client's capabilities (2025-11-25: an empty `elicitation` means form only). */
const declaresUrlElicitation = (caps: unknown): boolean => isPlainObject(caps) && isPlainObject(caps.elicitation) && isPlainObject(caps.elicitation.url);

/** A 2025-11-25 initialize: whether the client declared URL elicitation is kept for its later calls. */
async function rememberInitialize(deps: AppDeps, caller: McpCaller, body: unknown, now: Date): Promise<void> {
  const init = (Array.isArray(body) ? body : [body]).find((m) => isPlainObject(m) && m.method === "initialize");
  if (!isPlainObject(init)) return;
  const caps = isPlainObject(init.params) ? init.params.capabilities : undefined;
  await rememberUrlElicitation(deps.db, caller, declaresUrlElicitation(caps), now);
}

/** GET (server-sent stream) and DELETE (session end) have no meaning for a stateless server. */
export function mcpMethodNotAllowed(deps: AppDeps, request: Request): Response {
  const cors = corsHeaders(mcpCors(deps.config), request.headers.get("origin"));
  return httpError(405, "method_not_allowed", `${request.method} is not supported on ${MCP_PATH}: use POST (stateless Streamable HTTP, no sessions)`, { allow: "POST", ...cors });
}

export const mcpPreflight = (deps: AppDeps, request: Request): Response => checkHostAndOrigin(deps.config, request) ?? corsPreflight(mcpCors(deps.config), request, { allow: "POST" });

const resourceMetadata = (config: Config): string => `resource_metadata="${config.publicUrl}/.well-known/oauth-protected-resource${MCP_PATH}"`;

/**
 * DNS rebinding defence: the Host must be this service's public host or a loopback name, and a
 * browser's Origin (when present) must be on the allow-list.
 */
function checkHostAndOrigin(config: Config, request: Request): Response | null {
  const pub = new URL(config.publicUrl);
  const host = URL.parse(`${pub.protocol}//${request.headers.get("host") ?? new URL(request.url).host}`);
  const hostAllowed =
    host !== null && (host.host === pub.host || LOOPBACK.has(host.hostname) || config.mcpAllowedHosts.some((h) => h.toLowerCase() === host.host || h.toLowerCase() === host.hostname));
  if (!hostAllowed) return httpError(403, "forbidden", "Host header not allowed for /mcp");
  const origin = request.headers.get("origin");
  if (origin !== null && !originAllowed(mcpCors(config), origin)) return httpError(403, "forbidden", `Origin ${origin.slice(0, 200)} is not allowed for /mcp`);
  return null;
}

const mcpCors = (config: Config): CorsPolicy => ({ origins: config.mcpAllowedOrigins, methods: "POST", allowHeaders: ALLOW_HEADERS, exposeHeaders: EXPOSE_HEADERS, maxAgeSeconds: 600 });

function httpError(status: number, code: ErrorCode, message: string, headers: Record<string, string> = {}, details?: unknown): Response {
  return new Response(JSON.stringify(errorBody(code, message, details)), { status, headers: { "content-type": "application/json; charset=utf-8", ...headers } });
}

function withHeaders<T extends Request | Response>(message: T, headers: Record<string, string>): T {
  for (const [k, v] of Object.entries(headers)) message.headers.set(k, v);
  return message;
}
