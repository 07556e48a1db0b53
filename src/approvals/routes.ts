// GET and POST /approvals/:id: the page a person opens from the agent's link. It keeps
// no server-side session: the consent page's signed sign-in cookie and CSRF nonce (src/oauth/session),
// so any instance serves any step.
import { type Context, Elysia } from "elysia";
import type { AppDeps } from "../core/deps";
import { AppError } from "../errors";
import { readCookie } from "../lib/cookies";
import { isUuid } from "../lib/ids";
import { parseBody, refuseDeclaredOver } from "../lib/json";
import { isPlainObject } from "../lib/merge";
import { clientAddress, hitRateLimit } from "../lib/rate-limit";
import { PUBLISH_SCOPE, scopesOfRole } from "../lib/scopes";
import { checkCsrf, cookieNames, csrfCookie, csrfToken, newNonce, pageKey, SIGN_IN_TTL_MS, setCookie, signedInUser, signInValue, validNonce } from "../oauth/session";
import { peerAddress } from "../platform/peer";
import { findProject } from "../projects/service";
import { projectOfUser } from "../users/membership";
import { type User, verifyUser } from "../users/service";
import { serviceWrite } from "../write/context";
import { type ApprovalView, approvalPage, approvalRefusalPage, approvalSignInPage } from "./page";
import { approvalChange, decideApproval, expireApprovals, findApproval } from "./service";

interface Page {
  status: number;
  html: string;
  cookies: string[];
}

