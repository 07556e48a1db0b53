// One outbound JSON POST to an AI vendor, with every failure mapped to a typed AppError:
// bounded in time (headers and body), bounded in size, redirects never followed, and no
// vendor text echoed unless it is free of the key.
import { AppError } from "../../errors";
import { isPlainObject } from "../../lib/merge";
import { readCappedText } from "../../lib/stream";
import { pinnedFetch } from "../../platform/fetch";

export interface HttpOptions {
  readonly fetch: typeof fetch;
  readonly timeoutMs: number;
  readonly maxBytes: number;
  /** The API key, so that vendor error text repeating it is never passed on. */
  readonly secret: string | null;
  /**
   * Addresses the outbound guard checked for the URL's host name: the request connects to them
   * (in order, the next one when a connection fails) instead of resolving the name again.
   */
  readonly addresses?: readonly string[];
}

export type PostJson = (req: { url: string; headers: Record<string, string>; body: unknown }) => Promise<unknown>;

const ERROR_BODY_LIMIT = 64 * 1024;
const DEFAULT_RETRY_AFTER = 30;

export function jsonPoster(opts: HttpOptions): PostJson {
  return async (req) => {
    const signal = AbortSignal.timeout(opts.timeoutMs);
    const body = JSON.stringify(req.body);
    let res: Response | null = null;
    let failure: unknown = null;
    for (const address of opts.addresses?.length ? opts.addresses : [null]) {
      try {
        res = await pinnedFetch(
          new URL(req.url),
          address,
          { method: "POST", headers: { "content-type": "application/json", accept: "application/json", ...req.headers }, body, redirect: "manual", signal },
          opts.fetch,
        );
        break;
      } catch (err) {
        if (signal.aborted) throw timeout(opts.timeoutMs, err);
        failure = err;
      }
    }
    if (!res) throw new AppError("provider_error", "could not reach the provider (connection failed)", undefined, undefined, { cause: failure });
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel().catch(() => {});
      throw new AppError("provider_error", `the provider answered with a redirect (HTTP ${res.status}), which is not followed; check base_url`, { upstream_status: res.status });
    }
    if (!res.ok) throw upstreamError(res, await readCapped(res, Math.min(ERROR_BODY_LIMIT, opts.maxBytes)).catch(() => ""), opts.secret);
    const text = await readCapped(res, opts.maxBytes).catch((err: unknown) => {
      if (err instanceof AppError) throw err;
      if (signal.aborted) throw timeout(opts.timeoutMs, err);
      throw new AppError("provider_error", "the provider's response could not be read", undefined, undefined, { cause: err });
    });
    try {
      return JSON.parse(text) as unknown;
    } catch (err) {
      throw new AppError("provider_error", "the provider's response is not valid JSON", undefined, undefined, { cause: err });
    }
  };
}

const timeout = (ms: number, cause?: unknown): AppError => new AppError("provider_timeout", `the provider did not answer within ${ms} ms`, undefined, undefined, { cause });

function upstreamError(res: Response, text: string, secret: string | null): AppError {
  const status = res.status;
  if (status === 401 || status === 403) return new AppError("provider_error", `the provider refused the API key (HTTP ${status}); check the provider's api_key`, { upstream_status: status });
  if (status === 429) {
    const seconds = retryAfterSeconds(res.headers, text);
    return new AppError("rate_limited", `the provider is rate limiting this key; retry after ${seconds} s`, { upstream_status: status, retry_after: seconds }, { "retry-after": String(seconds) });
  }
  if (status >= 500) return new AppError("provider_error", `the provider failed (HTTP ${status})`, { upstream_status: status });
  const detail = vendorMessage(text, secret);
  return new AppError("provider_error", `the provider rejected the request (HTTP ${status})${detail ? `: ${detail}` : ""}`, { upstream_status: status });
}

/**
 * Retry-After as seconds (delta or HTTP date; retry-after-ms too), else Google's RetryInfo in the
 * error body (Gemini says when to retry there, `"retryDelay": "17s"`), clamped to 1..3600.
 */
function retryAfterSeconds(headers: Headers, text: string): number {
  const ms = Number(headers.get("retry-after-ms"));
  const raw = headers.get("retry-after")?.trim() ?? "";
  // An HTTP date that does not parse gives NaN, as no header does.
  let s = /^\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw ? (Date.parse(raw) - Date.now()) / 1000 : Number.NaN;
  if (Number.isNaN(s) && Number.isFinite(ms) && ms > 0) s = ms / 1000;
  if (Number.isNaN(s)) s = retryDelay(errorObject(text)?.details);
  return Number.isNaN(s) ? DEFAULT_RETRY_AFTER : Math.min(3600, Math.max(1, Math.ceil(s)));
}

/** The seconds of a google.rpc.RetryInfo among an error's details; NaN when there is none. */
function retryDelay(details: unknown): number {
  const info = Array.isArray(details) ? details.find((d) => isPlainObject(d) && d["@type"] === "type.googleapis.com/google.rpc.RetryInfo") : undefined;
  const delay = isPlainObject(info) && typeof info.retryDelay === "string" ? /^(\d+(?:\.\d+)?)s$/.exec(info.retryDelay) : null;
  return delay ? Number(delay[1]) : Number.NaN;
}

/**
 * The error body's object: as most vendors send it, or the one element of the array Gemini's
 * OpenAI-compatible endpoint wraps it in (`[{ "error": { code, message, status } }]`).
 */
function errorObject(text: string): { error?: unknown; message?: unknown; details?: unknown } | null {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return null;
  }
  if (Array.isArray(body) && body.length === 1) body = body[0];
  if (!isPlainObject(body)) return null;
  return isPlainObject(body.error) && Array.isArray(body.error.details) ? { ...body, details: body.error.details } : body;
}

/** The vendor's own error message (every vendor's shape), shortened; dropped if it holds any part of the key. */
function vendorMessage(text: string, secret: string | null): string | null {
  const body = errorObject(text);
  if (!body) return null;
  const msg = typeof body.error === "string" ? body.error : isPlainObject(body.error) ? (body.error.message ?? body.message) : body.message;
  if (typeof msg !== "string" || msg.trim() === "") return null;
  const clean = msg
    .replace(/[\u0000-\u001f\u007f]/g, " ")
    .trim()
    .slice(0, 300);
  return secret && leaksSecret(clean, secret) ? null : clean;
}

/** True when text holds the secret or any 8-character run of it (vendors echo masked keys). */
function leaksSecret(text: string, secret: string): boolean {
  const runs = secret.length < 8 ? [secret] : Array.from({ length: secret.length - 7 }, (_, i) => secret.slice(i, i + 8));
  return runs.some((run) => text.includes(run));
}

async function readCapped(res: Response, limit: number): Promise<string> {
  const declared = Number(res.headers.get("content-length") ?? "");
  if (Number.isFinite(declared) && declared > limit) {
    await res.body?.cancel().catch(() => {});
    throw tooLarge(limit);
  }
  const text = await readCappedText(res.body, limit);
  if (text === null) throw tooLarge(limit);
  return text;
}

const tooLarge = (limit: number): AppError => new AppError("provider_error", `the provider's response exceeds ${limit} bytes and was cut off`);
