import { sha256 } from "@oslojs/crypto/sha2";
import { encodeBase64urlNoPadding } from "@oslojs/encoding";
import { and, eq, isNull } from "drizzle-orm";
import type { Db } from "../../db/client";
import { oauthCodes, oauthGrants, oauthTokens, projectMembers, users } from "../../db/schema";
import type { Config } from "../config";
import { uuidv7 } from "../lib/ids";
import { effectiveRole, isScope, scopesOfRole } from "../lib/scopes";
import { generateToken, hashToken, safeEqual } from "../lib/tokens";
import { OAuthError } from "./errors";
import { resolveResource } from "./metadata";
import type { TokenResponse } from "./model";
import { type Form, knownScopes, type OAuthClient, param, revokeGrantFamily } from "./service";

type TokenAnswer = typeof TokenResponse.static;
const VERIFIER_RE = /^[A-Za-z0-9._~-]{43,128}$/;
const invalidGrant = (description: string): OAuthError => new OAuthError("invalid_grant", description);

/** What the tokens of a grant share; nothing of the family outlives endsAt (OAUTH_REFRESH_FAMILY_TTL after the consent). */
type Family = Pick<typeof oauthTokens.$inferInsert, "grantId" | "clientId" | "userId" | "projectId" | "resource"> & { scopes: readonly string[]; endsAt: Date };

async function issue(db: Db, client: OAuthClient, { endsAt, ...family }: Family, config: Config, now: Date): Promise<TokenAnswer> {
  const access = generateToken("cms_at_");
  const refresh = client.grantTypes.includes("refresh_token") ? generateToken("cms_rt_") : null;
  const until = (ttlSeconds: number): Date => new Date(Math.min(now.getTime() + ttlSeconds * 1000, endsAt.getTime()));
  const accessExpiresAt = until(config.oauthAccessTokenTtlSeconds);
  const base = { ...family, scopes: [...family.scopes], createdAt: now };
  const rows: (typeof oauthTokens.$inferInsert)[] = [{ ...base, id: uuidv7(now.getTime()), kind: "access", tokenHash: hashToken(access), expiresAt: accessExpiresAt }];
  if (refresh) rows.push({ ...base, id: uuidv7(now.getTime()), kind: "refresh", tokenHash: hashToken(refresh), expiresAt: until(config.oauthRefreshTokenTtlSeconds) });
  await db.insert(oauthTokens).values(rows);
  return {
    access_token: access,
    token_type: "Bearer",
    expires_in: Math.max(1, Math.ceil((accessExpiresAt.getTime() - now.getTime()) / 1000)),
    ...(refresh ? { refresh_token: refresh } : {}),
    scope: family.scopes.join(" "),
  };
}

/** RFC 8707 at the token endpoint: a `resource` given must name the resource the grant is bound to. */
function checkResource(form: Form, bound: string, config: Config): void {
  const resource = param(form, "resource");
  if (resource !== null && resolveResource(config, resource) !== bound) throw new OAuthError("invalid_target", `this grant is for ${bound}`);
}

/**
 * The end of a grant's token family: an absolute lifetime from the consent, however often the
 * family was refreshed (each refresh token alone would let it slide forever).
 */
function familyEnd(grantCreatedAt: Date, config: Config, now: Date): Date {
  const end = new Date(grantCreatedAt.getTime() + config.oauthRefreshFamilyTtlSeconds * 1000);
  if (end.getTime() <= now.getTime()) throw invalidGrant("this authorization has reached its maximum lifetime; the user must authorize again");
  return end;
}

/**
 * The grant with the scopes its user's role holds in its project now, in one query: the user may
 * have left the project, lost a role or been deleted since the consent.
 */
async function grantWithHeld(db: Db, grantId: string) {
  const [g] = await db
    .select({ grant: oauthGrants, instanceRole: users.role, memberRole: projectMembers.role })
    .from(oauthGrants)
    .leftJoin(users, eq(users.id, oauthGrants.userId))
    .leftJoin(projectMembers, and(eq(projectMembers.userId, oauthGrants.userId), eq(projectMembers.projectId, oauthGrants.projectId)))
    .where(eq(oauthGrants.id, grantId))
    .limit(1);
  return g ? { ...g.grant, held: scopesOfRole(effectiveRole(g.instanceRole, g.memberRole)) } : null;
}

