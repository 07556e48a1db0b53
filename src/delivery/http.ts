// HTTP mechanics of delivery answers: open CORS, strong ETags, conditional GET. Web-standard
// (Request, Response, Headers) plus node:crypto's synchronous hash, so the delivery core runs on
// any fetch-style runtime with node:crypto (Bun, Node, Deno, Workers with nodejs_compat).
import { createHash } from "node:crypto";
import { errorBody } from "../errors";
import { acceptsGzip } from "../lib/accept";
import { type CorsPolicy, corsHeaders, corsPreflight } from "../lib/cors";
import type { CachedAnswer, GzipAnswer } from "./cache";

const ALLOWED_METHODS = "GET, HEAD, OPTIONS";

/** Delivery's CORS policy: any origin, read methods. Never Allow-Credentials: delivery is anonymous. */
const DELIVERY_CORS: CorsPolicy = { origins: "*", methods: ALLOWED_METHODS, allowHeaders: "requested", exposeHeaders: "ETag, X-Request-Id, Age, X-Cache", maxAgeSeconds: 86400 };
/** On every delivery answer. */
export const CORS_HEADERS: Readonly<Record<string, string>> = corsHeaders(DELIVERY_CORS, null);

export const JSON_TYPE = "application/json; charset=utf-8";
export const XML_TYPE = "application/xml; charset=utf-8";
export const TEXT_TYPE = "text/plain; charset=utf-8";

/**
 * base64url of the first 16 bytes of SHA-256(text as UTF-8): a strong validator of the exact bytes
 * sent. Hashed synchronously: Web Crypto's digest() went through a thread pool and the event loop
 * and was ~30% of the CPU of a cache miss (~45 µs against ~15 µs for a 7 KB answer).
 */
export function sha256Base64url128(text: string): string {
  return createHash("sha256").update(text, "utf8").digest().subarray(0, 16).toString("base64url");
}

/**
 * Delivery JSON: `<` is written `\u003c` (the same parsed value), so the text can be embedded in an
 * HTML <script> element (sites put seo.jsonld in one) without a `</script>` in content closing it.
 * Applied once when an answer is rendered, never per hit.
 */
export function jsonText(value: unknown): string {
  return JSON.stringify(value).replace(/</g, "\\u003c");
}

/** Smaller answers are never compressed (and so do not vary by Accept-Encoding). */
const GZIP_MIN_BYTES = 1024;

export function answerHeaders(contentType: string, etag: string, cacheControl: string, compressible: boolean): Record<string, string> {
  return { "content-type": contentType, etag, "cache-control": cacheControl, ...CORS_HEADERS, ...(compressible ? { vary: "Accept-Encoding" } : {}) };
}

/** `etag`: the body's, when known (a stored answer's); else it is hashed. */
export function makeAnswer(version: number, status: number, body: string, contentType: string, cacheControl: string, etag = `"${sha256Base64url128(body)}"`): CachedAnswer {
  return { version, status, body, etag, at: Date.now(), headers: answerHeaders(contentType, etag, cacheControl, status === 200 && body.length >= GZIP_MIN_BYTES) };
}

/** The gzip representation's validator: a different representation, so a different strong ETag. */
export const gzipEtag = (etag: string): string => `${etag.slice(0, -1)}.gz"`;

/** One pass over the whole body, so the same text always gives the same bytes (strong ETag). */
async function gzipOf(answer: CachedAnswer): Promise<GzipAnswer> {
  const stream = new Blob([answer.body]).stream().pipeThrough(new CompressionStream("gzip"));
  const body = await new Response(stream).arrayBuffer();
  const etag = gzipEtag(answer.etag);
  return { status: 200, body, etag, headers: { ...answer.headers, etag, "content-encoding": "gzip" } };
}

/**
 * If-None-Match uses the weak comparison (RFC 9110 §13.1.2): W/ prefixes are ignored; `*` matches
 * any current representation.
 */
export function etagMatches(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch.trim() === "*") return true;
  for (const part of ifNoneMatch.split(",")) {
    let tag = part.trim();
    if (tag.startsWith("W/")) tag = tag.slice(2);
    if (tag === etag) return true;
  }
  return false;
}

/** 304 without a body, carrying the validator and caching headers of the 200 it stands for. */
export function notModified(etag: string, cacheControl: string | undefined, vary: string | undefined): Response {
  const headers: Record<string, string> = { etag, ...CORS_HEADERS };
  if (cacheControl !== undefined) headers["cache-control"] = cacheControl;
  if (vary !== undefined) headers.vary = vary;
  return new Response(null, { status: 304, headers });
}

/**
 * A finished answer as plain parts: the framework adapter sends it without wrapping it in a
 * stream (Elysia re-wraps Response objects whenever hooks set headers, which costs on hot reads).
 */
export interface Reply {
  status: number;
  headers: Readonly<Record<string, string>>;
  body: string | ArrayBuffer;
}
export type Outcome = Reply | Response;

/** The answer itself (gzip-encoded when the client takes it and it is worth it), or 304 (see conditional). */
export function respond(request: Request, answer: CachedAnswer, onGzip?: GzipHook): Outcome | Promise<Outcome> {
  if (answer.status !== 200) return answer;
  if (answer.headers.vary !== undefined && acceptsGzip(request)) return answer.gzipped ? conditional(request, answer.gzipped) : respondGzip(request, answer, onGzip);
  return conditional(request, answer);
}

/** Told the size of a gzip representation when it is made (the cache counts it against its bound). */
export type GzipHook = (answer: CachedAnswer, bytes: number) => void;

async function respondGzip(request: Request, answer: CachedAnswer, onGzip?: GzipHook): Promise<Outcome> {
  if (answer.gzip === undefined) {
    answer.gzip = gzipOf(answer).then((gz) => {
      answer.gzipped = gz;
      onGzip?.(answer, gz.body.byteLength);
      return gz;
    });
  }
  return conditional(request, await answer.gzip);
}

/** A 200, or 304 when the client already holds these bytes (2xx only, RFC 9110 §13.1). */
function conditional(request: Request, answer: CachedAnswer | GzipAnswer): Outcome {
  const inm = request.headers.get("if-none-match");
  return inm !== null && etagMatches(inm, answer.etag) ? notModified(answer.etag, answer.headers["cache-control"], answer.headers.vary) : answer;
}

/** CORS preflight: any origin, read methods only, the requested headers echoed back. */
export const preflight = (request: Request): Response => corsPreflight(DELIVERY_CORS, request);

export function methodNotAllowed(method: string): Reply {
  const body = jsonText(errorBody("method_not_allowed", `${method} is not allowed here; delivery is read-only (${ALLOWED_METHODS})`));
  return { status: 405, headers: { "content-type": JSON_TYPE, allow: ALLOWED_METHODS, ...CORS_HEADERS }, body };
}
