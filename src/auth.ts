import { and, eq, isNull, lt, or } from "drizzle-orm";
import type { Db } from "../db/client";
import { adminKeys, mcpTokens, oauthClients, oauthGrants, oauthTokens, type Project, projectMembers, projects, users } from "../db/schema";
import type { AppDeps } from "./core/deps";
import { AppError, notFound } from "./errors";
import type { AdminCaller, McpCaller } from "./lib/caller";
import { MemoryLimiter } from "./lib/memory-limiter";
import { clientAddress } from "./lib/rate-limit";
import { effectiveRole, isScope, type ScopeRule, scopesOfRole, unmetScopes } from "./lib/scopes";
import { hashToken } from "./lib/tokens";
import { peerAddress } from "./platform/peer";
import { findProject } from "./projects/service";

export const bearerOf = (authorization: string | null | undefined): string | null => /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "")?.[1] ?? null;

// RFC 6750 §3 challenges of the admin API: none without credentials, invalid_token, insufficient_scope.
const ADMIN_REALM = 'Bearer realm="admin"';
const adminUnauthorized = (presented: boolean): AppError =>
  new AppError("unauthorized", "a valid admin key is required (Authorization: Bearer cms_ak_…)", undefined, {
    "www-authenticate": presented ? `${ADMIN_REALM}, error="invalid_token"` : ADMIN_REALM,
  });

/** The WWW-Authenticate value of an admin 403: insufficient_scope, naming the scope when one is missing. */
export function insufficientScopeChallenge(scope: unknown): string {
  const named = typeof scope === "string" && isScope(scope);
  return `${ADMIN_REALM}, error="insufficient_scope"${named ? `, scope="${scope}"` : ""}`;
}

/** A project the caller may act on, or 404 (never 403: other projects are invisible). */
export async function resolveProject(db: Db, ref: string, caller: AdminCaller | null): Promise<Project> {
  const p = await findProject(db, ref);
  if (!p || (caller && caller.projectIds !== null && !caller.projectIds.includes(p.id))) throw notFound("project");
  return p;
}

export const adminDoc = (tag: string, summary: string, description?: string) => ({ tags: [tag], summary, description, security: [{ bearerAuth: [] }] });

/**
 * Resolves the admin key of a request (or, without a bearer, a person's studio session: `ref` is
 * the project the route names, whose role gives the person's scopes; on a route without one, `rule`
 * is what the operation needs, held in the projects the person may act on with it); createApp makes one per app and hands it to every route
 * group that authenticates admin keys, so failed authentications per client address are counted
 * once for the whole app. The key is checked first and only a failure counts or is
 * refused with 429: a valid key works from a blocked address (administrators behind one NAT or
 * proxy as a guesser). This is no useful oracle: a key carries 160 random bits (ADMIN_TOKEN at
 * least 32 characters), far beyond online guessing.
 */
export type AdminAuthenticator = (request: Request, server: unknown, ref?: string, rule?: ScopeRule) => Promise<AdminCaller>;

/**
 * A person's session on a request without a bearer (src/studio/auth.ts, handed in by createApp):
 * the person as a caller, null when the request carries no session.
 */
export type SessionAuthenticator = (request: Request, now: Date, ref: string | undefined, rule: ScopeRule | undefined) => Promise<AdminCaller | null>;

export function adminAuthenticator(deps: AppDeps, session: SessionAuthenticator | null = null): AdminAuthenticator {
  const failures = new MemoryLimiter(deps.config.adminAuthFailureLimit, 60_000);
  return async (request, server, ref, rule) => {
    const address = clientAddress(request, peerAddress(request, server), deps.config.trustProxy);
    const now = deps.now();
    const refuse = (presented: boolean): AppError => {
      const wait = failures.blockedFor(address, now.getTime());
      if (wait > 0) return new AppError("rate_limited", "too many failed authentications from this address; retry later", undefined, { "retry-after": String(wait) });
      failures.hit(address, now.getTime());
      return adminUnauthorized(presented);
    };
    const token = bearerOf(request.headers.get("authorization"));
    if (!token) {
      // No bearer: a person's studio session, when the request carries one.
      const person = session ? await session(request, now, ref, rule) : null;
      if (person) return person;
      throw refuse(false);
    }
    // Any bearer is looked up by hash: keys minted here start with cms_ak_, an operator's ADMIN_TOKEN may not.
    if (token.length < 20 || token.length > 512) throw refuse(true);
    const [key] = await deps.db
      .select({ id: adminKeys.id, name: adminKeys.name, scopes: adminKeys.scopes, projectIds: adminKeys.projectIds, lastUsedAt: adminKeys.lastUsedAt })
      .from(adminKeys)
      .where(and(eq(adminKeys.keyHash, hashToken(token)), isNull(adminKeys.revokedAt)))
      .limit(1);
    if (!key) throw refuse(true);
    // last_used_at at minute precision: one write per key per minute, not per request.
    if (!key.lastUsedAt || now.getTime() - key.lastUsedAt.getTime() > 60_000) {
      await deps.db
        .update(adminKeys)
        .set({ lastUsedAt: now })
        .where(and(eq(adminKeys.id, key.id), or(isNull(adminKeys.lastUsedAt), lt(adminKeys.lastUsedAt, new Date(now.getTime() - 60_000)))));
    }
    return { kind: "admin_key", keyId: key.id, keyName: key.name, scopes: key.scopes, projectIds: key.projectIds ?? null };
  };
}