/** The grant's family end and the scopes still held, when the grant is neither revoked nor past its lifetime. */
async function liveGrant(db: Db, grantId: string, config: Config, now: Date): Promise<{ endsAt: Date; held: readonly string[] }> {
  const g = await grantWithHeld(db, grantId);
  if (!g || g.revokedAt) throw invalidGrant("the authorization was revoked");
  return { endsAt: familyEnd(g.createdAt, config, now), held: g.held };
}

/**
 * authorization_code (RFC 6749 §4.1.3, RFC 7636 §4.6). The code is consumed by the first
 * presentation whatever its outcome; a second presentation revokes what the first one issued.
 */
export async function exchangeCode(db: Db, client: OAuthClient, form: Form, config: Config, now: Date): Promise<TokenAnswer> {
  const code = param(form, "code");
  if (!code) throw new OAuthError("invalid_request", "code is required");
  const verifier = param(form, "code_verifier");
  const redirectUri = param(form, "redirect_uri") ?? (client.redirectUris.length === 1 ? client.redirectUris[0] : undefined);
  const hash = hashToken(code);
  const [row] = await db
    .update(oauthCodes)
    .set({ usedAt: now })
    .where(and(eq(oauthCodes.codeHash, hash), isNull(oauthCodes.usedAt)))
    .returning();
  if (!row) {
    const [used] = await db.select({ grantId: oauthCodes.grantId, clientId: oauthCodes.clientId }).from(oauthCodes).where(eq(oauthCodes.codeHash, hash)).limit(1);
    // RFC 9700 §4.5: a replayed code means it leaked; whatever it bought is withdrawn.
    if (used) await revokeGrantFamily(db, used.grantId, now);
    throw invalidGrant(used ? "the authorization code was already used" : "unknown authorization code");
  }
  if (row.clientId !== client.id) throw invalidGrant("the authorization code was issued to another client");
  if (row.expiresAt.getTime() <= now.getTime()) throw invalidGrant("the authorization code has expired");
  if (redirectUri !== row.redirectUri) throw invalidGrant("redirect_uri does not match the authorization request");
  if (!verifier) throw invalidGrant("code_verifier is required (PKCE)");
  if (!VERIFIER_RE.test(verifier) || !safeEqual(encodeBase64urlNoPadding(sha256(new TextEncoder().encode(verifier))), row.codeChallenge))
    throw invalidGrant("code_verifier does not match the code_challenge");
  checkResource(form, row.resource, config);
  const grant = await grantWithHeld(db, row.grantId);
  if (!grant) throw invalidGrant("the authorization was revoked");
  // The user may have left the project (or lost a role) between consent and exchange.
  const scopes = keepHeld(row.scopes, grant.held);
  if (grant.revokedAt) throw invalidGrant("the authorization was revoked");
  const endsAt = familyEnd(grant.createdAt, config, now);
  return issue(db, client, { grantId: grant.id, clientId: client.id, userId: grant.userId, projectId: grant.projectId, resource: row.resource, scopes, endsAt }, config, now);
}

/** The scopes of `scopes` still held; none is invalid_grant. */
function keepHeld(scopes: readonly string[], held: readonly string[], what = "granted scopes in this project"): string[] {
  const kept = scopes.filter((s) => held.includes(s));
  if (kept.length === 0) throw invalidGrant(`the user no longer holds any of the ${what}`);
  return kept;
}

/**
 * How long (OAUTH_REFRESH_REUSE_GRACE, default 0 = strict single use as RFC 9700 §4.14.2 asks) a
 * rotated refresh token may be presented again by its client for a sibling pair instead of counting
 * as reuse. MCP hosts that run tool calls in parallel may all refresh with the same stored token when
 * the access token expires; operators serving such hosts can allow a short window (e.g. 60 s).
 * Past the window a used token is reuse and revokes the family.
 */
const withinGrace = (usedAt: Date, now: Date, config: Config): boolean => config.oauthRefreshReuseGraceSeconds > 0 && now.getTime() - usedAt.getTime() <= config.oauthRefreshReuseGraceSeconds * 1000;

