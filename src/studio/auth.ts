// The studio's session on the admin API. A browser sends cookies with every request to this origin,
// so a cookie alone proves nothing about who composed the request: it is taken only with the header
// X-CMS-Studio: 1 (a page on another site cannot add it without a CORS preflight, which the admin
// API never grants with credentials), never from a cross-site context (Sec-Fetch-Site), and for
// writes only from this origin (Sec-Fetch-Site, else Origin = PUBLIC_URL). Elsewhere (/mcp, the
// OAuth endpoints, delivery) the cookie is not read at all.
import type { Db } from "../../db/client";
import type { Config } from "../config";
import { AppError, notFound } from "../errors";
import type { PersonCaller } from "../lib/caller";
import { readCookie } from "../lib/cookies";
import { ADMIN_SCOPES, type ScopeRule, scopesOfRole, unmetScopes } from "../lib/scopes";
import { findProject } from "../projects/service";
import { memberRoles, readSession, roleIn, type SessionUser } from "./sessions";

const STUDIO_HEADER = "x-cms-studio";

/** `__Host-` (Secure, Path=/, no Domain) when the service is served over https. */
export const studioCookieName = (publicUrl: string): string => (publicUrl.startsWith("https:") ? "__Host-cms_studio" : "cms_studio");

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * The person whose session a request carries, after the checks above; null when it carries no
 * session cookie (the caller then needs a bearer). 403 for a cookie sent without the header or
 * cross-site; 401 for a session that ended.
 */
export async function sessionOfRequest(db: Db, config: Config, request: Request, now: Date): Promise<SessionUser | null> {
  const secret = readCookie(request.headers.get("cookie"), studioCookieName(config.publicUrl));
  if (secret === null) return null;
  checkStudioRequest(config, request);
  const user = await readSession(db, secret, config, now);
  if (!user) throw new AppError("unauthorized", "the studio session has ended: sign in again");
  return user;
}

/** The header and same-origin checks every cookie-authenticated request passes (sign-in included). */
export function checkStudioRequest(config: Pick<Config, "publicOrigin">, request: Request): void {
  if (request.headers.get(STUDIO_HEADER) !== "1") throw new AppError("forbidden", "a studio session is accepted only with the header X-CMS-Studio: 1");
  const site = request.headers.get("sec-fetch-site");
  if (site !== null && site !== "same-origin") throw new AppError("forbidden", "a studio session is accepted only from the studio's own origin");
  if (site === null && !SAFE_METHODS.has(request.method) && request.headers.get("origin") !== config.publicOrigin)
    throw new AppError("forbidden", "a studio session writes only from the studio's own origin (Sec-Fetch-Site or Origin)");
}

/** The admin authenticator's session step (src/auth.ts): a person's session as a caller, or null without one. */
export function studioSessionAuthenticator(db: Db, config: Config) {
  return async (request: Request, now: Date, ref: string | undefined, rule: ScopeRule | undefined): Promise<PersonCaller | null> => {
    const person = await sessionOfRequest(db, config, request, now);
    return person ? personCaller(db, person, ref, rule) : null;
  };
}

/**
 * The person as an admin caller: on a project's route, the scopes of their role there (a project
 * they have no role in is 404, as it is to a key limited to other projects). On a route without a
 * project (the project list, an AI provider by id), an owner holds every scope; a member holds what
 * the operation needs (`rule`) limited to the projects whose role grants it, so a right held in one
 * project never reaches an object of another.
 */
async function personCaller(db: Db, user: SessionUser, ref: string | undefined, rule: ScopeRule = ["projects:read"]): Promise<PersonCaller> {
  const base = { kind: "studio" as const, sessionId: user.sessionId, userId: user.userId, userEmail: user.email };
  if (ref !== undefined) {
    const project = await findProject(db, ref);
    const role = project ? await roleIn(db, user, project.id) : null;
    if (!project || !role) throw notFound("project");
    // An owner acts in every project (and sees every person); anyone else reaches, beside this
    // project, the others whose role there grants the same right (who they may add to this one).
    if (user.role === "owner") return { ...base, scopes: scopesOfRole(role), projectIds: null };
    // (Only the routes that manage people look further: the others act on this project alone.)
    const people = ("anyOf" in rule ? rule.anyOf : rule).some((s) => s === "keys:write" || s === "users:write");
    const also = people ? (await memberRoles(db, user)).filter((m) => m.projectId !== project.id && unmetScopes(rule, scopesOfRole(m.role)).length === 0) : [];
    return { ...base, scopes: scopesOfRole(role), projectIds: [project.id, ...also.map((m) => m.projectId)] };
  }
  if (user.role === "owner") return { ...base, scopes: ADMIN_SCOPES, projectIds: null };
  const granting = (await memberRoles(db, user)).filter((m) => unmetScopes(rule, scopesOfRole(m.role)).length === 0);
  const needed = "anyOf" in rule ? rule.anyOf : rule;
  // projects:read is every member's, with or without a project left: the list of their projects (maybe empty).
  const held = needed.filter((s) => s === "projects:read" || granting.some((m) => scopesOfRole(m.role).includes(s)));
  return { ...base, scopes: held, projectIds: granting.map((m) => m.projectId) };
}