/**
 * Resolves a bearer presented to /mcp, checked against the database on every call so that a
 * revoked or expired credential stops working at once on every instance. `resource` is the
 * MCP resource URL; OAuth tokens issued for another resource are refused.
 */
export async function authenticateMcpBearer(db: Db, authorization: string | null | undefined, resource: string, now: Date): Promise<McpCaller | null> {
  const token = bearerOf(authorization);
  if (!token) return null;
  if (token.startsWith("cms_mcp_")) {
    const [found] = await db
      .select({ row: mcpTokens, project: projects })
      .from(mcpTokens)
      .innerJoin(projects, eq(projects.id, mcpTokens.projectId))
      .where(eq(mcpTokens.tokenHash, hashToken(token)))
      .limit(1);
    if (!found) return null;
    const { row, project } = found;
    if (row.expiresAt && row.expiresAt.getTime() <= now.getTime()) return null;
    if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() > 60_000) await db.update(mcpTokens).set({ lastUsedAt: now }).where(eq(mcpTokens.id, row.id));
    return { kind: "mcp_token", credentialId: row.id, credentialName: row.name, projectId: row.projectId, project, scopes: row.scopes, userId: null, clientId: null, roleScopes: null };
  }
  if (token.startsWith("cms_at_")) {
    const [row] = await db
      .select({
        t: oauthTokens,
        project: projects,
        grantRevoked: oauthGrants.revokedAt,
        instanceRole: users.role,
        memberRole: projectMembers.role,
        email: users.email,
        clientName: oauthClients.clientName,
      })
      .from(oauthTokens)
      .innerJoin(projects, eq(projects.id, oauthTokens.projectId))
      .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
      .innerJoin(users, eq(users.id, oauthTokens.userId))
      .leftJoin(projectMembers, and(eq(projectMembers.userId, oauthTokens.userId), eq(projectMembers.projectId, oauthTokens.projectId)))
      .leftJoin(oauthClients, eq(oauthClients.id, oauthTokens.clientId))
      .where(and(eq(oauthTokens.tokenHash, hashToken(token)), eq(oauthTokens.kind, "access")))
      .limit(1);
    if (!row || row.grantRevoked || row.t.revokedAt || row.t.expiresAt.getTime() <= now.getTime()) return null;
    if (row.t.resource !== resource) return null;
    // Capped by the user's role in the token's project now, read on every request: a removed member,
    // a lowered role or a deleted user stops or narrows live tokens at once, on every instance.
    const roleScopes = scopesOfRole(effectiveRole(row.instanceRole, row.memberRole));
    const scopes = row.t.scopes.filter((s) => roleScopes.includes(s));
    if (scopes.length === 0) return null;
    return {
      kind: "oauth",
      credentialId: row.t.id,
      userEmail: row.email,
      clientName: row.clientName,
      projectId: row.t.projectId,
      project: row.project,
      scopes,
      userId: row.t.userId,
      clientId: row.t.clientId,
      roleScopes,
    };
  }
  return null;
}

/**
 * Refuses a caller that does not meet an operation's scope rule: the admin API's answer to the one
 * check. The first missing scope is named; alternatives (a project's members: keys:write on it, or
 * users:write) are all named in the body only, as RFC 6750's scope attribute lists scopes all required.
 */
export function requireScopes(caller: { scopes: readonly string[] }, rule: ScopeRule): void {
  const unmet = unmetScopes(rule, caller.scopes);
  if (unmet.length === 0) return;
  const anyOf = "anyOf" in rule;
  const required = anyOf ? unmet : unmet[0];
  const named = anyOf ? unmet.join(" or ") : unmet[0];
  throw new AppError("insufficient_scope", `this credential lacks the ${named} scope`, { required }, { "www-authenticate": insufficientScopeChallenge(required) });
}

/** An operation only an admin key or a person in the studio may run (it hands out rights the caller itself holds: a key's scopes, a person's role). */
export function asAdminCaller(caller: AdminCaller | McpCaller): AdminCaller {
  if (caller.kind !== "admin_key" && caller.kind !== "studio") throw new AppError("insufficient_scope", "this operation needs an admin key or a person in the studio");
  return caller;
}
