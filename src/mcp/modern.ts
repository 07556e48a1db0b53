// The 2026-07-28 revision of MCP on the same /mcp endpoint: no initialize handshake, every request
// declares its version and the client's capabilities in `_meta`, the HTTP headers mirror the body
// (MCP-Protocol-Version, Mcp-Method, Mcp-Name) and are checked against it, `server/discover`
// replaces initialize, results carry `resultType` and (for lists and reads) caching hints.
// The SDK (1.x) carries none of this, so the wire rules live here; the requests themselves are
// answered by the same McpServer as 2025-11-25, through an in-process transport.

import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ErrorCode, type JSONRPCErrorResponse, type JSONRPCMessage, type JSONRPCResultResponse, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";
import { decodeBase64 } from "@oslojs/encoding";
import { isPlainObject } from "../lib/merge";
import { jsonResponse, metaOf, streamsProgress } from "./jsonrpc";
import { type buildMcpServer, SERVER_INFO } from "./server";

const MODERN_VERSION = "2026-07-28";
/** What server/discover and UnsupportedProtocolVersionError list: this revision and the legacy one served after initialize. */
const SUPPORTED_VERSIONS = [MODERN_VERSION, "2025-11-25"] as const;
const LEGACY_VERSIONS: ReadonlySet<string> = new Set(SUPPORTED_PROTOCOL_VERSIONS);

const PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion";
export const CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";
const CLIENT_INFO = "io.modelcontextprotocol/clientInfo";

// JSON-RPC codes the 2026-07-28 revision defines (basic/index, error codes).
const HEADER_MISMATCH = -32020;
const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/**
 * Caching hints (server/utilities/caching). The tool and prompt lists are the same for every
 * caller and change only with a deploy; everything else names the caller's project or reads its
 * content, which any write may change, so it is private and immediately stale.
 */
const CACHE: Readonly<Record<string, { ttlMs: number; cacheScope: "public" | "private" }>> = {
  "tools/list": { ttlMs: 3_600_000, cacheScope: "public" },
  "prompts/list": { ttlMs: 3_600_000, cacheScope: "public" },
  "server/discover": { ttlMs: 3_600_000, cacheScope: "private" },
  "resources/templates/list": { ttlMs: 3_600_000, cacheScope: "private" },
  "resources/list": { ttlMs: 0, cacheScope: "private" },
  "resources/read": { ttlMs: 0, cacheScope: "private" },
};
/** The methods this revision serves here (the cacheable ones and three more); initialize, ping, logging/setLevel and the rest answer 404 -32601. */
const MODERN_METHODS: ReadonlySet<string> = new Set([...Object.keys(CACHE), "tools/call", "prompts/get", "completion/complete"]);
const NAMED: Readonly<Record<string, "name" | "uri">> = { "tools/call": "name", "prompts/get": "name", "resources/read": "uri" };

type Id = string | number | null;
type Message = { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };
type Answer = JSONRPCResultResponse | JSONRPCErrorResponse | { result: Record<string, unknown> };

/**
 * A dual-era server picks the revision from how the client opens (basic/versioning):
 * server/discover, an MCP-Protocol-Version header naming no legacy revision, or `_meta` declaring
 * a version that is not a legacy one select this one (and its checks then apply in full);
 * anything else (an initialize from a 2025 client, the requests after it) stays on 2025-11-25.
 */
export function isModernRequest(body: unknown, headers: Headers): boolean {
  if (!isPlainObject(body)) return false;
  if (body.method === "server/discover") return true;
  const header = headers.get("mcp-protocol-version")?.trim();
  // Present but naming no legacy revision (empty included): the modern checks answer it, with its id.
  if (header !== undefined && !LEGACY_VERSIONS.has(header)) return true;
  const declared = metaOf(body)?.[PROTOCOL_VERSION];
  return declared !== undefined && (typeof declared !== "string" || !LEGACY_VERSIONS.has(declared));
}

