// One error mapping for every non-OAuth route: closed code set, code → status, generic 500, and the
// app's one onError (appErrorHandler) that turns whatever a route throws into that answer.
import { ValidationError } from "elysia/error";

const STATUS = {
  invalid_request: 400,
  invalid_input: 400,
  invalid_content: 400,
  invalid_locale: 400,
  invalid_sort: 400,
  missing_parameter: 400,
  no_provider: 400,
  unauthorized: 401,
  preview_token_invalid: 401,
  preview_token_expired: 401,
  insufficient_scope: 403,
  forbidden: 403,
  approval_required: 403,
  approval_rejected: 403,
  not_found: 404,
  sitemap_unavailable: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  quota_exceeded: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
  provider_error: 502,
  service_unavailable: 503,
  provider_timeout: 504,
} as const;

export type ErrorCode = keyof typeof STATUS;

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    readonly headers?: Record<string, string>,
    // `cause` keeps the underlying failure for debugging; answers and logs never show it.
    // `status`: a code answered with another status than its own (quota_exceeded is 413 for storage, 429 for a token cap).
    options?: ErrorOptions & { readonly status?: 429 },
  ) {
    super(message, options);
    this.name = "AppError";
    this.statusOverride = options?.status;
  }
  private readonly statusOverride: number | undefined;
  get status(): number {
    return this.statusOverride ?? STATUS[this.code];
  }
}

export const notFound = (what = "resource"): AppError => new AppError("not_found", `${what} not found`);

export const errorBody = (code: ErrorCode, message: string, details?: unknown) => ({ error: details === undefined ? { code, message } : { code, message, details } });

/** True for errors Postgres raises on a unique violation, whichever driver wrapped them. */
export const isUniqueViolation = (err: unknown): boolean => pgCode(err) === "23505";
/** A deadlock or serialization failure: the transaction lost a race and may simply be run again. */
export const isRetryableConflict = (err: unknown): boolean => ["40P01", "40001"].includes(pgCode(err) ?? "");
export const isForeignKeyViolation = (err: unknown): boolean => pgCode(err) === "23503";
/**
 * A write whose parent row was deleted under it (a project or node deleted by a concurrent
 * request) fails its foreign key (23503): that is 404 of what vanished, never 500. Every foreign
 * key cascades on delete, so a 23503 always means the referenced row is gone; drizzle-kit names
 * the constraint `<table>_<column>_<referenced table>_<referenced column>_fk`.
 */
export function vanishedRow(err: unknown): AppError | null {
  if (!isForeignKeyViolation(err)) return null;
  const table = /_(projects|nodes|oauth_clients|oauth_grants|users)_id_fk$/.exec(constraintOf(err) ?? "")?.[1];
  return notFound(table ? VANISHED[table] : undefined);
}
const VANISHED: Record<string, string> = { projects: "project", nodes: "node", oauth_clients: "OAuth client", oauth_grants: "OAuth grant", users: "user" };

type Raised = { code?: unknown; errno?: unknown; constraint_name?: unknown; constraint?: unknown; cause?: unknown };
/** The error and the causes it wraps (drivers and drizzle nest the database's error), at most `depth` deep. */
function causeChain(err: unknown, depth = 4): Raised[] {
  const chain: Raised[] = [];
  for (let e = err; chain.length < depth && e && typeof e === "object"; e = (e as Raised).cause) chain.push(e);
  return chain;
}
const constraints = (err: unknown): unknown[] => causeChain(err).map((e) => e.constraint_name ?? e.constraint);
const constraintOf = (err: unknown): string | null => constraints(err).find((c) => typeof c === "string") ?? null;
const pgCode = (err: unknown): string | null =>
  causeChain(err)
    .map((e) => e.code)
    .find((c): c is string => typeof c === "string" && /^[0-9A-Z]{5}$/.test(c)) ?? null;

// PostgreSQL's admin_shutdown (terminated backend), crash_shutdown, cannot_connect_now, connection
// exceptions (08…) and too_many_connections; then postgres.js's and the socket's own codes.
const DB_DOWN_CODES = new Set([
  ...["57P01", "57P02", "57P03", "08000", "08003", "08006", "08001", "53300"],
  ...["CONNECTION_CLOSED", "CONNECTION_ENDED", "CONNECTION_DESTROYED", "CONNECT_TIMEOUT", "ECONNREFUSED", "ECONNRESET", "EPIPE"],
]);

/** True when the database is unreachable (not a bad query): the caller may retry. */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (const e of causeChain(err, 5)) {
    if (e instanceof AppError) return false; // already classified; its cause may be a vendor's ECONNREFUSED
    const code = e.code ?? e.errno;
    if (typeof code === "string" && DB_DOWN_CODES.has(code)) return true;
    // The embedded database closed under the process (shutdown, or its handle lost) has no code.
    if (e instanceof Error && e.message === "PGlite is closed") return true;
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
  const constraint = constraints(err).findLast((c) => typeof c === "string");
  if (constraint !== undefined) out.constraint = constraint;
  if (code) out.pg_code = code;
  else if (!/^Failed query/.test(err.message)) out.message = (err.message.split("\n")[0] ?? "").slice(0, 200);
  const frame = err.stack?.split("\n").find((l) => /^\s+at /.test(l));
  if (frame) out.at = frame.trim().slice(0, 200);
  return out;
}

