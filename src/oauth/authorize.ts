import type { Db } from "../../db/client";
import { oauthCodes, oauthGrants } from "../../db/schema";
import { uuidv7 } from "../lib/ids";
import { DEFAULT_MCP_SCOPES, type EffectiveRole, scopesOfRole } from "../lib/scopes";
import { generateToken, hashToken } from "../lib/tokens";
import type { OAuthErrorCode } from "./errors";
import { matchRedirectUri, withParams } from "./redirect-uri";
import { knownScopes, type OAuthClient } from "./service";

const CODE_TTL_MS = 10 * 60_000;
const CHALLENGE_RE = /^[A-Za-z0-9_-]{43}$/;
const MAX_STATE = 2048;

/** The parameters of an authorization request, as they travel between the page's steps. */
const REQUEST_PARAMS = ["client_id", "redirect_uri", "response_type", "state", "code_challenge", "code_challenge_method", "resource", "scope"] as const;
export type RequestParams = Partial<Record<(typeof REQUEST_PARAMS)[number], string>>;

export interface AuthorizationRequest {
  readonly client: OAuthClient;
  readonly redirectUri: string;
  readonly codeChallenge: string;
  readonly resource: string;
  /** Requested MCP scopes (DEFAULT_MCP_SCOPES when the client asked for none: model:write only by name). */
  readonly scopes: readonly string[];
  /** What the page posts back: the request as received. */
  readonly params: RequestParams;
}

/** Finds the client a client_id names: null when unknown, a reason when it cannot be used. */
export type ClientLookup = (clientId: string) => Promise<OAuthClient | string | null>;

export type ParsedRequest =
  | { readonly kind: "ok"; readonly request: AuthorizationRequest }
  /** Client or redirect URI not trustworthy: show an error page, never redirect (RFC 6749 §4.1.2.1). */
  | { readonly kind: "page_error"; readonly message: string }
  | { readonly kind: "redirect"; readonly location: string };

/**
 * Validates an authorization request. `values` maps a name to every value given for it, so a
 * repeated parameter is refused (RFC 6749 §3.1).
 */
export async function parseAuthorizationRequest(
  lookup: ClientLookup,
  values: (name: string) => string[],
  issuer: string,
  resolveResource: (raw: string | undefined) => string | null,
): Promise<ParsedRequest> {
  const clientIds = values("client_id");
  if (clientIds.length !== 1 || !clientIds[0]) return { kind: "page_error", message: "The request names no client (client_id), or names more than one." };
  const client = await lookup(clientIds[0]);
  if (client === null) return { kind: "page_error", message: "This application is not registered with this service." };
  if (typeof client === "string") return { kind: "page_error", message: client };

  const redirects = values("redirect_uri");
  if (redirects.length > 1) return { kind: "page_error", message: "The request carries more than one redirect_uri." };
  // Absent, it is the registered one when the client registered only one.
  const asked = redirects[0] ?? (client.redirectUris.length === 1 ? client.redirectUris[0] : undefined);
  const redirectUri = asked !== undefined && matchRedirectUri(client.redirectUris, asked) ? asked : null;
  if (!redirectUri) return { kind: "page_error", message: "The redirect address of this request is not one the application registered." };

  const params: RequestParams = { client_id: client.id, redirect_uri: redirectUri };
  for (const name of REQUEST_PARAMS) {
    const v = values(name);
    if (v.length > 1) return fail(redirectUri, issuer, null, "invalid_request", `${name} is repeated`);
    if (v.length === 1 && name !== "client_id" && name !== "redirect_uri") params[name] = v[0];
  }
  const state = params.state ?? null;
  if (state !== null && state.length > MAX_STATE) return fail(redirectUri, issuer, null, "invalid_request", "state is too long");
  const failHere = (error: OAuthErrorCode, description: string): ParsedRequest => fail(redirectUri, issuer, state, error, description);

  if (!params.response_type) return failHere("invalid_request", "response_type is required");
  if (params.response_type !== "code") return failHere("unsupported_response_type", "only response_type=code is supported");
  if (!params.code_challenge) return failHere("invalid_request", "code_challenge is required (PKCE)");
  if (params.code_challenge_method !== "S256") return failHere("invalid_request", "code_challenge_method must be S256");
  if (!CHALLENGE_RE.test(params.code_challenge)) return failHere("invalid_request", "code_challenge must be the base64url SHA-256 of the verifier (43 characters)");
  // RFC 8707: the token is for one resource, this service's MCP endpoint (absent: see OAUTH_REQUIRE_RESOURCE).
  const resource = resolveResource(params.resource);
  if (!resource) return failHere("invalid_target", `resource is missing or unknown (RFC 8707); this server issues tokens for ${issuer}/mcp`);

  // RFC 6749 §3.3: scopes this server does not know (openid, offline_access…) are ignored; a request
  // naming none of ours is treated like one naming no scope, and the consent page shows what is granted.
  const scopes = [knownScopes(params.scope), knownScopes(client.scope)].find((s) => s.length > 0) ?? [...DEFAULT_MCP_SCOPES];

  return { kind: "ok", request: { client, redirectUri, codeChallenge: params.code_challenge, resource, scopes, params } };
}

const fail = (redirectUri: string, issuer: string, state: string | null, error: OAuthErrorCode, description: string): ParsedRequest => ({
  kind: "redirect",
  location: withParams(redirectUri, { error, error_description: description, state, iss: issuer }),
});

/** Requested scopes the user's role in the chosen project holds: the only ones the consent page offers. */
export const grantableScopes = (request: AuthorizationRequest, role: EffectiveRole | null): string[] => request.scopes.filter((s) => scopesOfRole(role).includes(s));

/** Records the consent (one grant per approval: the family its tokens belong to) and a single-use code. */
export async function approve(db: Db, request: AuthorizationRequest, input: { userId: string; projectId: string; scopes: readonly string[] }, issuer: string, now: Date): Promise<string> {
  const code = generateToken("cms_code_");
  const grantId = uuidv7(now.getTime());
  const shared = { clientId: request.client.id, resource: request.resource, scopes: [...input.scopes], createdAt: now };
  await db.transaction(async (tx) => {
    await tx.insert(oauthGrants).values({ ...shared, id: grantId, userId: input.userId, projectId: input.projectId });
    const expiresAt = new Date(now.getTime() + CODE_TTL_MS);
    await tx.insert(oauthCodes).values({ ...shared, codeHash: hashToken(code), grantId, redirectUri: request.redirectUri, codeChallenge: request.codeChallenge, expiresAt });
  });
  return withParams(request.redirectUri, { code, state: request.params.state, iss: issuer });
}

export const denial = (request: AuthorizationRequest, issuer: string): string =>
  withParams(request.redirectUri, { error: "access_denied", error_description: "the user denied the request", state: request.params.state, iss: issuer });
