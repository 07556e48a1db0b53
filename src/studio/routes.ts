// /studio: the studio's page and assets, and its session API (sign in, who am I, sign out, my
// sessions, my role in a project). Everything else the studio does goes through the admin API with
// the session (src/studio/auth.ts).
import { type Context, Elysia } from "elysia";
import type { AppDeps } from "../core/deps";
import { AppError, notFound } from "../errors";
import { readCookie } from "../lib/cookies";
import { isUuid } from "../lib/ids";
import { parseJsonBody, readBodyText } from "../lib/json";
import { clientAddress, hitRateLimit } from "../lib/rate-limit";
import { scopesOfRole } from "../lib/scopes";
import { peerAddress } from "../platform/peer";
import { findProject } from "../projects/service";
import { verifyUser } from "../users/service";
import { studioFile } from "./assets";
import { checkStudioRequest, sessionOfRequest, studioCookieName } from "./auth";
import { createSession, endSession, listSessions, readSession, roleIn, type SessionUser } from "./sessions";

const hide = { detail: { hide: true } };
const NO_STORE = { "cache-control": "no-store" };
const SIGN_IN_BODY_BYTES = 4096;

type Ctx = Pick<Context, "request" | "server" | "set">;

export function studioRoutes(deps: AppDeps) {
  const cookieName = studioCookieName(deps.config.publicUrl);
  const secure = deps.config.publicUrl.startsWith("https:");
  const cookie = (value: string, maxAge: number): string => `${cookieName}=${value}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${secure ? "; Secure" : ""}`;

  /** The signed-in person, else 401: every session route but sign-in. */
  const person = async (request: Request): Promise<SessionUser> => {
    const user = await sessionOfRequest(deps.db, deps.config, request, deps.now());
    if (!user) throw new AppError("unauthorized", "sign in to the studio first");
    return user;
  };

  return new Elysia()
    .post("/studio/api/session", (ctx) => signIn(deps, cookie, ctx), { parse: "none", ...hide })
    .get(
      "/studio/api/session",
      async ({ request, set }) => {
        const user = await person(request);
        Object.assign(set.headers, NO_STORE);
        return whoAmI(user, { id: user.sessionId, created_at: user.createdAt.toISOString(), expires_at: user.expiresAt.toISOString() });
      },
      hide,
    )
    .delete(
      "/studio/api/session",
      async ({ request }) => {
        checkStudioRequest(deps.config, request);
        const user = await readSession(deps.db, readCookie(request.headers.get("cookie"), cookieName), deps.config, deps.now());
        if (user) await endSession(deps.db, user.userId, user.sessionId);
        return new Response(null, { status: 204, headers: { "set-cookie": cookie("", 0), ...NO_STORE } });
      },
      hide,
    )
    .get(
      "/studio/api/sessions",
      async ({ request, set }) => {
        const user = await person(request);
        Object.assign(set.headers, NO_STORE);
        return { data: (await listSessions(deps.db, user.userId, deps.config, deps.now())).map((s) => ({ ...s, current: s.id === user.sessionId })) };
      },
      hide,
    )
    .delete(
      "/studio/api/sessions/:id",
      async ({ request, params }) => {
        const user = await person(request);
        if (!isUuid(params.id) || !(await endSession(deps.db, user.userId, params.id.toLowerCase()))) throw notFound("session");
        const headers: Record<string, string> = { ...NO_STORE };
        if (params.id.toLowerCase() === user.sessionId) headers["set-cookie"] = cookie("", 0);
        return new Response(null, { status: 204, headers });
      },
      hide,
    )
    .get(
      "/studio/api/p/:ref/me",
      async ({ request, params, set }) => {
        const user = await person(request);
        const project = await findProject(deps.db, params.ref);
        const role = project ? await roleIn(deps.db, user, project.id) : null;
        if (!project || !role) throw notFound("project");
        Object.assign(set.headers, NO_STORE);
        return { data: { project_id: project.id, role, scopes: scopesOfRole(role) } };
      },
      hide,
    )
    .get("/studio", ({ request }) => studioFile(request, ""), hide)
    .get(
      "/studio/*",
      ({ request, params }) => {
        if (params["*"].startsWith("api/")) throw notFound("studio API route");
        return studioFile(request, params["*"]);
      },
      hide,
    );
}

const whoAmI = (user: SessionUser, session: { id: string; created_at: string; expires_at: string }) => ({
  data: { user: { id: user.userId, email: user.email, role: user.role }, session },
});

async function signIn(deps: AppDeps, cookie: (value: string, maxAge: number) => string, { request, server, set }: Ctx) {
  // Login CSRF: a page elsewhere must not sign this browser in to an account of its choosing.
  checkStudioRequest(deps.config, request);
  const body = parseJsonBody(await readBodyText(request, SIGN_IN_BODY_BYTES));
  const email = typeof (body as { email?: unknown })?.email === "string" ? (body as { email: string }).email.slice(0, 320) : "";
  const password = typeof (body as { password?: unknown })?.password === "string" ? (body as { password: string }).password.slice(0, 1024) : "";
  if (!email || !password) throw new AppError("invalid_request", "email and password are required", { field: email ? "password" : "email" });
  // The same limiter as the consent and approval pages' sign-in: attempts per client address.
  const address = clientAddress(request, peerAddress(request, server), deps.config.trustProxy);
  const limit = await hitRateLimit(deps.db, `oauth_signin:${address}`, deps.config.oauthSignInRateLimit, 900, deps.now());
  if (!limit.allowed) throw new AppError("rate_limited", "too many sign-in attempts; try again later", undefined, { "retry-after": String(limit.retryAfter) });
  const user = await verifyUser(deps.db, email, password);
  if (!user) throw new AppError("unauthorized", "wrong email or password");
  const { secret, row } = await createSession(deps.db, user.id, request.headers.get("user-agent"), deps.config, deps.now());
  set.headers["set-cookie"] = cookie(secret, deps.config.studioSessionMaxAgeSeconds);
  Object.assign(set.headers, NO_STORE);
  deps.log.info("studio sign-in", { user_id: user.id, session_id: row.id });
  return whoAmI({ sessionId: row.id, userId: user.id, email: user.email, role: user.role, createdAt: new Date(row.created_at), expiresAt: new Date(row.expires_at) }, row);
}
