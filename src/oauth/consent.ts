import type { AppDeps } from "../core/deps";
import { readCookie } from "../lib/cookies";
import { hitRateLimit } from "../lib/rate-limit";
import { getTheme } from "../theme/service";
import { type ProjectChoice, projectOfUser, projectsOfUser } from "../users/membership";
import { type User, verifyUser } from "../users/service";
import { approve, type ClientLookup, denial, grantableScopes, parseAuthorizationRequest } from "./authorize";
import { isMetadataClientId, metadataClient } from "./cimd";
import { resolveResource } from "./metadata";
import { consentPage, errorPage, errorReturnPage, type FlowView, projectPage, signInPage } from "./pages";
import { isLoopbackHost } from "./redirect-uri";
import { findClient } from "./service";
import { checkCsrf, cookieNames, csrfCookie, csrfToken, newNonce, pageKey, SIGN_IN_TTL_MS, setCookie, signedInUser, signInValue, validNonce } from "./session";

/** What the authorization endpoint answers: a page or a redirect, with cookies to set. */
export interface PageResult {
  status: number;
  html?: string;
  location?: string;
  cookies?: string[];
  /** Where the page's form may lead (the redirect URI), for the CSP form-action. */
  redirectUri?: string;
  retryAfter?: number;
}

/** A form field's values: one string, or several when the field was repeated. */
const listOf = (v: unknown): string[] => (typeof v === "string" ? [v] : Array.isArray(v) ? v.map(String) : []);

/** One request of the flow: the parsed request and the page's CSRF state, as `begin` sets them up. */
type Flow = Exclude<Awaited<ReturnType<typeof begin>>, { refused: PageResult }>;

const page = (f: Flow, status: number, html: string, extra: Partial<PageResult> = {}): PageResult => ({ status, html, cookies: f.cookies, redirectUri: f.request.redirectUri, ...extra });

const view = (f: Flow, error: string | null = null): FlowView => ({
  nonce: f.pageNonce,
  csrf: csrfToken(f.key, f.nonce),
  clientName: f.request.client.clientName,
  /** Host that publishes the client's metadata document (a verified identity), when it has one. */
  clientHost: f.request.client.metadata.cimd === true ? new URL(f.request.client.id).host : null,
  redirectUri: f.request.redirectUri,
  params: f.request.params,
  /** This service: the instance's name and host, so the user knows who asks for the password. */
  service: { name: f.deps.config.instanceName, host: new URL(f.deps.config.publicUrl).host },
  error,
});

/** Parses the request and sets up the page's CSRF state; a refusal comes back as a finished result. */
async function begin(deps: AppDeps, values: (name: string) => string[], cookieHeader: string | null, pageNonce: string, address: string, isGet: boolean) {
  const lookup: ClientLookup = (id) => (deps.config.oauthClientMetadataDocuments && isMetadataClientId(id) ? metadataClient(deps, id, address) : findClient(deps.db, id));
  const parsed = await parseAuthorizationRequest(lookup, values, deps.config.publicUrl, (raw) =>
    // The MCP authorization spec requires `resource` (RFC 8707); OAUTH_REQUIRE_RESOURCE=false lets
    // clients that omit it get a token for the one resource this server protects.
    (raw === undefined || raw === "") && deps.config.oauthRequireResource ? null : resolveResource(deps.config, raw),
  );
  if (parsed.kind === "page_error") return { refused: { status: 400, html: errorPage(pageNonce, parsed.message) } };
  if (parsed.kind === "redirect") {
    // Error redirects that cannot serve phishing: to a loopback address or a private-use scheme, both
    // ending in an app on the user's own device (which waits for the answer).
    const u = new URL(parsed.location);
    if (u.protocol !== "https:" && (u.protocol !== "http:" || isLoopbackHost(u.hostname))) return { refused: { status: isGet ? 302 : 303, location: parsed.location } };
    // RFC 9700 §4.11.2: anyone can register a client, so an error found before the user signed in
    // must not turn this server into an open redirector to a web address: the user is told, and decides.
    return { refused: { status: 400, html: errorReturnPage(pageNonce, u.searchParams.get("error_description") ?? "The request is invalid.", parsed.location, u.host) } };
  }
  const names = cookieNames(deps.config.publicUrl);
  const existing = readCookie(cookieHeader, names.csrf);
  const nonce = validNonce(existing) ? existing : newNonce();
  return { deps, request: parsed.request, key: await pageKey(deps.db), names, nonce, cookies: existing === nonce ? [] : [csrfCookie(names, nonce)], pageNonce };
}

/** GET /oauth/authorize: the sign-in page, or the next step when this browser signed in moments ago. */
export async function showAuthorization(deps: AppDeps, values: (name: string) => string[], cookieHeader: string | null, address: string, pageNonce: string): Promise<PageResult> {
  const f = await begin(deps, values, cookieHeader, pageNonce, address, true);
  if (f.refused) return f.refused;
  const user = await signedInUser(deps.db, f.key, readCookie(cookieHeader, f.names.signIn), f.nonce, deps.now());
  return user ? chooseProject(f, user, null) : page(f, 200, signInPage(view(f)));
}