/** One 2026-07-28 request, validated and answered. `build` makes the McpServer only once the request passed the wire checks. */
export async function handleModern(body: unknown, headers: Headers, rejected: JSONRPCErrorResponse | null, build: () => ReturnType<typeof buildMcpServer>): Promise<Response> {
  const m = body as Message;
  const id: Id = typeof m.id === "string" || typeof m.id === "number" ? m.id : null;
  if (typeof m.method !== "string") return rpcReply(400, id, { code: ErrorCode.InvalidRequest, message: "Invalid Request: not a JSON-RPC request" });
  // This revision defines no client notification on HTTP; one that arrives is accepted and ignored.
  if (!("id" in m)) return new Response(null, { status: 202 });

  const refused = checkWire(m, m.method, id, headers);
  if (refused) return refused;
  if (!MODERN_METHODS.has(m.method)) return rpcReply(404, id, { code: ErrorCode.MethodNotFound, message: `Method not found: ${m.method.slice(0, 100)} (not part of MCP ${MODERN_VERSION})` });

  // Params the SDK's schema refuses (or a tool that does not exist), found while reading the body.
  if (rejected) return rpcReply(200, id, rejected.error);
  const retry = badRetryParams(m.params);
  if (retry) return rpcReply(200, id, { code: ErrorCode.InvalidParams, message: `Invalid params: ${retry}` });
  const ctx = build();
  if (streamsProgress(m, headers)) return streamed(ctx.server, m, id as string | number);
  const discover = { supportedVersions: [...SUPPORTED_VERSIONS], capabilities: ctx.capabilities, instructions: ctx.instructions, _meta: { "io.modelcontextprotocol/serverInfo": SERVER_INFO } };
  const answer = m.method === "server/discover" ? { result: discover } : await dispatch(ctx.server, m, id as string | number);
  return jsonResponse(reply(m, id, answer), "error" in answer && answer.error.code === ErrorCode.MethodNotFound ? 404 : 200);
}

/**
 * A tools/call that asked for progress (a progressToken) from a client taking a stream: the
 * response is a server-sent event stream scoped to the request, its notifications/progress as they
 * happen, then the result (streamable-http, Receiving Messages).
 */
function streamed(server: McpServer, m: Message, id: string | number): Response {
  const event = (message: unknown) => new TextEncoder().encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  const body = new ReadableStream<Uint8Array>({
    // A failure rejects start, which errors the stream.
    async start(controller) {
      controller.enqueue(event(reply(m, id, await dispatch(server, m, id, (n) => controller.enqueue(event(n))))));
      controller.close();
    },
  });
  return new Response(body, { status: 200, headers: { "content-type": "text/event-stream", "x-accel-buffering": "no" } });
}

/** The checks of streamable-http "Server Validation" and basic/versioning, in the order the revision states them. */
function checkWire(m: Message, method: string, id: Id, headers: Headers): Response | null {
  const mismatch = (what: string) => rpcReply(400, id, { code: HEADER_MISMATCH, message: `Header mismatch: ${what}` });
  const header = headers.get("mcp-protocol-version")?.trim();
  if (!header) return mismatch("the MCP-Protocol-Version header is required");
  const meta = metaOf(m) ?? {};
  // A version named only in the header (no _meta at all) that is not this one: say which are served.
  if (meta[PROTOCOL_VERSION] === undefined && header !== MODERN_VERSION) return unsupported(id, header);
  const missing = [PROTOCOL_VERSION, CLIENT_CAPABILITIES].filter((k) => meta[k] === undefined);
  if (missing.length > 0) return rpcReply(400, id, { code: ErrorCode.InvalidParams, message: `Invalid params: _meta must carry ${missing.join(" and ")}` });
  const { [PROTOCOL_VERSION]: version, [CLIENT_CAPABILITIES]: caps, [CLIENT_INFO]: info } = meta;
  if (typeof version !== "string" || !isPlainObject(caps) || (info !== undefined && !isPlainObject(info))) {
    return rpcReply(400, id, { code: ErrorCode.InvalidParams, message: `Invalid params: _meta ${PROTOCOL_VERSION} must be a string, ${CLIENT_CAPABILITIES} (and ${CLIENT_INFO}, when given) objects` });
  }
  if (header !== version) return mismatch(`MCP-Protocol-Version header ${quote(header)} does not match _meta ${quote(version)}`);
  if (version !== MODERN_VERSION) return unsupported(id, version);
  const mcpMethod = headers.get("mcp-method")?.trim();
  if (mcpMethod !== method) {
    return mismatch(mcpMethod === undefined ? "the Mcp-Method header is required" : `Mcp-Method header ${quote(mcpMethod)} does not match the body's method ${quote(method)}`);
  }
  const field = NAMED[method];
  const value = field && (m.params as Record<string, unknown> | undefined)?.[field];
  const raw = headers.get("mcp-name");
  if (typeof value === "string" && (raw === null ? null : decodeHeaderValue(raw.trim())) !== value) {
    return mismatch(raw === null ? "the Mcp-Name header is required" : `Mcp-Name header ${quote(raw.trim())} does not match the body's params.${field} ${quote(value)}`);
  }
  return null;
}