function pageResponse(p: Page, nonce: string): Response {
  const headers = new Headers({
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-store",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
    "content-security-policy": `default-src 'none'; style-src 'nonce-${nonce}'; img-src https:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
  });
  for (const c of p.cookies) headers.append("set-cookie", c);
  return new Response(p.html, { status: p.status, headers });
}

/** What every step of the page needs: the app's dependencies and this origin's cookie names. */
interface PageContext {
  readonly deps: AppDeps;
  readonly names: ReturnType<typeof cookieNames>;
}

/** A request's CSRF state: the page key, the nonce this browser holds, the cookies to set, and the page's view. */
interface Begun {
  key: Uint8Array;
  nonce: string;
  cookies: string[];
  view: (error?: string | null) => ApprovalView;
}

/** The page's CSRF state: the nonce this browser holds (a new one when it holds none). */
async function begin({ deps, names }: PageContext, cookie: string | null, pageNonce: string): Promise<Begun> {
  const existing = readCookie(cookie, names.csrf);
  const nonce = validNonce(existing) ? existing : newNonce();
  const key = await pageKey(deps.db);
  return {
    key,
    nonce,
    cookies: existing === nonce ? [] : [csrfCookie(names, nonce)],
    view: (error: string | null = null): ApprovalView => ({ nonce: pageNonce, csrf: csrfToken(key, nonce), serviceName: deps.config.instanceName, error }),
  };
}

/** The approval as this user may see it: only someone whose role in its project holds content:publish. */
async function review({ deps }: PageContext, b: Begun, id: string, user: User, extra: { error?: string | null; notice?: string | null; status?: number } = {}): Promise<Page> {
  const { db } = deps;
  const approval = isUuid(id) ? await findApproval(db, id.toLowerCase()) : null;
  const choice = approval ? await projectOfUser(db, user, approval.projectId) : null;
  if (!approval || !choice) return { status: 404, html: approvalRefusalPage(b.view(), "There is no such approval request in a project of yours."), cookies: b.cookies };
  if (!scopesOfRole(choice.role).includes(PUBLISH_SCOPE))
    return { status: 403, html: approvalRefusalPage(b.view(), `Your role in ${choice.name} (${choice.role}) may not publish: ask an editor or an admin of the project.`), cookies: b.cookies };
  await expireApprovals(db, approval.projectId, deps.now());
  const fresh = (await findApproval(db, approval.id)) ?? approval;
  const project = await findProject(db, approval.projectId);
  const change = await approvalChange(db, fresh);
  const html = approvalPage({ ...b.view(extra.error ?? null), notice: extra.notice ?? null, approval: fresh, project: { name: project?.name ?? choice.name }, userEmail: user.email, change });
  return { status: extra.status ?? 200, html, cookies: b.cookies };
}

async function show(ctx: PageContext, id: string, cookie: string | null, pageNonce: string): Promise<Page> {
  const b = await begin(ctx, cookie, pageNonce);
  const user = await signedInUser(ctx.deps.db, b.key, readCookie(cookie, ctx.names.signIn), b.nonce, ctx.deps.now());
  if (!user) return { status: 200, html: approvalSignInPage({ ...b.view(), id }), cookies: b.cookies };
  return review(ctx, b, id, user);
}

async function submit(ctx: PageContext, id: string, form: Record<string, unknown>, cookie: string | null, address: string, pageNonce: string): Promise<Page> {
  const b = await begin(ctx, cookie, pageNonce);
  if (!checkCsrf(b.key, readCookie(cookie, ctx.names.csrf), form.csrf_token)) {
    return { status: 403, html: approvalRefusalPage(b.view(), "This form expired or was not sent from this page. Open the link again."), cookies: b.cookies };
  }
  if (form.step === "signin") return signIn(ctx, b, id, form, address, pageNonce);
  const user = await signedInUser(ctx.deps.db, b.key, readCookie(cookie, ctx.names.signIn), b.nonce, ctx.deps.now());
  if (!user) return { status: 401, html: approvalSignInPage({ ...b.view("Your sign-in has expired. Sign in again."), id }), cookies: b.cookies };
  return decide(ctx, b, id, form, user);
}

/** The sign-in form: rate limited per client address; signed in, the approval is shown. */
async function signIn(ctx: PageContext, b: Begun, id: string, form: Record<string, unknown>, address: string, pageNonce: string): Promise<Page> {
  const { deps, names } = ctx;
  const email = typeof form.email === "string" ? form.email.slice(0, 320) : "";
  const password = typeof form.password === "string" ? form.password.slice(0, 1024) : "";
  const limit = await hitRateLimit(deps.db, `oauth_signin:${address}`, deps.config.oauthSignInRateLimit, 900, deps.now());
  if (!limit.allowed) return { status: 429, html: approvalSignInPage({ ...b.view("Too many sign-in attempts. Try again later."), id, email }), cookies: b.cookies };
  const user = email && password ? await verifyUser(deps.db, email, password) : null;
  if (!user) return { status: 401, html: approvalSignInPage({ ...b.view("The email or password is not correct."), id, email }), cookies: b.cookies };
  // A fresh nonce at sign-in (session fixation), as on the consent page.
  const nonce = newNonce();
  const signedIn: Begun = {
    ...b,
    nonce,
    cookies: [csrfCookie(names, nonce), setCookie(names, names.signIn, signInValue(b.key, user.id, user.passwordHash, nonce, deps.now()), SIGN_IN_TTL_MS / 1000)],
  };
  signedIn.view = (error = null) => ({ nonce: pageNonce, csrf: csrfToken(b.key, nonce), serviceName: deps.config.instanceName, error });
  return review(ctx, signedIn, id, user);
}

/** Approve or reject, by a signed-in user whose role may publish; the approval is shown again with the outcome. */
async function decide(ctx: PageContext, b: Begun, id: string, form: Record<string, unknown>, user: User): Promise<Page> {
  const { deps } = ctx;
  if (form.step !== "decide" || (form.action !== "approve" && form.action !== "reject")) return review(ctx, b, id, user, { error: "Choose Approve or Reject.", status: 400 });
  const approval = isUuid(id) ? await findApproval(deps.db, id.toLowerCase()) : null;
  const choice = approval ? await projectOfUser(deps.db, user, approval.projectId) : null;
  if (!approval || !choice || !scopesOfRole(choice.role).includes(PUBLISH_SCOPE)) return review(ctx, b, id, user);
  const decision = form.action === "approve" ? "approved" : "rejected";
  try {
    const decider = { kind: "user" as const, id: user.id, name: user.email, user: { id: user.id, email: user.email } };
    await decideApproval(deps.db, serviceWrite(decision === "approved" ? "approve_approval" : "reject_approval", decider), approval.projectId, approval.id, decision, deps.now());
  } catch (err) {
    if (err instanceof AppError && err.code === "conflict") return review(ctx, b, id, user, { error: err.message, status: 409 });
    throw err;
  }
  deps.log.info("approval decided", { approval_id: approval.id, decision, user_id: user.id });
  return review(ctx, b, id, user, { notice: decision === "approved" ? "Approved: the agent's next try will make the change." : "Rejected: the agent will be told." });
}

const addressOf = (deps: AppDeps, request: Request, server: Context["server"]): string => clientAddress(request, peerAddress(request, server), deps.config.trustProxy);

/**
 * The page's form (urlencoded, up to MAX_BODY_BYTES; a body declared longer, of any type, is 413),
 * read only from a browser that holds the page's CSRF cookie: without one the post is refused
 * (403) and its body never read.
 */
async function readForm({ names }: PageContext, request: Request): Promise<Record<string, unknown>> {
  if (!validNonce(readCookie(request.headers.get("cookie"), names.csrf))) return {};
  refuseDeclaredOver(request);
  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/x-www-form-urlencoded\b/i.test(type)) return {};
  const body = await parseBody(request, type);
  return isPlainObject(body) ? body : {};
}

export function approvalRoutes(deps: AppDeps) {
  const ctx: PageContext = { deps, names: cookieNames(deps.config.publicUrl) };
  return new Elysia()
    .get(
      "/approvals/:id",
      async ({ params, request }) => {
        const nonce = newNonce();
        return pageResponse(await show(ctx, params.id, request.headers.get("cookie"), nonce), nonce);
      },
      { detail: { hide: true } },
    )
    .post(
      "/approvals/:id",
      async ({ params, request, server }) => {
        const nonce = newNonce();
        const form = await readForm(ctx, request);
        return pageResponse(await submit(ctx, params.id, form, request.headers.get("cookie"), addressOf(deps, request, server), nonce), nonce);
      },
      // No parser before the handler: it reads the form itself (readForm), bounded.
      { parse: "none", detail: { hide: true } },
    );
}
