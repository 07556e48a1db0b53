import { decodeBase64IgnorePadding } from "@oslojs/encoding";
import { and, desc, eq, inArray, isNull, sql } from "drizzle-orm";
import type { z } from "zod";
import type { Db } from "../../db/client";
import { oauthClients, oauthGrants, oauthTokens, projectMembers, projects, users } from "../../db/schema";
import { AppError, notFound } from "../errors";
import type { AdminCaller } from "../lib/caller";
import { uuidv7 } from "../lib/ids";
import { MCP_SCOPES } from "../lib/scopes";
import { generateToken, hashToken, safeEqual } from "../lib/tokens";
import { OAuthError } from "./errors";
import type { ClientOut, GrantOut } from "./model";
import { AUTH_METHODS, GRANT_TYPES } from "./model";
import { redirectUriProblem } from "./redirect-uri";

export type OAuthClient = typeof oauthClients.$inferSelect;
const MAX_REDIRECT_URIS = 10;
/** Registered client ids are UUIDs; metadata-document client ids are https URLs of up to this length. */
export const MAX_CLIENT_ID_LENGTH = 2000;
const URI_FIELDS = ["client_uri", "logo_uri", "tos_uri", "policy_uri"] as const;
const TEXT_FIELDS = ["software_id", "software_version"] as const;

const meta = (description: string): OAuthError => new OAuthError("invalid_client_metadata", description);

function optionalString(body: Record<string, unknown>, field: string, max: number): string | null {
  const v = body[field];
  if (v === undefined || v === null) return null;
  if (typeof v !== "string" || v.length > max || /[\u0000-\u001f\u007f]/.test(v)) throw meta(`${field} must be a string of at most ${max} characters`);
  return v;
}

function stringArray(body: Record<string, unknown>, field: string, max: number): string[] | null {
  const v = body[field];
  if (v === undefined || v === null) return null;
  if (!Array.isArray(v) || v.length > max || !v.every((x) => typeof x === "string")) throw meta(`${field} must be an array of at most ${max} strings`);
  return v as string[];
}

/** Known MCP scopes in a space-separated list, in canonical order; unknown ones are dropped. */
export const knownScopes = (scope: string | null | undefined): string[] => MCP_SCOPES.filter((s) => (scope ?? "").split(" ").includes(s));