/** POST /oauth/authorize: one step of sign-in, project choice and consent. */
export async function submitAuthorization(deps: AppDeps, form: Record<string, unknown>, cookieHeader: string | null, address: string, pageNonce: string): Promise<PageResult> {
  const f = await begin(deps, (name) => (form[name] === "" ? [] : listOf(form[name])), cookieHeader, pageNonce, address, false);
  if (f.refused) return f.refused;
  // The nonce must come from the cookie this browser already holds: a fresh one proves nothing.
  if (!checkCsrf(f.key, readCookie(cookieHeader, f.names.csrf), form.csrf_token)) {
    return page(f, 403, errorPage(pageNonce, "This form expired or was not sent from this page. Return to the application and start again."), { redirectUri: undefined });
  }
  const step = typeof form.step === "string" ? form.step : "";
  if (step === "signin") return signIn(f, form, address);
  const user = await signedInUser(deps.db, f.key, readCookie(cookieHeader, f.names.signIn), f.nonce, deps.now());
  if (!user) return page(f, 401, signInPage(view(f, "Your sign-in has expired. Sign in again.")));
  const action = typeof form.action === "string" ? form.action : "";
  const chosenProject = typeof form.project === "string" ? form.project : "";
  if (step === "project") {
    if (action === "search") return chooseProject(f, user, null, { forceList: true, search: typeof form.project_search === "string" ? form.project_search : "" });
    return chooseProject(f, user, chosenProject);
  }
  if (step !== "consent") return page(f, 400, errorPage(pageNonce, "Unknown step of the authorization form."), { redirectUri: undefined });

  const signOut = setCookie(f.names, f.names.signIn, "", 0);
  if (action === "signout") return { ...page(f, 200, signInPage(view(f))), cookies: [...f.cookies, signOut] };
  if (action === "change_project") return chooseProject(f, user, null, { forceList: true });
  if (action === "deny") return { status: 303, location: denial(f.request, deps.config.publicUrl), cookies: [...f.cookies, signOut] };
  if (action !== "approve") return chooseProject(f, user, chosenProject, { error: "Choose Allow or Deny." });

  // Only a project the user may act in now, whatever the form names: anything else is refused.
  const project = await projectOfUser(deps.db, user, chosenProject);
  if (!project) return chooseProject(f, user, chosenProject);
  const offered = grantableScopes(f.request, project.role);
  const chosen = listOf(form.grant_scope);
  if (chosen.length === 0 || chosen.some((s) => !offered.includes(s))) {
    return chooseProject(f, user, project.id, { error: "Choose at least one permission to allow, or deny." });
  }
  const scopes = offered.filter((s) => chosen.includes(s));
  const location = await approve(deps.db, f.request, { userId: user.id, projectId: project.id, scopes }, deps.config.publicUrl, deps.now());
  deps.log.info("oauth consent granted", { client_id: f.request.client.id, user_id: user.id, project_id: project.id, scopes });
  return { status: 303, location, cookies: [...f.cookies, signOut] };
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
  // A fresh nonce at sign-in (session fixation): a nonce planted in this browser before, whose form
  // token its planter could read off a page, is worth nothing once somebody signs in with it.
  f.nonce = newNonce();
  f.cookies = [csrfCookie(f.names, f.nonce), setCookie(f.names, f.names.signIn, signInValue(f.key, user.id, user.passwordHash, f.nonce, deps.now()), SIGN_IN_TTL_MS / 1000)];
  return chooseProject(f, user, null);
}

/** How many of a user's projects the project page lists; beyond them, the user searches by name. */
const PROJECTS_LISTED = 100;

/**
 * The consent step for `projectId`; else the user's projects, the first PROJECTS_LISTED by name or
 * those matching `search` (or straight to the only one, when there is one).
 */
async function chooseProject(f: Flow, user: User, projectId: string | null, opts: { error?: string; forceList?: boolean; search?: string } = {}): Promise<PageResult> {
  const { db } = f.deps;
  const chosen = projectId === null ? null : await projectOfUser(db, user, projectId);
  if (chosen) {
    const several = (await projectsOfUser(db, user, { limit: 2 })).length > 1;
    return consent(f, user, chosen, several, opts.error ?? null, opts.error ? 400 : 200);
  }
  const search = opts.search?.trim().slice(0, 200) || null;
  const found = await projectsOfUser(db, user, { search, limit: PROJECTS_LISTED + 1 });
  const only = projectId === null && search === null && found.length === 1 && !opts.forceList ? found[0] : undefined;
  if (only) return consent(f, user, only, false, opts.error ?? null, opts.error ? 400 : 200);
  // A project the user is not a member of is refused like one that does not exist.
  const error = projectId === null ? null : "You cannot connect that project. Choose one of the listed projects.";
  const listed = { projects: found.slice(0, PROJECTS_LISTED), more: found.length > PROJECTS_LISTED, search };
  return page(f, error ? 403 : 200, projectPage({ ...view(f, error), userEmail: user.email, ...listed }));
}

async function consent(f: Flow, user: User, project: ProjectChoice, canChangeProject: boolean, error: string | null, status: number): Promise<PageResult> {
  const theme = await getTheme(f.deps.db, project.id);
  const offered = grantableScopes(f.request, project.role);
  return page(
    f,
    status,
    consentPage({
      ...view(f, error),
      userEmail: user.email,
      project: { ...project, accent: theme.accent_color, logoUrl: theme.logo_url && /^https:\/\//.test(theme.logo_url) ? theme.logo_url : null },
      offered,
      notHeld: f.request.scopes.filter((s) => !offered.includes(s)),
      canChangeProject,
    }),
  );
}
