import { eq } from "drizzle-orm";
import { projects } from "../../db/schema";
import type { AppDeps } from "../deps";
import { isUuid } from "../lib/ids";
import { getTheme } from "../theme/service";
import { getUser, type User, verifyUser } from "../users/service";
import { approve, type AuthorizationRequest, type ClientLookup, denial, grantableScopes, parseAuthorizationRequest, projectChoices } from "./authorize";
import { consentPage, errorPage, errorReturnPage, type FlowView, projectPage, signInPage } from "./pages";
import { isLoopbackHost } from "./redirect-uri";
import { isMetadataClientId, metadataClient } from "./cimd";
import { resolveResource } from "./metadata";
import { findClient } from "./service";
import { hitRateLimit } from "../lib/rate-limit";
import { checkCsrf, cookieNames, csrfCookie, csrfToken, newNonce, pageKey, readCookie, readSignIn, setCookie, SIGN_IN_TTL_MS, signInValue, validNonce } from "./session";

/** What the authorization endpoint answers: a page or a redirect, with cookies to set. */
export interface PageResult {
  status: number;
  html: string | null;
  location: string | null;
  cookies: string[];
  /** Where the page's form may lead (the redirect URI), for the CSP form-action. */
  redirectUri: string | null;
  retryAfter?: number;
}

type Values = (name: string) => string[];

interface Flow {
  deps: AppDeps;
  request: AuthorizationRequest;
  key: Uint8Array;
  nonce: string;
  cookies: string[];
  pageNonce: string;
}

const page = (f: Flow, status: number, html: string, extra: Partial<PageResult> = {}): PageResult => ({
  status,
  html,
  location: null,
  cookies: f.cookies,
  redirectUri: f.request.redirectUri,
  ...extra,
});

function view(f: Flow, error: string | null = null): FlowView {
  const { client } = f.request;
  return {
    nonce: f.pageNonce,
    csrf: csrfToken(f.key, f.nonce),
    clientName: client.clientName,
    clientHost: client.metadata.cimd === true ? new URL(client.id).host : null,
    redirectUri: f.request.redirectUri,
    params: f.request.params,
    error,
  };
}

/**
 * Error redirects that cannot serve phishing: to a loopback address or a private-use scheme, both
 * ending in an app on the user's own device (which waits for the answer).
 */
function redirectsUnattended(location: string): boolean {
  const u = new URL(location);
  if (u.protocol === "https:") return false;
  return u.protocol !== "http:" || isLoopbackHost(u.hostname);
}

/** Parses the request and sets up the page's CSRF state; a refusal comes back as a finished result. */
async function begin(deps: AppDeps, values: Values, cookieHeader: string | null, pageNonce: string, address: string, isGet: boolean): Promise<Flow | PageResult> {
  const lookup: ClientLookup = async (id) => {
    if (!deps.config.oauthClientMetadataDocuments || !isMetadataClientId(id)) return findClient(deps.db, id);
    const r = await metadataClient(deps, id, address);
    return r.ok ? r.client : r.reason;
  };
  const parsed = await parseAuthorizationRequest(lookup, values, deps.config.publicUrl, (raw) =>
    // Issue 6 and the MCP authorization spec require `resource`; OAUTH_REQUIRE_RESOURCE=false lets
    // clients that omit it get a token for the one resource this server protects.
    (raw === undefined || raw === "") && deps.config.oauthRequireResource ? null : resolveResource(deps.config, raw),
  );
  if (parsed.kind === "page_error") return { status: 400, html: errorPage(pageNonce, parsed.message), location: null, cookies: [], redirectUri: null };
  if (parsed.kind === "redirect") {
    if (redirectsUnattended(parsed.location)) return { status: isGet ? 302 : 303, html: null, location: parsed.location, cookies: [], redirectUri: null };
    // RFC 9700 §4.11.2: anyone can register a client, so an error found before the user signed in
    // must not turn this server into an open redirector to a web address: the user is told, and decides.
    const u = new URL(parsed.location);
    return { status: 400, html: errorReturnPage(pageNonce, u.searchParams.get("error_description") ?? "The request is invalid.", parsed.location, u.host), location: null, cookies: [], redirectUri: null };
  }
  const names = cookieNames(deps.config.publicUrl);
  const existing = readCookie(cookieHeader, names.csrf);
  const nonce = validNonce(existing) ? existing : newNonce();
  return { deps, request: parsed.request, key: await pageKey(deps.db), nonce, cookies: existing === nonce ? [] : [csrfCookie(names, nonce)], pageNonce };
}