/** RFC 7591 registration: validates the metadata, stores the client (secret hashed), answers what was registered. */
export async function registerClient(db: Db, body: unknown, now: Date): Promise<Record<string, unknown>> {
  if (body === null || typeof body !== "object" || Array.isArray(body)) throw meta("the body must be a JSON object of client metadata");
  const input = body as Record<string, unknown>;

  const redirectUris = input.redirect_uris;
  if (!Array.isArray(redirectUris) || redirectUris.length === 0) throw new OAuthError("invalid_redirect_uri", "redirect_uris must be a non-empty array");
  if (redirectUris.length > MAX_REDIRECT_URIS) throw new OAuthError("invalid_redirect_uri", `at most ${MAX_REDIRECT_URIS} redirect URIs`);
  const problem = redirectUris.map((uri) => (typeof uri === "string" ? redirectUriProblem(uri) : "redirect URIs must be strings")).find((p) => p !== null);
  if (problem) throw new OAuthError("invalid_redirect_uri", problem);

  // RFC 7591 §2 makes client_secret_basic the default, but MCP clients that omit the field (VS Code and
  // others) go on as public PKCE clients and never send a secret. The server may substitute a value
  // (§3.2.1) and answers the one it registered: omitted means public; a client wanting a secret asks.
  const method = optionalString(input, "token_endpoint_auth_method", 64) ?? "none";
  if (!AUTH_METHODS.includes(method)) throw meta(`token_endpoint_auth_method must be one of ${AUTH_METHODS.join(", ")}`);

  // Deliberately both by default (RFC 7591 says authorization_code only): MCP clients that omit the
  // field still expect to refresh.
  const grantTypes = stringArray(input, "grant_types", 10) ?? GRANT_TYPES;
  if (grantTypes.some((g) => !GRANT_TYPES.includes(g))) throw meta("grant_types may contain only authorization_code and refresh_token");
  if (!grantTypes.includes("authorization_code")) throw meta("grant_types must include authorization_code");
  const responseTypes = stringArray(input, "response_types", 10) ?? ["code"];
  if (responseTypes.length === 0 || responseTypes.some((r) => r !== "code")) throw meta("response_types may contain only code");

  const clientName = optionalString(input, "client_name", 200);
  const scope = knownScopes(optionalString(input, "scope", 1000)).join(" ") || null;
  const extra: Record<string, unknown> = {};
  for (const f of URI_FIELDS) {
    const v = optionalString(input, f, 2000);
    if (v === null || v === "") continue;
    if (!/^https?:\/\//i.test(v) || !URL.canParse(v)) throw meta(`${f} must be an http(s) URL`);
    extra[f] = v;
  }
  for (const f of TEXT_FIELDS) {
    const v = optionalString(input, f, 200);
    if (v !== null) extra[f] = v;
  }
  const contacts = stringArray(input, "contacts", 10);
  if (contacts) extra.contacts = contacts.map((c) => c.slice(0, 200));

  const id = uuidv7(now.getTime());
  const secret = method === "none" ? null : generateToken("cms_cs_");
  await db.insert(oauthClients).values({
    id,
    secretHash: secret ? hashToken(secret) : null,
    clientName,
    redirectUris: [...new Set(redirectUris as string[])],
    tokenEndpointAuthMethod: method,
    grantTypes: [...new Set(grantTypes)],
    responseTypes: ["code"],
    scope,
    metadata: extra,
    createdAt: now,
  });
  return {
    client_id: id,
    client_id_issued_at: Math.floor(now.getTime() / 1000),
    ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
    redirect_uris: [...new Set(redirectUris as string[])],
    token_endpoint_auth_method: method,
    grant_types: [...new Set(grantTypes)],
    response_types: ["code"],
    ...(clientName !== null ? { client_name: clientName } : {}),
    ...(scope !== null ? { scope } : {}),
    ...extra,
  };
}

export async function findClient(db: Db, clientId: string): Promise<OAuthClient | null> {
  if (clientId.length === 0 || clientId.length > MAX_CLIENT_ID_LENGTH) return null;
  const [c] = await db.select().from(oauthClients).where(eq(oauthClients.id, clientId)).limit(1);
  return c ?? null;
}

export type Form = Record<string, unknown>;

/** One value of a form parameter: absent → null; repeated (RFC 6749 §3.2) → invalid_request. */
export function param(form: Form, name: string): string | null {
  const v = form[name];
  if (v === undefined) return null;
  if (typeof v !== "string") throw new OAuthError("invalid_request", `${name} must be given once`);
  return v === "" ? null : v;
}

/**
 * Client authentication at the token and revocation endpoints (RFC 6749 §2.3): HTTP Basic or
 * client_secret in the body for confidential clients, client_id alone for public ones; never two methods.
 */
export async function authenticateClient(db: Db, form: Form, authorization: string | null): Promise<OAuthClient> {
  const bodyId = param(form, "client_id");
  const bodySecret = param(form, "client_secret");
  let [id, secret] = [bodyId, bodySecret];
  const basic = authorization && /^Basic\s+/i.test(authorization) ? authorization.replace(/^Basic\s+/i, "").trim() : null;
  const challenge = { "www-authenticate": 'Basic realm="oauth"' };
  const unauthorized = (description: string): OAuthError => new OAuthError("invalid_client", description, 401, basic ? challenge : {});
  if (basic !== null) {
    if (bodySecret !== null) throw new OAuthError("invalid_request", "use one client authentication method, not two");
    const decoded = decodeBasic(basic);
    if (!decoded) throw unauthorized("malformed Basic credentials");
    if (bodyId !== null && bodyId !== decoded.id) throw new OAuthError("invalid_request", "client_id differs from the Basic credentials");
    // A public client may send Basic with an empty password (RFC 6749 §2.3.1 encodes "id:"): no secret.
    [id, secret] = [decoded.id, decoded.secret === "" ? null : decoded.secret];
  }
  if (id === null) throw unauthorized("client authentication is required (client_id)");
  const client = await findClient(db, id);
  if (!client) throw unauthorized("unknown client");
  if (client.tokenEndpointAuthMethod === "none") {
    if (secret !== null) throw unauthorized("this client is public and has no secret");
  } else if (secret === null || !client.secretHash || !safeEqual(hashToken(secret), client.secretHash)) throw unauthorized("client authentication failed");
  return client;
}

function decodeBasic(value: string): { id: string; secret: string } | null {
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(decodeBase64IgnorePadding(value));
    const i = text.indexOf(":");
    // RFC 6749 §2.3.1: both parts are form-urlencoded before base64.
    const dec = (s: string): string => decodeURIComponent(s.replace(/\+/g, " "));
    return i < 0 ? null : { id: dec(text.slice(0, i)), secret: dec(text.slice(i + 1)) };
  } catch {
    return null;
  }
}

