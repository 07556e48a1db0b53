// Every call the studio makes: same-origin, with the session cookie and the studio's header, never
// a bearer token. Errors arrive as { error: { code, message, details } } and become ApiError.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> | undefined,
    /** Seconds to wait before asking again (the answer's Retry-After), or null. */
    readonly retryAfter: number | null = null,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

interface ApiResponse<T> {
  body: T;
  etag: string | null;
  status: number;
}

interface RequestOptions {
  method?: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  body?: unknown;
  ifMatch?: number;
  signal?: AbortSignal;
}

/** Listeners told when any call answers 401 (the session ended elsewhere). */
const unauthorizedListeners = new Set<() => void>();
export function onUnauthorized(listener: () => void): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

export async function request<T>(url: string, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { "X-CMS-Studio": "1", Accept: "application/json" };
  if (opts.body !== undefined) headers["Content-Type"] = "application/json";
  if (opts.ifMatch !== undefined) headers["If-Match"] = `"r${opts.ifMatch}"`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: opts.method ?? "GET",
      credentials: "same-origin",
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: opts.signal,
    });
  } catch (err) {
    if (err instanceof DOMException && err.name === "AbortError") throw err;
    throw new ApiError(0, "network", "The service cannot be reached. Check your connection and try again.", undefined);
  }
  const text = res.status === 204 ? "" : await res.text();
  let parsed: unknown = null;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
  }
  if (!res.ok) {
    const e = (parsed as { error?: { code?: string; message?: string; details?: Record<string, unknown> } } | null)?.error;
    const err = new ApiError(
      res.status,
      e?.code ?? `http_${res.status}`,
      e?.message ?? `The service answered ${res.status} ${res.statusText}`.trim(),
      e?.details,
      retryAfterSeconds(res.headers.get("Retry-After")),
    );
    if (res.status === 401 && !url.endsWith("/studio/api/session")) for (const l of unauthorizedListeners) l();
    throw err;
  }
  return { body: parsed as T, etag: res.headers.get("ETag"), status: res.status };
}

/** Retry-After as seconds: a number of seconds or an HTTP date; null when absent or unreadable. */
function retryAfterSeconds(value: string | null): number | null {
  if (!value?.trim()) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v);
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/** The `data` of an answer. */
export async function data<T>(url: string, opts?: RequestOptions): Promise<T> {
  return (await request<{ data: T }>(url, opts)).body?.data as T;
}

/** The revision an ETag names ("r12" → 12), or null. */
export function revisionOf(etag: string | null): number | null {
  const m = etag?.match(/"?r(\d+)"?/);
  return m?.[1] ? Number(m[1]) : null;
}

export const enc = encodeURIComponent;
export const projectBase = (ref: string) => `/admin/p/${enc(ref)}`;
export const nodeUrl = (ref: string, id: string) => `${projectBase(ref)}/nodes/${enc(id)}`;

/** A message for a person: the server's message, or a plain sentence for a failure without one. */
export function messageOf(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  if (err instanceof Error) return err.message;
  return String(err);
}