/** The error envelope as an OpenAPI schema (every admin route's error answers). */
export const ErrorBody = {
  type: "object",
  description: "Error body: { error: { code, message, details? } }",
  properties: { error: { type: "object", properties: { code: { type: "string" }, message: { type: "string" }, details: {} }, required: ["code", "message"] } },
  required: ["error"],
};

/** What the error handler needs from the app: its log, the request's id, readiness, the admin 403 challenge. */
export interface ErrorHandlerOptions {
  readonly log: { warn(message: string, fields?: Record<string, unknown>): void; error(message: string, fields?: Record<string, unknown>): void };
  readonly requestId: (request: Request) => string | undefined;
  /** Called when a request failed for want of the database (/readyz holds 503 a moment after). */
  readonly databaseUnavailable: () => void;
  /** The WWW-Authenticate value of a 403 insufficient_scope thrown by a service. */
  readonly scopeChallenge: (required: unknown) => string;
  /** The body limit a 413 names. */
  readonly maxBodyBytes: number;
}

interface ErrorContext {
  readonly code: unknown;
  readonly error: unknown;
  readonly set: { headers: Record<string, string | number>; status?: number | string };
  readonly request: Request;
}

/** The app's onError: every error a route throws, answered in the one error format (OAuth's own errors render themselves). */
export function appErrorHandler(o: ErrorHandlerOptions): (ctx: ErrorContext) => unknown {
  const unavailable = (request: Request): void => {
    o.databaseUnavailable();
    o.log.warn("database unavailable", { request_id: o.requestId(request) });
  };
  return ({ code, error: thrown, set, request }) => {
    set.headers["content-type"] = "application/json; charset=utf-8";
    // Elysia wraps what a parser throws in a ParseError; our parsers throw AppErrors (413, 400).
    const cause = code === "PARSE" ? (thrown as { cause?: unknown }).cause : undefined;
    const error = cause instanceof Error ? cause : thrown;
    // A plugin whose surface answers in another wire format (OAuth's RFC errors) throws errors that
    // render themselves; one caused by the database's absence still counts for readiness.
    if (hasResponse(error)) {
      if (isDatabaseUnavailable(error)) unavailable(request);
      return error.toResponse();
    }
    const reply = (status: number, ...body: Parameters<typeof errorBody>) => {
      set.status = status;
      return errorBody(...body);
    };
    if (error instanceof AppError) {
      if (error.headers) Object.assign(set.headers, error.headers);
      // A 403 from a service (a key limited to projects, a scope it cannot grant) is a Bearer challenge too (RFC 6750 §3).
      if (error.code === "insufficient_scope") set.headers["www-authenticate"] ??= o.scopeChallenge((error.details as { required?: unknown } | undefined)?.required);
      return reply(error.status, error.code, error.message, error.details);
    }
    if (error instanceof ValidationError || code === "VALIDATION") return reply(400, "invalid_request", "request validation failed", validationDetails(error));
    const fixed = FIXED_ANSWERS.get(code);
    if (fixed) return reply(...fixed);
    if ((error as { status?: unknown }).status === 413) return reply(413, "payload_too_large", `request body exceeds ${o.maxBodyBytes} bytes`);
    const vanished = vanishedRow(error);
    if (vanished) return reply(vanished.status, vanished.code, vanished.message);
    if (isDatabaseUnavailable(error)) {
      // The pool reconnects by itself on the next query; tell the client to retry shortly.
      unavailable(request);
      set.headers["retry-after"] = "1";
      return reply(503, "service_unavailable", "the database is not answering; retry shortly");
    }
    // Unknown failure: log it (message only, no request data) and answer a generic 500.
    o.log.error("unhandled error", { request_id: o.requestId(request), ...describeError(error) });
    return reply(500, "internal", "internal server error");
  };
}

const FIXED_ANSWERS = new Map<unknown, [number, ErrorCode, string]>([
  ["NOT_FOUND", [404, "not_found", "no such route"]],
  ["PARSE", [400, "invalid_request", "request body could not be parsed"]],
  ["INVALID_COOKIE_SIGNATURE", [400, "invalid_request", "invalid request"]],
  ["INVALID_FILE_TYPE", [400, "invalid_request", "invalid request"]],
]);

function validationDetails(error: unknown): unknown {
  if (!(error instanceof ValidationError)) return undefined;
  const all = error.all.slice(0, 10).map((e) => {
    const path = "path" in e && typeof e.path === "string" ? e.path : "";
    return { in: error.type, field: path.replace(/^\//, "").replace(/\//g, ".") || null, message: "summary" in e && e.summary ? e.summary : e.message };
  });
  return { errors: all, field: all[0]?.field ?? null };
}

const hasResponse = (e: unknown): e is { toResponse(): Response } => typeof (e as { toResponse?: unknown } | null)?.toResponse === "function";
