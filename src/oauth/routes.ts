import { type Context, Elysia, t } from "elysia";
import type { AppDeps } from "../core/deps";
import { describeError, isDatabaseUnavailable, isRetryableConflict } from "../errors";
import { corsPreflight } from "../lib/cors";
import { clientAddress, hitRateLimit } from "../lib/rate-limit";
import { peerAddress } from "../platform/peer";
import { type PageResult, showAuthorization, submitAuthorization } from "./consent";
import { OAUTH_CORS, OAUTH_CORS_HEADERS, OAuthError, oauthJson, parseOAuthBody } from "./errors";
import { authorizationServerMetadata, protectedResourceMetadata } from "./metadata";
import { AuthorizationServerMetadata, OAuthErrorSchema, ProtectedResourceMetadata, RegisterRequestDoc, RevokeRequestDoc, TokenRequestDoc, TokenResponse } from "./model";
import { unavailablePage } from "./pages";
import { authenticateClient, type OAuthClient, param, registerClient } from "./service";
import { newNonce } from "./session";
import { exchangeCode, refreshTokens, revokeToken } from "./tokens";

const oauthDoc = (summary: string, extra: Record<string, unknown> = {}) => ({ tags: ["oauth"], summary, ...extra });

const WELL_KNOWN = [
  ["/.well-known/oauth-protected-resource", protectedResourceMetadata, ProtectedResourceMetadata, "Protected resource metadata (RFC 9728)"],
  ["/.well-known/oauth-protected-resource/mcp", protectedResourceMetadata, ProtectedResourceMetadata, "Protected resource metadata of /mcp (RFC 9728, path-inserted form)"],
  ["/.well-known/oauth-authorization-server", authorizationServerMetadata, AuthorizationServerMetadata, "Authorization server metadata (RFC 8414)"],
] as const;

const isForm = (request: Request): boolean => (request.headers.get("content-type") ?? "").toLowerCase().startsWith("application/x-www-form-urlencoded");

const metadataResponse = (body: unknown): Response =>
  new Response(JSON.stringify(body), {
    headers: { "content-type": "application/json; charset=utf-8", "cache-control": "public, max-age=300", ...OAUTH_CORS_HEADERS },
  });

function pageResponse(r: PageResult, nonce: string): Response {
  // CSP of the consent pages: nothing but our inline style, forms only to us and to the client's redirect target.
  const u = r.redirectUri ? new URL(r.redirectUri) : null;
  const target = !u ? "" : u.protocol === "http:" || u.protocol === "https:" ? ` ${u.origin}` : ` ${u.protocol}`;
  const headers = new Headers({
    "cache-control": "no-store",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
    "content-security-policy": `default-src 'none'; style-src 'nonce-${nonce}'; img-src https:; form-action 'self'${target}; frame-ancestors 'none'; base-uri 'none'`,
  });
  for (const c of r.cookies ?? []) headers.append("set-cookie", c);
  if (r.retryAfter) headers.set("retry-after", String(r.retryAfter));
  // A redirect carries no page (PageResult has html or location, never both).
  if (r.location) headers.set("location", r.location);
  else headers.set("content-type", "text/html; charset=utf-8");
  return new Response(r.html, { status: r.status, headers });
}

/**
 * The consent pages while the database is away: a 503 page (thrown, so that the app's error hook
 * marks the instance not ready). Never an error redirect: the client and its redirect URI could not be checked.
 */
class UnavailablePage extends Error {
  constructor(
    private readonly nonce: string,
    cause: unknown,
  ) {
    super("database unavailable", { cause });
  }
  toResponse(): Response {
    return pageResponse({ status: 503, html: unavailablePage(this.nonce), retryAfter: 1 }, this.nonce);
  }
}

async function orUnavailablePage(nonce: string, run: () => Promise<PageResult>): Promise<Response> {
  try {
    return pageResponse(await run(), nonce);
  } catch (err) {
    if (isDatabaseUnavailable(err)) throw new UnavailablePage(nonce, err);
    throw err;
  }
}

/** Runs an OAuth JSON endpoint: OAuthErrors in the RFC form, anything else a logged server_error. */
async function guarded(deps: AppDeps, fn: () => Promise<Response>, attempt = 1): Promise<Response> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof OAuthError) return err.toResponse();
    // Concurrent presentations of one code or refresh token may deadlock in PostgreSQL: run again.
    if (isRetryableConflict(err) && attempt < 3) return guarded(deps, fn, attempt + 1);
    // Thrown, not answered: the app's error hook renders it and marks the instance not ready, as for the admin API.
    if (isDatabaseUnavailable(err)) throw new OAuthError("temporarily_unavailable", "the database is not answering; retry shortly", 503, { "retry-after": "1" }, { cause: err });
    deps.log.error("oauth endpoint failed", describeError(err));
    return new OAuthError("server_error", "internal server error").toResponse();
  }
}

async function limited(deps: AppDeps, key: string, limit: number, windowSeconds: number): Promise<void> {
  const r = await hitRateLimit(deps.db, key, limit, windowSeconds, deps.now());
  if (!r.allowed) throw new OAuthError("rate_limited", "too many requests; retry later", 429, { "retry-after": String(r.retryAfter) });
}

const addressOf = (deps: AppDeps, request: Request, server: Context["server"]): string => clientAddress(request, peerAddress(request, server), deps.config.trustProxy);

