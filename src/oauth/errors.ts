// OAuth's wire format (RFC 6749 §5.2, RFC 7591 §3.2.2, RFC 7009 §2.2.1): the deliberate exception to
// src/errors.ts. These endpoints answer `{ "error", "error_description" }` with the RFC's codes.
import { AppError } from "../errors";
import { type CorsPolicy, corsHeaders } from "../lib/cors";
import { parseBody, refuseDeclaredOver } from "../lib/json";

export type OAuthErrorCode =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "unsupported_response_type"
  | "invalid_scope"
  | "invalid_target"
  | "server_error"
  | "temporarily_unavailable"
  | "invalid_redirect_uri"
  | "invalid_client_metadata"
  | "rate_limited";

export class OAuthError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly status: number = STATUS[error] ?? 400,
    readonly headers: Record<string, string> = {},
    // The failure behind a temporarily_unavailable (the database's): the app's error hook reads it for readiness; never answered.
    options?: ErrorOptions,
  ) {
    super(description, options);
    this.name = "OAuthError";
  }

  /** The RFC error answer; thrown outside a handler (by the body parser), it renders itself through the app's error hook. */
  toResponse(): Response {
    return oauthJson({ error: this.error, error_description: this.description }, this.status, this.headers);
  }
}

const STATUS: Partial<Record<OAuthErrorCode, number>> = { invalid_client: 401, rate_limited: 429, server_error: 500, temporarily_unavailable: 503 };

/** The OAuth endpoints' CORS policy (metadata, register, token, revoke): open, for browser-based clients. */
export const OAUTH_CORS: CorsPolicy = {
  origins: "*",
  methods: "GET, POST, OPTIONS",
  allowHeaders: "authorization, content-type, mcp-protocol-version",
  exposeHeaders: "www-authenticate, retry-after",
  maxAgeSeconds: 86400,
};
export const OAUTH_CORS_HEADERS: Readonly<Record<string, string>> = corsHeaders(OAUTH_CORS, null);

export const oauthJson = (body: unknown, status = 200, headers: Record<string, string> = {}): Response =>
  new Response(JSON.stringify(body), {
    status,
    headers: {
      "content-type": "application/json; charset=utf-8",
      // RFC 6749 §5.1: token answers (and their errors) must not be cached.
      "cache-control": "no-store",
      pragma: "no-cache",
      ...OAUTH_CORS_HEADERS,
      ...headers,
    },
  });

// The authorization endpoint too: a browser's form always parses, so whatever fails here is no page's.
const JSON_ENDPOINTS = new Set(["/oauth/token", "/oauth/revoke", "/oauth/register", "/oauth/authorize"]);

/**
 * The OAuth routes' body parser (the body is the caller's credential, so it is read before the
 * caller is known): JSON and forms up to MAX_BODY_BYTES (1 MiB); a body of any type declared longer
 * is refused unread, and one of another type never read (null, so that Elysia's own parser, bounded
 * only by the server's upload limit, is not reached: every endpoint refuses the type). What the
 * parser refuses answers in the RFC form on the JSON endpoints; the consent pages keep the app's own mapping.
 */
export async function parseOAuthBody(request: Request, contentType: string | undefined, path: string): Promise<unknown> {
  try {
    refuseDeclaredOver(request);
    return (await parseBody(request, contentType)) ?? null;
  } catch (err) {
    const endpoint = path.replace(/\/+$/, "");
    if (!(err instanceof AppError) || !JSON_ENDPOINTS.has(endpoint)) throw err;
    const tooLarge = err.status === 413;
    const code: OAuthErrorCode = endpoint === "/oauth/register" ? "invalid_client_metadata" : "invalid_request";
    throw new OAuthError(code, tooLarge ? "request body is too large" : "request body could not be parsed", tooLarge ? 413 : 400);
  }
}
