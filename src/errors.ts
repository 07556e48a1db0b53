// One error mapping for every non-OAuth route: closed code set, code → status, generic 500.

export type ErrorCode =
  | "invalid_request"
  | "invalid_locale"
  | "invalid_sort"
  | "missing_parameter"
  | "no_provider"
  | "unauthorized"
  | "insufficient_scope"
  | "forbidden"
  | "not_found"
  | "sitemap_unavailable"
  | "method_not_allowed"
  | "conflict"
  | "payload_too_large"
  | "rate_limited"
  | "provider_error"
  | "provider_timeout"
  | "service_unavailable"
  | "internal";

function statusOf(code: ErrorCode): number {
  switch (code) {
    case "invalid_request":
    case "invalid_locale":
    case "invalid_sort":
    case "missing_parameter":
    case "no_provider":
      return 400;
    case "unauthorized":
      return 401;
    case "insufficient_scope":
    case "forbidden":
      return 403;
    case "not_found":
    case "sitemap_unavailable":
      return 404;
    case "method_not_allowed":
      return 405;
    case "conflict":
      return 409;
    case "payload_too_large":
      return 413;
    case "rate_limited":
      return 429;
    case "provider_error":
      return 502;
    case "service_unavailable":
      return 503;
    case "provider_timeout":
      return 504;
    case "internal":
      return 500;
  }
}

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    readonly headers?: Record<string, string>,
    // `cause` keeps the underlying failure for debugging; answers and logs never show it.
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "AppError";
  }
  get status(): number {
    return statusOf(this.code);
  }
}

export const notFound = (what = "resource"): AppError => new AppError("not_found", `${what} not found`);

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: unknown };
}

export function errorBody(code: ErrorCode, message: string, details?: unknown): ErrorBody {
  return details === undefined ? { error: { code, message } } : { error: { code, message, details } };
}

/** True for errors Postgres raises on a unique violation, whichever driver wrapped them. */
export function isUniqueViolation(err: unknown): boolean {
  return pgCode(err) === "23505";
}
/** A deadlock or serialization failure: the transaction lost a race and may simply be run again. */
export function isRetryableConflict(err: unknown): boolean {
  const code = pgCode(err);
  return code === "40P01" || code === "40001";
}
export function isForeignKeyViolation(err: unknown): boolean {
  return pgCode(err) === "23503";
}
/**
 * A write whose parent row was deleted under it (a project or node deleted by a concurrent
 * request) fails its foreign key (23503): that is 404 of what vanished, never 500. Every foreign
 * key cascades on delete, so a 23503 always means the referenced row is gone; drizzle-kit names
 * the constraint `<table>_<column>_<referenced table>_<referenced column>_fk`.
 */
export function vanishedRow(err: unknown): AppError | null {
  if (!isForeignKeyViolation(err)) return null;
  const table = /_(projects|nodes|oauth_clients|oauth_grants|users)_id_fk$/.exec(constraintOf(err) ?? "")?.[1];
  const what = table ? VANISHED[table] : "resource";
  return new AppError("not_found", `${what} not found`);
}
const VANISHED: Record<string, string> = { projects: "project", nodes: "node", oauth_clients: "OAuth client", oauth_grants: "OAuth grant", users: "user" };
function constraintOf(err: unknown): string | null {
  let e: unknown = err;
  for (let i = 0; i < 4 && e && typeof e === "object"; i++) {
    const c = (e as { constraint_name?: unknown; constraint?: unknown }).constraint_name ?? (e as { constraint?: unknown }).constraint;
    if (typeof c === "string") return c;
    e = (e as { cause?: unknown }).cause;
  }
  return null;
}
function pgCode(err: unknown): string | null {
  let e: unknown = err;
  for (let i = 0; i < 4 && e && typeof e === "object"; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return null;
}

const DB_DOWN_CODES = new Set([
  "57P01", // admin_shutdown (terminated backend)
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now
  "08000",
  "08003",
  "08006",
  "08001",
  "53300", // too_many_connections
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
]);

/** True when the database is unreachable (not a bad query): the caller may retry. */
export function isDatabaseUnavailable(err: unknown): boolean {
  let e: unknown = err;
  for (let i = 0; i < 5 && e && typeof e === "object"; i++) {
    if (e instanceof AppError) return false; // already classified; its cause may be a vendor's ECONNREFUSED
    const code = (e as { code?: unknown; errno?: unknown }).code ?? (e as { errno?: unknown }).errno;
    if (typeof code === "string" && DB_DOWN_CODES.has(code)) return true;
    // The embedded database closed under the process (shutdown, or its handle lost) has no code.
    if (e instanceof Error && e.message === "PGlite is closed") return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * What may be logged about an unexpected error: its name, PostgreSQL code and constraint, and
 * where it was thrown; never a driver message, which carries the query and its parameters
 * (hashes, sealed keys, content).
 */
export function describeError(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { name: typeof err };
  const out: Record<string, unknown> = { name: err.name };
  const code = pgCode(err);
  let e: unknown = err;
  for (let i = 0; i < 4 && e && typeof e === "object"; i++) {
    const c = (e as { constraint_name?: unknown; constraint?: unknown }).constraint_name ?? (e as { constraint?: unknown }).constraint;
    if (typeof c === "string") out.constraint = c;
    e = (e as { cause?: unknown }).cause;
  }
  if (code) out.pg_code = code;
  else if (!/^Failed query/.test(err.message)) out.message = (err.message.split("\n")[0] ?? "").slice(0, 200);
  const frame = err.stack?.split("\n").find((l) => /^\s+at /.test(l));
  if (frame) out.at = frame.trim().slice(0, 200);
  return out;
}