/** The token and revocation endpoints: a form body, and the client it authenticates. */
async function authenticatedForm(deps: AppDeps, body: unknown, request: Request): Promise<{ form: Record<string, unknown>; client: OAuthClient }> {
  if (!isForm(request)) throw new OAuthError("invalid_request", "the body must be application/x-www-form-urlencoded");
  const form = (body ?? {}) as Record<string, unknown>;
  return { form, client: await authenticateClient(deps.db, form, request.headers.get("authorization")) };
}

/** POST /oauth/register: rate limited per client address. */
async function register(deps: AppDeps, body: unknown, request: Request, server: Context["server"]): Promise<Response> {
  await limited(deps, `oauth_register:${addressOf(deps, request, server)}`, deps.config.oauthRegisterRateLimit, 3600);
  if (!(request.headers.get("content-type") ?? "").toLowerCase().includes("json")) throw new OAuthError("invalid_client_metadata", "the body must be application/json");
  const registered = await registerClient(deps.db, body, deps.now());
  deps.log.info("oauth client registered", { client_id: registered.client_id, auth_method: registered.token_endpoint_auth_method });
  return oauthJson(registered, 201);
}

/** POST /oauth/token: an authorization code or a refresh token exchanged for tokens. */
async function token(deps: AppDeps, body: unknown, request: Request, server: Context["server"]): Promise<Response> {
  const { db, config } = deps;
  const { form, client } = await authenticatedForm(deps, body, request);
  // Per client and address: a public client_id is no secret, so a limit per client alone would let
  // anyone lock its users out, and a metadata-document client_id is shared by all of a vendor's users.
  await limited(deps, `oauth_token:${client.id}:${addressOf(deps, request, server)}`, config.oauthTokenRateLimit, 60);
  const grantType = param(form, "grant_type");
  const now = deps.now();
  if (grantType === "authorization_code") return oauthJson(await exchangeCode(db, client, form, config, now));
  if (grantType === "refresh_token") return oauthJson(await refreshTokens(db, client, form, config, now));
  if (grantType === null) throw new OAuthError("invalid_request", "grant_type is required");
  throw new OAuthError("unsupported_grant_type", "supported: authorization_code, refresh_token");
}

/** POST /oauth/revoke. */
async function revoke(deps: AppDeps, body: unknown, request: Request): Promise<Response> {
  const { form, client } = await authenticatedForm(deps, body, request);
  await revokeToken(deps.db, client, form, deps.now());
  return oauthJson({}, 200);
}

export function oauthRoutes(deps: AppDeps) {
  const { config } = deps;
  const app = new Elysia().onParse(({ request, contentType, path }) => parseOAuthBody(request, contentType, path));
  for (const [path, metadata, schema, summary] of WELL_KNOWN) {
    app.get(path, () => metadataResponse(metadata(config)), { response: { 200: schema }, detail: oauthDoc(summary) });
  }
  for (const path of [...WELL_KNOWN.map(([path]) => path), "/oauth/register", "/oauth/token", "/oauth/revoke"]) {
    app.options(path, ({ request }) => corsPreflight(OAUTH_CORS, request), { detail: oauthDoc("CORS preflight", { hide: true }) });
  }
  return app
    .post("/oauth/register", ({ body, request, server }) => guarded(deps, () => register(deps, body, request, server)), {
      detail: oauthDoc("Register a client (RFC 7591)", {
        requestBody: RegisterRequestDoc,
        description: "Public (token_endpoint_auth_method none) or confidential clients; the client_secret is shown once. Rate limited per client address.",
      }),
      response: { 201: t.Object({ client_id: t.String(), client_secret: t.Optional(t.String()) }, { additionalProperties: true }), 400: OAuthErrorSchema, 429: OAuthErrorSchema },
    })
    .get(
      "/oauth/authorize",
      async ({ request, server }) => {
        const url = new URL(request.url);
        const nonce = newNonce();
        const values = (name: string): string[] => url.searchParams.getAll(name).filter((v) => v !== "");
        return orUnavailablePage(nonce, () => showAuthorization(deps, values, request.headers.get("cookie"), addressOf(deps, request, server), nonce));
      },
      {
        detail: oauthDoc("Authorization endpoint: sign-in and consent page", {
          description:
            "Query: response_type=code, client_id, redirect_uri, code_challenge, code_challenge_method=S256, resource={PUBLIC_URL}/mcp, state, scope. An unknown client or redirect URI shows an error page; other errors redirect with error, state and iss.",
        }),
      },
    )
    .post(
      "/oauth/authorize",
      async ({ body, request, server }) => {
        const nonce = newNonce();
        const form = isForm(request) && body && typeof body === "object" ? (body as Record<string, unknown>) : {};
        return orUnavailablePage(nonce, () => submitAuthorization(deps, form, request.headers.get("cookie"), addressOf(deps, request, server), nonce));
      },
      { detail: oauthDoc("Submit sign-in, project choice or consent (form post from the authorization page; CSRF-protected)") },
    )
    .post("/oauth/token", ({ body, request, server }) => guarded(deps, () => token(deps, body, request, server)), {
      detail: oauthDoc("Token endpoint: authorization_code (PKCE S256) and refresh_token (rotating)", { requestBody: TokenRequestDoc }),
      response: { 200: TokenResponse, 400: OAuthErrorSchema, 401: OAuthErrorSchema, 429: OAuthErrorSchema },
    })
    .post("/oauth/revoke", ({ body, request }) => guarded(deps, () => revoke(deps, body, request)), {
      detail: oauthDoc("Revoke a token (RFC 7009); a refresh token revokes its whole authorization", { requestBody: RevokeRequestDoc }),
      response: { 200: t.Object({}), 400: OAuthErrorSchema, 401: OAuthErrorSchema },
    });
}