/** GET /oauth/authorize: the sign-in page, or the next step when this browser signed in moments ago. */
export async function showAuthorization(deps: AppDeps, values: Values, cookieHeader: string | null, address: string, pageNonce: string): Promise<PageResult> {
  const f = await begin(deps, values, cookieHeader, pageNonce, address, true);
  if (!("request" in f)) return f;
  const user = await signedInUser(f, cookieHeader);
  return user ? chooseProject(f, user, null) : page(f, 200, signInPage(view(f)));
}

async function signedInUser(f: Flow, cookieHeader: string | null): Promise<User | null> {
  const userId = readSignIn(f.key, readCookie(cookieHeader, cookieNames(f.deps.config.publicUrl).signIn), f.nonce, f.deps.now());
  return userId && isUuid(userId) ? getUser(f.deps.db, userId) : null;
}

/** POST /oauth/authorize: one step of sign-in, project choice and consent. */
export async function submitAuthorization(deps: AppDeps, form: Record<string, unknown>, cookieHeader: string | null, address: string, pageNonce: string): Promise<PageResult> {
  const values: Values = (name) => {
    const v = form[name];
    return typeof v === "string" ? (v === "" ? [] : [v]) : Array.isArray(v) ? v.map(String) : [];
  };
  const f = await begin(deps, values, cookieHeader, pageNonce, address, false);
  if (!("request" in f)) return f;
  // The nonce must come from the cookie this browser already holds: a fresh one proves nothing.
  if (!checkCsrf(f.key, readCookie(cookieHeader, cookieNames(deps.config.publicUrl).csrf), form.csrf_token)) {
    return page(f, 403, errorPage(pageNonce, "This form expired or was not sent from this page. Return to the application and start again."), { redirectUri: null });
  }
  const step = typeof form.step === "string" ? form.step : "";
  if (step === "signin") return signIn(f, form, address);
  const user = await signedInUser(f, cookieHeader);
  if (!user) return page(f, 401, signInPage(view(f, "Your sign-in has expired. Sign in again.")));
  const action = typeof form.action === "string" ? form.action : "";
  const chosenProject = typeof form.project === "string" ? form.project : "";
  if (step === "project") return chooseProject(f, user, chosenProject);
  if (step !== "consent") return page(f, 400, errorPage(pageNonce, "Unknown step of the authorization form."), { redirectUri: null });

  const names = cookieNames(deps.config.publicUrl);
  const signOut = setCookie(names, names.signIn, "", 0);
  if (action === "signout") return { ...page(f, 200, signInPage(view(f))), cookies: [...f.cookies, signOut] };
  if (action === "change_project") return chooseProject(f, user, null, { forceList: true });
  if (action === "deny") return { status: 303, html: null, location: denial(f.request, deps.config.publicUrl), cookies: [...f.cookies, signOut], redirectUri: null };
  if (action !== "approve") return chooseProject(f, user, chosenProject, { error: "Choose Allow or Deny." });

  const project = await findProjectById(f, chosenProject);
  if (!project) return chooseProject(f, user, chosenProject);
  const offered = grantableScopes(f.request, user.role);
  const raw = form.grant_scope;
  const chosen = typeof raw === "string" ? [raw] : Array.isArray(raw) ? raw.map(String) : [];
  if (chosen.length === 0 || chosen.some((s) => !offered.includes(s))) {
    return consent(f, user, project, "Choose at least one permission to allow, or deny.", 400);
  }
  const scopes = offered.filter((s) => chosen.includes(s));
  const location = await approve(deps.db, f.request, { userId: user.id, projectId: project.id, scopes }, deps.config.publicUrl, deps.now());
  deps.log.info("oauth consent granted", { client_id: f.request.client.id, user_id: user.id, project_id: project.id, scopes });
  return { status: 303, html: null, location, cookies: [...f.cookies, signOut], redirectUri: null };
}