const unsupported = (id: Id, requested: string): Response =>
  rpcReply(400, id, { code: UNSUPPORTED_PROTOCOL_VERSION, message: "Unsupported protocol version", data: { supported: [...SUPPORTED_VERSIONS], requested } });

/** The Base64 sentinel form `=?base64?…?=` (streamable-http, Value Encoding); null when it does not decode. */
function decodeHeaderValue(value: string): string | null {
  if (!value.startsWith("=?base64?") || !value.endsWith("?=")) return value;
  const b64 = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/.exec(value)?.[1];
  try {
    return b64 !== undefined && b64.length % 4 === 0 ? new TextDecoder("utf-8", { fatal: true }).decode(decodeBase64(b64)) : null;
  } catch {
    return null;
  }
}

/**
 * The McpServer's answer in this revision's shape: resultType on every result, caching hints on the
 * cacheable ones; an unknown resource is -32602 with the uri (server/resources, Error Handling), -32002 was the legacy code.
 */
function reply(m: Message, id: Id, answer: Answer) {
  const asked = m.method === "tools/call" && "error" in answer ? inputRequired(answer.error) : null;
  if (asked) return { jsonrpc: "2.0", id, result: asked };
  if ("result" in answer) return { jsonrpc: "2.0", id, result: { ...answer.result, resultType: "complete", ...CACHE[m.method as string] } };
  return { jsonrpc: "2.0", id, error: m.method === "resources/read" && answer.error.code === -32002 ? { ...answer.error, code: ErrorCode.InvalidParams } : answer.error };
}

/**
 * A tool that needs a person (URLElicitationRequired, -32042, as the tool raised it for a client that
 * declared URL elicitation) is answered in this revision as a multi round-trip request: an
 * input_required result carrying the URL elicitation, and the request's state (the approval's id),
 * which the client echoes when it calls again.
 */
function inputRequired(error: JSONRPCErrorResponse["error"]): Record<string, unknown> | null {
  if (error.code !== ErrorCode.UrlElicitationRequired || !isPlainObject(error.data) || !Array.isArray(error.data.elicitations)) return null;
  const elicitations = error.data.elicitations.filter(isPlainObject);
  if (elicitations.length === 0) return null;
  const inputRequests = Object.fromEntries(elicitations.map((e, i) => [`approval_${i + 1}`, { method: "elicitation/create", params: { ...e, mode: "url" } }]));
  return { resultType: "input_required", inputRequests, requestState: elicitations.map((e) => String(e.elicitationId)).join(" ") };
}

/**
 * What is wrong with a retry's `inputResponses` and `requestState` (basic/patterns/mrtr: an object of
 * responses, a string), or null. The state is never trusted: what a retry needs (the approval) is
 * kept on the server, bound to the credential and the call's arguments, and nothing is read from
 * the state, so one the client altered or took from another request changes nothing.
 */
function badRetryParams(params: unknown): string | null {
  if (!isPlainObject(params)) return null;
  if (params.requestState !== undefined && typeof params.requestState !== "string") return "requestState must be the string the input_required result gave";
  const responses = params.inputResponses;
  if (responses !== undefined && !(isPlainObject(responses) && Object.values(responses).every(isPlainObject))) return "inputResponses must be an object of responses";
  return null;
}

/** Hands one request to the McpServer through an in-process transport, waits for its answer and closes the server. */
async function dispatch(server: McpServer, m: Message, id: string | number, notify?: (n: JSONRPCMessage) => void): Promise<Answer> {
  const [client, transport] = InMemoryTransport.createLinkedPair();
  const answer = new Promise<Answer>((resolve) => {
    client.onmessage = (message) => {
      if ("result" in message || "error" in message) resolve(message);
      // Request-scoped notifications (progress) travel only when the answer is a stream.
      else if (!("id" in message)) notify?.(message);
    };
  });
  try {
    await server.connect(transport);
    await client.send({ jsonrpc: "2.0", id, method: m.method as string, params: m.params as Record<string, unknown> });
    return await answer;
  } finally {
    await server.close().catch(() => {});
  }
}

const rpcReply = (status: number, id: Id, error: JSONRPCErrorResponse["error"]): Response => jsonResponse({ jsonrpc: "2.0", id, error }, status);
const quote = (s: string): string => JSON.stringify(s.slice(0, 200));