/** Revokes a grant and every token issued under it (a whole refresh-token family). */
export async function revokeGrantFamily(db: Db, grantId: string, now: Date): Promise<void> {
  await db.transaction(async (tx) => {
    await tx
      .update(oauthGrants)
      .set({ revokedAt: now })
      .where(and(eq(oauthGrants.id, grantId), isNull(oauthGrants.revokedAt)));
    await tx
      .update(oauthTokens)
      .set({ revokedAt: now })
      .where(and(eq(oauthTokens.grantId, grantId), isNull(oauthTokens.revokedAt)));
  });
}

// ---- administration of clients and consents (admin API, keys:write) ----

type GrantFilter = { project_id?: string; user_id?: string; client_id?: string; active?: boolean };

/**
 * The consents, newest first. A project-limited caller sees those of its projects, and the email of
 * their user only while that user is a member of one of its projects: of someone who has left them
 * (or an owner, who is no member) it learns nothing.
 */
export async function listGrants(db: Db, filter: GrantFilter, caller: AdminCaller): Promise<z.output<typeof GrantOut>[]> {
  if (caller.projectIds?.length === 0) return [];
  const member = caller.projectIds
    ? sql<boolean>`exists (select 1 from ${projectMembers} where ${projectMembers.userId} = ${oauthGrants.userId} and ${inArray(projectMembers.projectId, [...caller.projectIds])})`
    : sql<boolean>`true`;
  const rows = await db
    .select({ g: oauthGrants, email: users.email, member, clientName: oauthClients.clientName })
    .from(oauthGrants)
    .innerJoin(users, eq(users.id, oauthGrants.userId))
    .innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId))
    .innerJoin(projects, eq(projects.id, oauthGrants.projectId))
    .where(
      and(
        filter.project_id ? eq(oauthGrants.projectId, filter.project_id) : undefined,
        filter.user_id ? eq(oauthGrants.userId, filter.user_id) : undefined,
        filter.client_id ? eq(oauthGrants.clientId, filter.client_id) : undefined,
        filter.active ? isNull(oauthGrants.revokedAt) : undefined,
        caller.projectIds ? inArray(oauthGrants.projectId, [...caller.projectIds]) : undefined,
      ),
    )
    .orderBy(desc(oauthGrants.createdAt), desc(oauthGrants.id))
    .limit(1000);
  return rows.map(({ g, email, member, clientName }) => ({
    id: g.id,
    client_id: g.clientId,
    client_name: clientName,
    user_id: g.userId,
    user_email: member ? email : null,
    project_id: g.projectId,
    scopes: g.scopes,
    resource: g.resource,
    created_at: g.createdAt.toISOString(),
    revoked_at: g.revokedAt?.toISOString() ?? null,
  }));
}

/** Withdraws a consent: its tokens stop working at once on every instance. 404 outside the key's projects. */
export async function revokeGrant(db: Db, grantId: string, caller: AdminCaller, now: Date): Promise<void> {
  const [g] = await db.select({ projectId: oauthGrants.projectId }).from(oauthGrants).where(eq(oauthGrants.id, grantId)).limit(1);
  if (!g || (caller.projectIds !== null && !caller.projectIds.includes(g.projectId))) throw notFound("grant");
  await revokeGrantFamily(db, grantId, now);
}

function requireUnlimited(caller: AdminCaller): void {
  // Clients are not bound to a project: only a key valid for every project manages them.
  if (caller.projectIds !== null) throw new AppError("insufficient_scope", "managing OAuth clients needs a key not limited to projects");
}

export async function listClients(db: Db, caller: AdminCaller): Promise<z.output<typeof ClientOut>[]> {
  requireUnlimited(caller);
  const rows = await db.select().from(oauthClients).orderBy(desc(oauthClients.createdAt)).limit(1000);
  return rows.map((c) => ({
    client_id: c.id,
    client_name: c.clientName,
    redirect_uris: c.redirectUris,
    token_endpoint_auth_method: c.tokenEndpointAuthMethod,
    grant_types: c.grantTypes,
    scope: c.scope,
    created_at: c.createdAt.toISOString(),
  }));
}

/** Deletes a client; its grants, codes and tokens go with it (foreign keys cascade). */
export async function deleteClient(db: Db, clientId: string, caller: AdminCaller): Promise<void> {
  requireUnlimited(caller);
  const deleted = await db.delete(oauthClients).where(eq(oauthClients.id, clientId)).returning({ id: oauthClients.id });
  if (deleted.length === 0) throw notFound("client");
}
