// Reading a POST /mcp body before the SDK transport sees it, so each kind of bad input gets the
// JSON-RPC error its spec prescribes: -32700 unparsable, -32600 not a request, -32602 bad params.
import { ClientRequestSchema, type JSONRPCErrorResponse, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import { AppError } from "../errors";
import { MAX_BODY_BYTES, parseJsonBody, readBodyText } from "../lib/json";
import { isPlainObject } from "../lib/merge";

// Batches are legal in 2025-03-26 and gone since 2025-06-18; a small bound keeps one request's work small.
const MAX_BATCH = 20;

export interface ReadMessages {
  /** What the transport should handle (undefined: let it read and refuse the request itself). */
  body: unknown;
  /** Requests answered here with -32602, to merge into the transport's answer. */
  rejected: JSONRPCErrorResponse[];
  /** The parsed body as sent (undefined when it was not read). */
  original: unknown;
}

const REQUEST_SCHEMAS: ReadonlyMap<string, z.ZodType> = new Map(ClientRequestSchema.options.map((s) => [s.shape.method.value, s]));

export async function readMessages(request: Request, tools: ReadonlyMap<string, unknown>): Promise<ReadMessages | Response> {
  if (!isJsonPost(request)) return { body: undefined, rejected: [], original: undefined }; // the transport answers 406/415 unread
  let body: unknown;
  try {
    body = parseJsonBody(await readBodyText(request, MAX_BODY_BYTES));
  } catch (err) {
    if (err instanceof AppError && err.code === "payload_too_large") return rpcError(413, -32600, `Invalid Request: body exceeds ${MAX_BODY_BYTES} bytes`);
    return rpcError(400, -32700, `Parse error: ${err instanceof AppError ? err.message : "invalid JSON"}`);
  }
  if (body === undefined) return rpcError(400, -32700, "Parse error: empty body");
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  if (messages.length === 0) return rpcError(400, -32600, "Invalid Request: empty batch");
  if (messages.length > MAX_BATCH) return rpcError(400, -32600, `Invalid Request: a batch may hold at most ${MAX_BATCH} messages`);
  if (messages.some((m) => !JSONRPCMessageSchema.safeParse(m).success)) return rpcError(400, -32600, "Invalid Request: not a JSON-RPC 2.0 message");

  const errors = messages.map((m) => paramsError(m as Record<string, unknown>, tools));
  const kept = messages.filter((_, i) => errors[i] === null);
  return { body: Array.isArray(body) ? kept : kept[0], rejected: errors.filter((e) => e !== null), original: body };
}

/** -32602 for a known method whose params do not fit, or a tools/call naming no tool of ours. */
function paramsError(m: Record<string, unknown>, tools: ReadonlyMap<string, unknown>): JSONRPCErrorResponse | null {
  if (typeof m.method !== "string" || !("id" in m)) return null; // notifications and responses pass
  const id = m.id as string | number;
  const r = REQUEST_SCHEMAS.get(m.method)?.safeParse(m);
  if (!r) return null; // an unknown method: the SDK answers -32601
  if (!r.success) {
    const issues = r.error.issues.slice(0, 5).map((i) => `${i.path.map(String).join(".")}: ${i.message}`);
    return { jsonrpc: "2.0", id, error: { code: -32602, message: `Invalid params: ${issues.join("; ")}` } };
  }
  const name = m.method === "tools/call" ? (m.params as { name: string }).name : null;
  return name === null || tools.has(name) ? null : { jsonrpc: "2.0", id, error: { code: -32602, message: `Unknown tool: ${name.slice(0, 100)}` } };
}

/** The transport's answer with the requests rejected here added, in one JSON body. */
export async function withRejected(res: Response, read: ReadMessages): Promise<Response> {
  if (read.rejected.length === 0) return res;
  const json = res.status === 200 && (res.headers.get("content-type") ?? "").includes("application/json");
  if (!json && res.status !== 202 && res.status !== 204) return res; // the transport refused the whole request (406, 415, 400): that answer stands
  // The transport's answer is one response or a batch of them.
  const all = [...(json ? [(await res.json()) as unknown].flat() : []), ...read.rejected];
  return jsonResponse(Array.isArray(read.body) ? all : all[0]);
}

/** The answer when nothing is left for the transport: every request was rejected here. */
export function onlyRejected(read: ReadMessages): Response | null {
  if (read.rejected.length === 0 || (Array.isArray(read.body) ? read.body.length > 0 : read.body !== undefined)) return null;
  return jsonResponse(Array.isArray(read.body) ? read.rejected : read.rejected[0]);
}

/**
 * A tools/call that asked for progress (a progressToken), or a tasks/result (it waits for the task's
 * end and tells its status as it changes), from a client that takes a stream: it is answered as one.
 */
export function streamsProgress(body: unknown, headers: Headers): boolean {
  if (!isPlainObject(body) || !(headers.get("accept") ?? "").includes("text/event-stream")) return false;
  return (body.method === "tools/call" && metaOf(body)?.progressToken !== undefined) || body.method === "tasks/result";
}

export const metaOf = (m: { params?: unknown }): Record<string, unknown> | null => (isPlainObject(m.params) && isPlainObject(m.params._meta) ? m.params._meta : null);

function isJsonPost(request: Request): boolean {
  const accept = request.headers.get("accept") ?? "";
  const type = (request.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  return accept.includes("application/json") && accept.includes("text/event-stream") && type === "application/json";
}

export const jsonResponse = (body: unknown, status = 200): Response => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

const rpcError = (status: number, code: number, message: string): Response => jsonResponse({ jsonrpc: "2.0", error: { code, message }, id: null }, status);