/** refresh_token (RFC 6749 §6) with rotation; a used or revoked token presented again revokes its family (RFC 9700 §4.14.2). */
export async function refreshTokens(db: Db, client: OAuthClient, form: Form, config: Config, now: Date): Promise<TokenAnswer> {
  if (!client.grantTypes.includes("refresh_token")) throw new OAuthError("unauthorized_client", "this client did not register the refresh_token grant");
  const token = param(form, "refresh_token");
  if (!token) throw new OAuthError("invalid_request", "refresh_token is required");
  const [row] = await db
    .select()
    .from(oauthTokens)
    .where(and(eq(oauthTokens.tokenHash, hashToken(token)), eq(oauthTokens.kind, "refresh")))
    .limit(1);
  if (!row || row.clientId !== client.id) throw invalidGrant("unknown refresh token");
  const reused = async (): Promise<never> => {
    await revokeGrantFamily(db, row.grantId, now);
    throw invalidGrant("the refresh token was already used; every token of this authorization is revoked");
  };
  if (row.revokedAt || (row.usedAt && !withinGrace(row.usedAt, now, config))) return reused();
  if (row.expiresAt.getTime() <= now.getTime()) throw invalidGrant("the refresh token has expired");
  const { endsAt, held } = await liveGrant(db, row.grantId, config, now);
  checkResource(form, row.resource, config);
  // The user's role in the project may have narrowed (or the membership or user gone) since the
  // consent: a refreshed token never outgrows what the user holds there now.
  let scopes = keepHeld(row.scopes, held);
  // Scopes this service does not define (offline_access, openid) are ignored, as at the authorization
  // endpoint, so a client re-sending what it first asked for can refresh; one of ours outside the grant is refused.
  const ours = (param(form, "scope") ?? "").split(" ").filter(isScope);
  if (ours.some((s) => !row.scopes.includes(s))) throw new OAuthError("invalid_scope", "a refreshed token may only carry scopes of the original grant");
  if (ours.length > 0) scopes = keepHeld(knownScopes(ours.join(" ")), held, "requested scopes");
  const family: Family = { grantId: row.grantId, clientId: client.id, userId: row.userId, projectId: row.projectId, resource: row.resource, scopes, endsAt };
  // A parallel presentation within the grace: a sibling pair, so whichever pair the client keeps works.
  if (row.usedAt) return issue(db, client, family, config, now);
  // Spending the old token and storing its successors is one transaction: a failure half-way
  // leaves the old refresh token usable rather than a client with no tokens at all.
  const issued = await db.transaction(async (tx) => {
    const consumed = await tx
      .update(oauthTokens)
      .set({ usedAt: now })
      .where(and(eq(oauthTokens.id, row.id), isNull(oauthTokens.usedAt), isNull(oauthTokens.revokedAt)))
      .returning({ id: oauthTokens.id });
    return consumed.length === 0 ? null : issue(tx, client, family, config, now);
  });
  if (issued) return issued;
  // Lost a race with another presentation of the same token: a sibling when that one was a moment ago.
  const [again] = await db.select({ usedAt: oauthTokens.usedAt, revokedAt: oauthTokens.revokedAt }).from(oauthTokens).where(eq(oauthTokens.id, row.id)).limit(1);
  if (again && !again.revokedAt && again.usedAt && withinGrace(again.usedAt, now, config)) {
    await liveGrant(db, row.grantId, config, now);
    return issue(db, client, family, config, now);
  }
  return reused();
}

/**
 * RFC 7009. Unknown tokens and tokens of another client answer 200 like success (§2.2), so the
 * endpoint reveals nothing. A refresh token takes its whole grant with it (§2.1).
 */
export async function revokeToken(db: Db, client: OAuthClient, form: Form, now: Date): Promise<void> {
  const token = param(form, "token");
  if (!token) throw new OAuthError("invalid_request", "token is required");
  const [row] = await db
    .select({ id: oauthTokens.id, kind: oauthTokens.kind, clientId: oauthTokens.clientId, grantId: oauthTokens.grantId })
    .from(oauthTokens)
    .where(eq(oauthTokens.tokenHash, hashToken(token)))
    .limit(1);
  if (!row || row.clientId !== client.id) return;
  if (row.kind === "refresh") await revokeGrantFamily(db, row.grantId, now);
  else
    await db
      .update(oauthTokens)
      .set({ revokedAt: now })
      .where(and(eq(oauthTokens.id, row.id), isNull(oauthTokens.revokedAt)));
}