async function signIn(f: Flow, form: Record<string, unknown>, address: string): Promise<PageResult> {
  const { deps } = f;
  const email = typeof form.email === "string" ? form.email.slice(0, 320) : "";
  const password = typeof form.password === "string" ? form.password.slice(0, 1024) : "";
  const limit = await hitRateLimit(deps.db, `oauth_signin:${address}`, deps.config.oauthSignInRateLimit, 900, deps.now());
  if (!limit.allowed) {
    const minutes = Math.ceil(limit.retryAfter / 60);
    return page(f, 429, signInPage({ ...view(f, `Too many sign-in attempts. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`), email }), { retryAfter: limit.retryAfter });
  }
  const user = email && password ? await verifyUser(deps.db, email, password) : null;
  if (!user) return page(f, 401, signInPage({ ...view(f, "The email or password is not correct."), email }));
  const names = cookieNames(deps.config.publicUrl);
  // A fresh nonce at sign-in (session fixation): a nonce planted in this browser before, whose form
  // token its planter could read off a page, is worth nothing once somebody signs in with it.
  f.nonce = newNonce();
  f.cookies = [csrfCookie(names, f.nonce), setCookie(names, names.signIn, signInValue(f.key, user.id, f.nonce, deps.now()), SIGN_IN_TTL_MS / 1000)];
  return chooseProject(f, user, null);
}

async function findProjectById(f: Flow, id: unknown): Promise<typeof projects.$inferSelect | null> {
  if (typeof id !== "string" || !isUuid(id)) return null;
  const [p] = await f.deps.db.select().from(projects).where(eq(projects.id, id.toLowerCase())).limit(1);
  return p ?? null;
}

/** The consent step for `projectId`; else the project list (or the only project, when there is one). */
async function chooseProject(f: Flow, user: User, projectId: string | null, opts: { error?: string; forceList?: boolean } = {}): Promise<PageResult> {
  if (projectId) {
    const p = await findProjectById(f, projectId);
    if (p) return consent(f, user, p, opts.error ?? null, opts.error ? 400 : 200);
  }
  const all = await projectChoices(f.deps.db);
  const [only] = all;
  if (projectId === null && only && all.length === 1 && !opts.forceList) {
    const p = await findProjectById(f, only.id);
    if (p) return consent(f, user, p, null, 200);
  }
  const error = projectId === null ? null : "Choose one of the listed projects.";
  return page(f, error ? 400 : 200, projectPage({ ...view(f, error), userEmail: user.email, projects: all }));
}

async function consent(f: Flow, user: User, project: typeof projects.$inferSelect, error: string | null, status: number): Promise<PageResult> {
  const theme = await getTheme(f.deps.db, project.id);
  const offered = grantableScopes(f.request, user.role);
  const logoUrl = theme.logo_url && /^https:\/\//.test(theme.logo_url) ? theme.logo_url : null;
  const total = (await projectChoices(f.deps.db)).length;
  return page(
    f,
    status,
    consentPage({
      ...view(f, error),
      userEmail: user.email,
      project: { id: project.id, name: theme.name_override || project.name, accent: theme.accent_color, logoUrl },
      offered,
      notHeld: f.request.scopes.filter((s) => !offered.includes(s)),
      canChangeProject: total > 1,
    }),
  );
}
