import { describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { oauthClients, oauthCodes, oauthGrants, oauthTokens, projectMembers } from "../db/schema";
import { hashToken } from "../src/lib/tokens";

/** The parallel-refresh window the tests that need one configure (OAUTH_REFRESH_REUSE_GRACE=60). */
const REFRESH_REUSE_GRACE_MS = 60_000;

import { BASE, HIGH_LIMITS, harness, keyWith, seedNode, seedProject, type TestHarness } from "./helpers";
import { authorizeInBrowser, authorizeUrl, CookieJar, type Fetcher, hiddenFields, mcpRpc, pkce, postForm, seedUser } from "./oauth.helpers";

const RESOURCE = `${BASE}/mcp`;
const REDIRECT = "http://127.0.0.1:43123/callback";

describe("OAuth 2.1 authorization server", async () => {
  const h = await harness(HIGH_LIMITS);
  const fetcher: Fetcher = (r) => h.app.handle(r);
  const project = await seedProject(h);
  const editor = await seedUser(h, "editor", [project.id]);

  async function register(metadata: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
    const res = await h.request("POST", "/oauth/register", {
      key: null,
      headers,
      body: { client_name: "Test Agent", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none", ...metadata },
    });
    return res;
  }
  async function publicClient(metadata: Record<string, unknown> = {}): Promise<string> {
    const res = await register(metadata);
    if (res.status !== 201) throw new Error(res.text);
    return res.json.client_id;
  }

  /** Runs the authorization page for a client and returns the code and what it was bound to. */
  async function authorize(clientId: string, opts: { user?: { email: string; password: string }; projectId?: string; scope?: string; redirect?: string; app?: Fetcher } = {}) {
    const { verifier, challenge } = pkce();
    const state = crypto.randomUUID();
    const redirect = opts.redirect ?? REDIRECT;
    const url = authorizeUrl(BASE, {
      response_type: "code",
      client_id: clientId,
      redirect_uri: redirect,
      code_challenge: challenge,
      code_challenge_method: "S256",
      state,
      resource: RESOURCE,
      scope: opts.scope,
    });
    const user = opts.user ?? editor;
    const result = await authorizeInBrowser(opts.app ?? fetcher, url, { email: user.email, password: user.password, projectId: opts.projectId ?? project.id });
    const loc = new URL(result.location);
    expect(loc.searchParams.get("state")).toBe(state);
    expect(loc.searchParams.get("iss")).toBe(BASE);
    const code = loc.searchParams.get("code");
    if (!code) throw new Error(`no code in ${result.location}`);
    return { code, verifier, state, redirect, pages: result.pages };
  }

  const token = (form: Record<string, string | string[]>, headers: Record<string, string> = {}, app: Fetcher = fetcher) => postForm(app, BASE, "/oauth/token", form, headers);
  const exchange = (clientId: string, a: { code: string; verifier: string; redirect: string }, extra: Record<string, string> = {}, app: Fetcher = fetcher) =>
    token({ grant_type: "authorization_code", client_id: clientId, code: a.code, code_verifier: a.verifier, redirect_uri: a.redirect, resource: RESOURCE, ...extra }, {}, app);
  const mcpWorks = async (accessToken: string): Promise<number> => (await mcpRpc(fetcher, BASE, accessToken, "tools/call", { name: "get_project", arguments: {} })).status;

  test("discovery documents are JSON with CORS and name every endpoint", async () => {
    for (const path of ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"]) {
      const res = await h.request("GET", path, { key: null });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("application/json");
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(res.json).toEqual({
        resource: RESOURCE,
        authorization_servers: [BASE],
        scopes_supported: ["content:read", "content:write", "content:publish", "ai:read", "model:write", "media:write", "theme:write"],
        bearer_methods_supported: ["header"],
        resource_name: "Content Service MCP",
      });
    }
    const as = await h.request("GET", "/.well-known/oauth-authorization-server", { key: null });
    expect(as.status).toBe(200);
    expect(as.headers.get("access-control-allow-origin")).toBe("*");
    expect(as.json).toMatchObject({
      issuer: BASE,
      authorization_endpoint: `${BASE}/oauth/authorize`,
      token_endpoint: `${BASE}/oauth/token`,
      registration_endpoint: `${BASE}/oauth/register`,
      revocation_endpoint: `${BASE}/oauth/revoke`,
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      token_endpoint_auth_methods_supported: ["none", "client_secret_post", "client_secret_basic"],
      code_challenge_methods_supported: ["S256"],
      authorization_response_iss_parameter_supported: true,
    });
    const preflight = await h.request("OPTIONS", "/oauth/token", { key: null, headers: { origin: "https://app.example", "access-control-request-method": "POST" } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    expect(preflight.headers.get("access-control-allow-headers")).toContain("authorization");
    const unknown = await h.request("GET", "/.well-known/openid-configuration", { key: null });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("content-type")).toContain("application/json");
  });

  test("public and confidential registration; the secret is shown once and stored hashed", async () => {
    const pub = await register({ scope: "content:read openid", client_uri: "https://agent.example" });
    expect(pub.status).toBe(201);
    expect(pub.headers.get("access-control-allow-origin")).toBe("*");
    expect(pub.headers.get("cache-control")).toBe("no-store");
    expect(pub.json).toMatchObject({
      client_name: "Test Agent",
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      scope: "content:read",
      client_uri: "https://agent.example",
    });
    expect(pub.json.client_secret).toBeUndefined();
    expect(typeof pub.json.client_id_issued_at).toBe("number");

    const conf = await register({ token_endpoint_auth_method: "client_secret_basic", redirect_uris: ["https://agent.example/cb", "com.example.agent:/oauth"] });
    expect(conf.status).toBe(201);
    expect(conf.json.token_endpoint_auth_method).toBe("client_secret_basic");
    expect(conf.json.client_secret).toMatch(/^cms_cs_/);
    expect(conf.json.client_secret_expires_at).toBe(0);
    const [row] = await h.deps.db.select().from(oauthClients).where(eq(oauthClients.id, conf.json.client_id));
    expect(row!.secretHash).toBe(hashToken(conf.json.client_secret));
    expect(JSON.stringify(row)).not.toContain(conf.json.client_secret);
  });

  test("registration refuses bad redirect URIs and metadata in the RFC 7591 form", async () => {
    const before = (await h.deps.db.select().from(oauthClients)).length;
    for (const uri of ["http://agent.example/cb", "https://agent.example/cb#frag", "javascript:alert(1)", "data:text/html,x", "not a uri", "https://user:pw@agent.example/cb"]) {
      const res = await register({ redirect_uris: [uri] });
      expect(res.status).toBe(400);
      expect(res.json.error).toBe("invalid_redirect_uri");
      expect(typeof res.json.error_description).toBe("string");
    }
    expect((await register({ redirect_uris: [] })).json.error).toBe("invalid_redirect_uri");
    for (const meta of [{ token_endpoint_auth_method: "private_key_jwt" }, { grant_types: ["implicit"] }, { response_types: ["token"] }, { client_name: 42 }, { client_uri: "javascript:x" }]) {
      const res = await register(meta);
      expect(res.status).toBe(400);
      expect(res.json.error).toBe("invalid_client_metadata");
    }
    const broken = await h.request("POST", "/oauth/register", { key: null, raw: "{not json", headers: { "content-type": "application/json" } });
    expect(broken.status).toBe(400);
    expect(broken.json).toEqual({ error: "invalid_client_metadata", error_description: "request body could not be parsed" });
    const form = await h.request("POST", "/oauth/register", { key: null, raw: "redirect_uris=x", headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(form.json.error).toBe("invalid_client_metadata");
    expect((await h.deps.db.select().from(oauthClients)).length).toBe(before);
  });

  test("registration is rate limited per client address, in PostgreSQL", async () => {
    const limited = await harness({ ...HIGH_LIMITS, OAUTH_REGISTER_RATE_LIMIT: "2", TRUST_PROXY: "true" });
    const ip = `203.0.113.${Math.floor(Math.random() * 250)}-${crypto.randomUUID().slice(0, 8)}`;
    const body = { redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" };
    const send = (app: TestHarness, addr: string) => app.request("POST", "/oauth/register", { key: null, body, headers: { "x-forwarded-for": `198.51.100.1, ${addr}` } });
    expect((await send(limited, ip)).status).toBe(201);
    // Another app over the same database shares the counter (it is kept in the database, not in the app).
    const other = await harness({ ...HIGH_LIMITS, OAUTH_REGISTER_RATE_LIMIT: "2", TRUST_PROXY: "true" });
    expect((await send(other, ip)).status).toBe(201);
    const third = await send(limited, ip);
    expect(third.status).toBe(429);
    expect(third.json.error).toBe("rate_limited");
    expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(third.headers.get("access-control-allow-origin")).toBe("*");
    expect((await send(limited, `${ip}-other`)).status).toBe(201);
  });

  test("authorize: an unknown client or redirect URI gets an error page, never a redirect", async () => {
    const clientId = await publicClient();
    const { challenge } = pkce();
    const base = { response_type: "code", client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: "S256", state: "s1", resource: RESOURCE };
    for (const params of [
      { ...base, client_id: "no-such-client" },
      { ...base, client_id: undefined },
      { ...base, redirect_uri: "https://attacker.example/cb" },
      { ...base, redirect_uri: "http://127.0.0.1:43123/other" },
    ]) {
      const res = await fetcher(new Request(authorizeUrl(BASE, params)));
      expect(res.status).toBe(400);
      expect(res.headers.get("location")).toBeNull();
      expect(res.headers.get("content-type")).toContain("text/html");
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
      expect(await res.text()).toContain("cannot continue");
    }
    // Loopback redirect URIs may differ in port only (RFC 8252 §7.3).
    const otherPort = await fetcher(new Request(authorizeUrl(BASE, { ...base, redirect_uri: "http://127.0.0.1:50999/callback" })));
    expect(otherPort.status).toBe(200);
  });

  test("authorize: missing PKCE, plain, missing or foreign resource and other errors redirect with state and iss", async () => {
    const clientId = await publicClient();
    const { challenge } = pkce();
    const base = { response_type: "code", client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: "S256", state: "st-9", resource: RESOURCE };
    const cases: Array<[Record<string, string | undefined>, string]> = [
      [{ ...base, code_challenge: undefined, code_challenge_method: undefined }, "invalid_request"],
      [{ ...base, code_challenge_method: "plain" }, "invalid_request"],
      [{ ...base, code_challenge_method: undefined }, "invalid_request"],
      [{ ...base, code_challenge: "short" }, "invalid_request"],
      [{ ...base, resource: "https://elsewhere.example/mcp" }, "invalid_target"],
      [{ ...base, resource: `${BASE}/admin` }, "invalid_target"],
      [{ ...base, resource: undefined }, "invalid_target"], // required by default (OAUTH_REQUIRE_RESOURCE)
      [{ ...base, response_type: "token" }, "unsupported_response_type"],
    ];
    for (const [params, error] of cases) {
      const res = await fetcher(new Request(authorizeUrl(BASE, params)));
      expect(res.status).toBe(302);
      const loc = new URL(res.headers.get("location")!);
      expect(`${loc.origin}${loc.pathname}`).toBe(REDIRECT);
      expect(loc.searchParams.get("error")).toBe(error);
      expect(loc.searchParams.get("state")).toBe("st-9");
      expect(loc.searchParams.get("iss")).toBe(BASE);
      expect(loc.searchParams.get("code")).toBeNull();
    }
    const dup = await fetcher(new Request(`${authorizeUrl(BASE, base)}&state=again`));
    expect(new URL(dup.headers.get("location")!).searchParams.get("error")).toBe("invalid_request");
  });

  test("the page: security headers, sign-in, consent with only held scopes and the project's accent colour", async () => {
    const themed = await seedProject(h);
    expect((await h.request("PATCH", `/admin/p/${themed.id}/theme`, { body: { accent_color: "#AA3300", name_override: "Brand <Site>" } })).status).toBe(200);
    const viewer = await seedUser(h, "viewer", [themed.id, project.id]);
    const clientId = await publicClient({ client_name: "Agent <script>" });
    const { challenge } = pkce();
    const url = authorizeUrl(BASE, {
      response_type: "code",
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: "S256",
      state: "x",
      resource: RESOURCE,
      scope: "content:read content:write",
    });
    const jar = new CookieJar();
    const first = await fetcher(new Request(url));
    jar.store(first);
    expect(first.status).toBe(200);
    const csp = first.headers.get("content-security-policy")!;
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("form-action 'self' http://127.0.0.1:43123");
    expect(first.headers.get("x-frame-options")).toBe("DENY");
    expect(first.headers.get("referrer-policy")).toBe("no-referrer");
    expect(first.headers.get("x-content-type-options")).toBe("nosniff");
    expect(first.headers.get("cache-control")).toBe("no-store");
    expect(first.headers.get("access-control-allow-origin")).toBeNull();
    const cookie = first.headers.getSetCookie()[0];
    expect(cookie).toMatch(/^cms_oauth_csrf=[A-Za-z0-9_-]{22}; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax$/);
    const html = await first.text();
    expect(html).toContain("Agent &#60;script&#62;");
    expect(html).not.toContain("<script>");
    expect(html).toContain('autocomplete="current-password"');

    const post = (form: Record<string, string>) =>
      fetcher(
        new Request(`${BASE}/oauth/authorize`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", cookie: jar.header() }, body: new URLSearchParams(form).toString() }),
      );
    const wrong = await post({ ...hiddenFields(html), email: viewer.email, password: "wrong-password" });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain("not correct");
    expect(wrong.headers.getSetCookie().some((c) => c.startsWith("cms_oauth_session="))).toBe(false);

    const signedIn = await post({ ...hiddenFields(html), email: viewer.email, password: viewer.password });
    jar.store(signedIn);
    expect(signedIn.status).toBe(200);
    const choose = await signedIn.text();
    expect(hiddenFields(choose).step).toBe("project");
    expect(choose).toContain(themed.slug);

    const consentRes = await post({ ...hiddenFields(choose), project: themed.id });
    const consent = await consentRes.text();
    expect(consentRes.status).toBe(200);
    expect(consent).toContain("--accent:#aa3300");
    // One name for the project on every page: its name, not the theme's display name for the public site.
    expect(consent).toContain(`Allow access to ${themed.slug}?`);
    expect(consent).not.toContain("Brand &#60;Site&#62;");
    expect(consent).toContain("your role in this project: viewer");
    expect(consent).toContain(REDIRECT);
    // A viewer holds content:read but not content:write: only the former is offered.
    expect([...consent.matchAll(/name="grant_scope" value="([^"]+)"/g)].map((m) => m[1])).toEqual(["content:read"]);
    expect(consent).toContain("does not hold: <code>content:write</code>");

    // Ticking a scope the page did not offer is refused.
    const forged = new URLSearchParams({ ...hiddenFields(consent), action: "approve" });
    forged.append("grant_scope", "content:write");
    const refused = await fetcher(
      new Request(`${BASE}/oauth/authorize`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", cookie: jar.header() }, body: forged.toString() }),
    );
    expect(refused.status).toBe(400);
    expect(refused.headers.get("location")).toBeNull();

    const approved = await post({ ...hiddenFields(consent), action: "approve", grant_scope: "content:read" });
    expect(approved.status).toBe(303);
    const loc = new URL(approved.headers.get("location")!);
    expect(loc.searchParams.get("code")).toMatch(/^cms_code_/);
    expect(loc.searchParams.get("iss")).toBe(BASE);
    // The sign-in cookie is dropped once the decision is made.
    expect(approved.headers.getSetCookie().some((c) => c.startsWith("cms_oauth_session=;") && c.includes("Max-Age=0"))).toBe(true);
    const [code] = await h.deps.db
      .select()
      .from(oauthCodes)
      .where(eq(oauthCodes.codeHash, hashToken(loc.searchParams.get("code")!)));
    expect(code!.scopes).toEqual(["content:read"]);
    const [grant] = await h.deps.db.select().from(oauthGrants).where(eq(oauthGrants.id, code!.grantId));
    expect(grant).toMatchObject({ userId: viewer.id, projectId: themed.id, clientId, scopes: ["content:read"], resource: RESOURCE, revokedAt: null });
  });

  test("deny redirects with access_denied, state and iss", async () => {
    const clientId = await publicClient();
    const { challenge } = pkce();
    const url = authorizeUrl(BASE, {
      response_type: "code",
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: "S256",
      state: "deny-me",
      resource: RESOURCE,
    });
    const r = await authorizeInBrowser(fetcher, url, { email: editor.email, password: editor.password, projectId: project.id, action: "deny" });
    const loc = new URL(r.location);
    expect(loc.searchParams.get("error")).toBe("access_denied");
    expect(loc.searchParams.get("state")).toBe("deny-me");
    expect(loc.searchParams.get("iss")).toBe(BASE);
    expect(loc.searchParams.get("code")).toBeNull();
  });

  test("CSRF: a form post without the token, or without this browser's cookie, is refused", async () => {
    const clientId = await publicClient();
    const { challenge } = pkce();
    const url = authorizeUrl(BASE, { response_type: "code", client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: "S256", state: "c", resource: RESOURCE });
    const jar = new CookieJar();
    const page = await fetcher(new Request(url));
    jar.store(page);
    const fields = hiddenFields(await page.text());
    const attempt = async (form: Record<string, string>, cookie: string) => {
      const res = await fetcher(
        new Request(`${BASE}/oauth/authorize`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", cookie }, body: new URLSearchParams(form).toString() }),
      );
      expect(res.status).toBe(403);
      expect(res.headers.get("location")).toBeNull();
      expect(res.headers.getSetCookie().some((c) => c.includes("session="))).toBe(false);
    };
    const { csrf_token, ...withoutToken } = fields;
    await attempt({ ...withoutToken, email: editor.email, password: editor.password }, jar.header());
    await attempt({ ...fields, email: editor.email, password: editor.password }, "");
    await attempt({ ...fields, email: editor.email, password: editor.password }, "cms_oauth_csrf=AAAAAAAAAAAAAAAAAAAAAA");
    await attempt({ ...fields, csrf_token: `${csrf_token}x`, email: editor.email, password: editor.password }, jar.header());
  });

  test("code → tokens: hashed at rest, bound to client, user, project, scopes and resource; no-store", async () => {
    const clientId = await publicClient();
    const a = await authorize(clientId, { scope: "content:read ai:read" });
    const res = await exchange(clientId, a);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.json).toMatchObject({ token_type: "Bearer", expires_in: 3600, scope: "content:read ai:read" });
    expect(res.json.access_token).toMatch(/^cms_at_/);
    expect(res.json.refresh_token).toMatch(/^cms_rt_/);
    const rows = await h.deps.db.select().from(oauthTokens).where(eq(oauthTokens.clientId, clientId));
    expect(rows.map((r) => r.kind).sort()).toEqual(["access", "refresh"]);
    const access = rows.find((r) => r.kind === "access")!;
    expect(access.tokenHash).toBe(hashToken(res.json.access_token));
    expect(access).toMatchObject({ userId: editor.id, projectId: project.id, scopes: ["content:read", "ai:read"], resource: RESOURCE });
    expect(JSON.stringify(rows)).not.toContain(res.json.access_token);
    expect(h.logs.join("\n")).not.toContain(res.json.access_token);
    expect(h.logs.join("\n")).not.toContain(a.code);

    const call = await mcpRpc(fetcher, BASE, res.json.access_token, "tools/call", { name: "get_project", arguments: {} });
    expect(call.status).toBe(200);
    expect(call.json.result.structuredContent.project.id).toBe(project.id);
    // content:write was not granted (the editor could grant it): the MCP scope challenge names it.
    const write = await mcpRpc(fetcher, BASE, res.json.access_token, "tools/call", { name: "create_node", arguments: { slug: "x", title: "x", type: "page" } });
    expect(write.status).toBe(403);
    expect(write.json.error).toMatchObject({ code: "insufficient_scope", details: { required: ["content:write"] } });
    expect(write.headers.get("www-authenticate")).toContain('scope="content:read content:write ai:read"');
  });

  test("PKCE: a wrong or missing verifier fails, and the code is spent", async () => {
    const clientId = await publicClient();
    const a = await authorize(clientId);
    const wrong = await exchange(clientId, { ...a, verifier: pkce().verifier });
    expect(wrong.status).toBe(400);
    expect(wrong.json.error).toBe("invalid_grant");
    expect((await exchange(clientId, a)).json.error).toBe("invalid_grant");

    const b = await authorize(clientId);
    const missing = await token({ grant_type: "authorization_code", client_id: clientId, code: b.code, redirect_uri: b.redirect, resource: RESOURCE });
    expect(missing.json.error).toBe("invalid_grant");
  });

  test("code reuse fails and revokes what the first exchange issued", async () => {
    const clientId = await publicClient();
    const a = await authorize(clientId);
    const first = await exchange(clientId, a);
    expect(first.status).toBe(200);
    expect(await mcpWorks(first.json.access_token)).toBe(200);
    const second = await exchange(clientId, a);
    expect(second.status).toBe(400);
    expect(second.json.error).toBe("invalid_grant");
    expect(await mcpWorks(first.json.access_token)).toBe(401);
    const refreshed = await token({ grant_type: "refresh_token", client_id: clientId, refresh_token: first.json.refresh_token });
    expect(refreshed.json.error).toBe("invalid_grant");
    const [row] = await h.deps.db
      .select()
      .from(oauthTokens)
      .where(eq(oauthTokens.tokenHash, hashToken(first.json.access_token)));
    expect(row!.revokedAt).not.toBeNull();
  });

  test("a code expires after 10 minutes, and a fresh one issued by one instance is redeemed on another", async () => {
    const clientId = await publicClient();
    const later = await harness(HIGH_LIMITS, { now: () => new Date(Date.now() + 11 * 60_000) });
    const stale = await authorize(clientId);
    const expired = await exchange(clientId, stale, {}, (r) => later.app.handle(r));
    expect(expired.status).toBe(400);
    expect(expired.json.error).toBe("invalid_grant");
    expect(expired.json.error_description).toContain("expired");

    const other = await harness(HIGH_LIMITS);
    // The browser's requests land on either instance: page, sign-in and consent state is shared.
    let turn = 0;
    const either: Fetcher = (r) => (turn++ % 2 === 0 ? other : h).app.handle(r);
    const fresh = await authorize(clientId, { app: either });
    // Page, sign-in and consent (a member of one project skips the chooser): three requests, alternating.
    expect(turn).toBeGreaterThanOrEqual(3);
    const redeemed = await exchange(clientId, fresh, {}, (r) => other.app.handle(r));
    expect(redeemed.status).toBe(200);
    expect(await mcpWorks(redeemed.json.access_token)).toBe(200);
  });

  test("the code is bound to its client, redirect URI and resource", async () => {
    const alice = await publicClient();
    const mallory = await publicClient();
    const a = await authorize(alice);
    const stolen = await exchange(mallory, a);
    expect(stolen.json.error).toBe("invalid_grant");

    const b = await authorize(alice);
    expect((await exchange(alice, { ...b, redirect: "http://127.0.0.1:43123/elsewhere" })).json.error).toBe("invalid_grant");

    const c = await authorize(alice);
    const foreign = await exchange(alice, c, { resource: "https://other.example/mcp" });
    expect(foreign.status).toBe(400);
    expect(foreign.json.error).toBe("invalid_target");

    const d = await authorize(alice);
    expect((await token({ grant_type: "authorization_code", client_id: alice, code: [d.code, d.code], code_verifier: d.verifier, redirect_uri: d.redirect })).json.error).toBe("invalid_request");
    expect((await token({ grant_type: "password", client_id: alice })).json.error).toBe("unsupported_grant_type");
    expect((await token({ client_id: alice })).json.error).toBe("invalid_request");
    const json = await h.request("POST", "/oauth/token", { key: null, body: { grant_type: "authorization_code" } });
    expect(json.status).toBe(400);
    expect(json.json.error).toBe("invalid_request");
    const unknown = await token({ grant_type: "authorization_code", client_id: "nobody", code: d.code });
    expect(unknown.status).toBe(401);
    expect(unknown.json.error).toBe("invalid_client");
  });

  test("refresh rotates; presenting a used refresh token (past the parallel-refresh grace) revokes the whole family", async () => {
    const clientId = await publicClient();
    const first = await exchange(clientId, await authorize(clientId));
    const second = await token({ grant_type: "refresh_token", client_id: clientId, refresh_token: first.json.refresh_token, resource: RESOURCE });
    expect(second.status).toBe(200);
    expect(second.headers.get("cache-control")).toBe("no-store");
    expect(second.json.refresh_token).not.toBe(first.json.refresh_token);
    expect(second.json.access_token).not.toBe(first.json.access_token);
    expect(await mcpWorks(second.json.access_token)).toBe(200);

    const narrowed = await token({ grant_type: "refresh_token", client_id: clientId, refresh_token: second.json.refresh_token, scope: "content:read" });
    expect(narrowed.status).toBe(200);
    expect(narrowed.json.scope).toBe("content:read");
    const wider = await token({ grant_type: "refresh_token", client_id: clientId, refresh_token: narrowed.json.refresh_token, scope: "content:read keys:write" });
    expect(wider.json.error).toBe("invalid_scope");

    // Past the grace for parallel refreshes (REFRESH_REUSE_GRACE_MS), a used refresh token is reuse.
    const later = await harness(HIGH_LIMITS, { now: () => new Date(Date.now() + REFRESH_REUSE_GRACE_MS + 5_000) });
    const replay = await token({ grant_type: "refresh_token", client_id: clientId, refresh_token: first.json.refresh_token }, {}, (r) => later.app.handle(r));
    expect(replay.status).toBe(400);
    expect(replay.json.error).toBe("invalid_grant");
    expect(await mcpWorks(narrowed.json.access_token)).toBe(401);
    expect((await token({ grant_type: "refresh_token", client_id: clientId, refresh_token: narrowed.json.refresh_token })).json.error).toBe("invalid_grant");
    const [tok] = await h.deps.db
      .select()
      .from(oauthTokens)
      .where(eq(oauthTokens.tokenHash, hashToken(narrowed.json.access_token)));
    const [grant] = await h.deps.db.select().from(oauthGrants).where(eq(oauthGrants.id, tok!.grantId));
    expect(grant!.revokedAt).not.toBeNull();
  });

  test("by default (strict single use) an immediate replay of a used refresh token revokes the whole family", async () => {
    const clientId = await publicClient();
    const first = await exchange(clientId, await authorize(clientId));
    const second = await token({ grant_type: "refresh_token", client_id: clientId, refresh_token: first.json.refresh_token });
    expect(second.status).toBe(200);
    const replay = await token({ grant_type: "refresh_token", client_id: clientId, refresh_token: first.json.refresh_token });
    expect(replay.json.error).toBe("invalid_grant");
    expect(await mcpWorks(second.json.access_token)).toBe(401);
    expect((await token({ grant_type: "refresh_token", client_id: clientId, refresh_token: second.json.refresh_token })).json.error).toBe("invalid_grant");
  });

  test("a refreshed token never carries scopes the user's role lost", async () => {
    const owner = await seedUser(h, "editor", [project.id]);
    const clientId = await publicClient();
    const t = await exchange(clientId, await authorize(clientId, { user: owner }));
    expect(t.json.scope).toBe("content:read content:write content:publish ai:read");
    await h.deps.db
      .update(projectMembers)
      .set({ role: "viewer" })
      .where(and(eq(projectMembers.userId, owner.id), eq(projectMembers.projectId, project.id)));
    const r = await token({ grant_type: "refresh_token", client_id: clientId, refresh_token: t.json.refresh_token });
    expect(r.status).toBe(200);
    expect(r.json.scope).toBe("content:read ai:read");
    const [row] = await h.deps.db
      .select()
      .from(oauthTokens)
      .where(eq(oauthTokens.tokenHash, hashToken(r.json.access_token)));
    expect(row!.scopes).toEqual(["content:read", "ai:read"]);
  });

  test("over https the page's cookies are __Host- and Secure", async () => {
    const secure = await harness({ ...HIGH_LIMITS, PUBLIC_URL: "https://cms.example" });
    const clientId = await publicClient();
    const { challenge } = pkce();
    const url = authorizeUrl("https://cms.example", {
      response_type: "code",
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: "S256",
      resource: "https://cms.example/mcp",
    });
    const res = await secure.app.handle(new Request(url));
    expect(res.status).toBe(200);
    expect(res.headers.getSetCookie()[0]).toMatch(/^__Host-cms_oauth_csrf=[^;]+; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax; Secure$/);
    const r = await authorizeInBrowser((req) => secure.app.handle(req), url, { email: editor.email, password: editor.password, projectId: project.id });
    expect(new URL(r.location).searchParams.get("iss")).toBe("https://cms.example");
    expect([...r.jar.cookies.keys()]).toEqual(["__Host-cms_oauth_csrf"]);
  });

  test("no refresh token for a client without the grant; an expired refresh token is refused", async () => {
    const codeOnly = await publicClient({ grant_types: ["authorization_code"] });
    const t = await exchange(codeOnly, await authorize(codeOnly));
    expect(t.status).toBe(200);
    expect(t.json.refresh_token).toBeUndefined();
    expect((await token({ grant_type: "refresh_token", client_id: codeOnly, refresh_token: "cms_rt_x" })).json.error).toBe("unauthorized_client");

    const clientId = await publicClient();
    const t2 = await exchange(clientId, await authorize(clientId));
    const later = await harness(HIGH_LIMITS, { now: () => new Date(Date.now() + 31 * 86_400_000) });
    const expired = await token({ grant_type: "refresh_token", client_id: clientId, refresh_token: t2.json.refresh_token }, {}, (r) => later.app.handle(r));
    expect(expired.json).toEqual({ error: "invalid_grant", error_description: "the refresh token has expired" });
  });

  test("a refresh token of another client or for another resource is refused", async () => {
    const alice = await publicClient();
    const bob = await publicClient();
    const t = await exchange(alice, await authorize(alice));
    expect((await token({ grant_type: "refresh_token", client_id: bob, refresh_token: t.json.refresh_token })).json.error).toBe("invalid_grant");
    expect((await token({ grant_type: "refresh_token", client_id: alice, refresh_token: t.json.refresh_token, resource: "https://x.example/mcp" })).json.error).toBe("invalid_target");
    // Neither attempt consumed it.
    expect((await token({ grant_type: "refresh_token", client_id: alice, refresh_token: t.json.refresh_token })).status).toBe(200);
  });

  test("confidential clients authenticate with Basic or the body; wrong secrets are invalid_client", async () => {
    const reg = await register({ token_endpoint_auth_method: "client_secret_basic" });
    const { client_id: id, client_secret: secret } = reg.json;
    const basic = `Basic ${btoa(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`)}`;
    const a = await authorize(id);
    const viaBasic = await token({ grant_type: "authorization_code", code: a.code, code_verifier: a.verifier, redirect_uri: a.redirect, resource: RESOURCE }, { authorization: basic });
    expect(viaBasic.status).toBe(200);
    const viaPost = await token({ grant_type: "refresh_token", refresh_token: viaBasic.json.refresh_token, client_id: id, client_secret: secret });
    expect(viaPost.status).toBe(200);

    const bad = await token({ grant_type: "refresh_token", refresh_token: viaPost.json.refresh_token }, { authorization: `Basic ${btoa(`${id}:wrong`)}` });
    expect(bad.status).toBe(401);
    expect(bad.json.error).toBe("invalid_client");
    expect(bad.headers.get("www-authenticate")).toContain("Basic");
    expect((await token({ grant_type: "refresh_token", refresh_token: viaPost.json.refresh_token, client_id: id })).status).toBe(401);
    const both = await token({ grant_type: "refresh_token", refresh_token: viaPost.json.refresh_token, client_secret: secret }, { authorization: basic });
    expect(both.json.error).toBe("invalid_request");
    // A public client may not present a secret.
    const pub = await publicClient();
    expect((await token({ grant_type: "refresh_token", refresh_token: "x", client_id: pub, client_secret: "x" })).json.error).toBe("invalid_client");
  });

  test("bodies the app cannot read still answer in the RFC form on the OAuth endpoints", async () => {
    const big = await h.request("POST", "/oauth/token", { key: null, raw: `code=${"x".repeat(1024 * 1024 + 10)}`, headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(big.status).toBe(413);
    expect(big.json.error).toBe("invalid_request");
    const deep = await h.request("POST", "/oauth/authorize", { key: null, raw: `${"[".repeat(40)}${"]".repeat(40)}`, headers: { "content-type": "application/json" } });
    expect(deep.status).toBe(400);
    expect(deep.json).toEqual({ error: "invalid_request", error_description: "request body could not be parsed" });
    // The admin routes keep the app's own error body.
    const admin = await h.request("POST", "/admin/projects", { raw: "{", headers: { "content-type": "application/json" } });
    expect(admin.json.error.code).toBe("invalid_request");
  });

  test("the token endpoint is rate limited per client", async () => {
    const limited = await harness({ ...HIGH_LIMITS, OAUTH_TOKEN_RATE_LIMIT: "3" });
    const clientId = await publicClient();
    const other = await publicClient();
    const app: Fetcher = (r) => limited.app.handle(r);
    for (let i = 0; i < 3; i++) expect((await token({ grant_type: "refresh_token", client_id: clientId, refresh_token: "cms_rt_unknown" }, {}, app)).status).toBe(400);
    const blocked = await token({ grant_type: "refresh_token", client_id: clientId, refresh_token: "cms_rt_unknown" }, {}, app);
    expect(blocked.status).toBe(429);
    expect(blocked.json.error).toBe("rate_limited");
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await token({ grant_type: "refresh_token", client_id: other, refresh_token: "cms_rt_unknown" }, {}, app)).status).toBe(400);
  });

  test("sign-in attempts are rate limited per address", async () => {
    const limited = await harness({ ...HIGH_LIMITS, OAUTH_SIGNIN_RATE_LIMIT: "2", TRUST_PROXY: "true" });
    const clientId = await publicClient();
    const { challenge } = pkce();
    const url = authorizeUrl(BASE, { response_type: "code", client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: "S256", resource: RESOURCE });
    const jar = new CookieJar();
    const page = await limited.app.handle(new Request(url));
    jar.store(page);
    const fields = hiddenFields(await page.text());
    const ip = `192.0.2.${crypto.randomUUID()}`;
    const tryOnce = () =>
      limited.app.handle(
        new Request(`${BASE}/oauth/authorize`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded", cookie: jar.header(), "x-forwarded-for": ip },
          body: new URLSearchParams({ ...fields, email: editor.email, password: "nope-nope" }).toString(),
        }),
      );
    expect((await tryOnce()).status).toBe(401);
    expect((await tryOnce()).status).toBe(401);
    const blocked = await tryOnce();
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await blocked.text()).toContain("Too many sign-in attempts");
  });

  test("revocation (RFC 7009): access token alone, refresh token with its family; unknown tokens answer 200", async () => {
    const clientId = await publicClient();
    const t = await exchange(clientId, await authorize(clientId));
    const revoke = (form: Record<string, string>) => postForm(fetcher, BASE, "/oauth/revoke", form);
    const r1 = await revoke({ client_id: clientId, token: t.json.access_token, token_type_hint: "access_token" });
    expect(r1.status).toBe(200);
    expect(r1.headers.get("access-control-allow-origin")).toBe("*");
    expect(await mcpWorks(t.json.access_token)).toBe(401);
    const t2 = await token({ grant_type: "refresh_token", client_id: clientId, refresh_token: t.json.refresh_token });
    expect(t2.status).toBe(200);

    // Another client cannot revoke it.
    const other = await publicClient();
    expect((await revoke({ client_id: other, token: t2.json.access_token })).status).toBe(200);
    expect(await mcpWorks(t2.json.access_token)).toBe(200);

    expect((await revoke({ client_id: clientId, token: t2.json.refresh_token })).status).toBe(200);
    expect(await mcpWorks(t2.json.access_token)).toBe(401);
    expect((await token({ grant_type: "refresh_token", client_id: clientId, refresh_token: t2.json.refresh_token })).json.error).toBe("invalid_grant");
    expect((await revoke({ client_id: clientId, token: "cms_at_nonexistent" })).status).toBe(200);
    expect((await revoke({ client_id: clientId })).json.error).toBe("invalid_request");
  });

  test("an access token reaches only its own project, and not after it expires", async () => {
    const mine = await seedProject(h);
    const theirs = await seedProject(h);
    const foreignNode = await seedNode(h, theirs.id, { slug: "secret" });
    const ownNode = await seedNode(h, mine.id, { slug: "own" });
    await h.deps.db.insert(projectMembers).values({ projectId: mine.id, userId: editor.id, role: "editor" });
    const clientId = await publicClient();
    const t = await exchange(clientId, await authorize(clientId, { projectId: mine.id }));
    const own = await mcpRpc(fetcher, BASE, t.json.access_token, "tools/call", { name: "get_node", arguments: { id: ownNode.id } });
    expect(own.json.result.structuredContent.node.id).toBe(ownNode.id);
    const foreign = await mcpRpc(fetcher, BASE, t.json.access_token, "tools/call", { name: "get_node", arguments: { id: foreignNode.id } });
    expect(foreign.json.result.isError).toBe(true);
    expect(JSON.stringify(foreign.json.result)).not.toContain("secret");

    const later = await harness(HIGH_LIMITS, { now: () => new Date(Date.now() + 3601_000) });
    const expired = await mcpRpc((r) => later.app.handle(r), BASE, t.json.access_token, "tools/call", { name: "get_project", arguments: {} });
    expect(expired.status).toBe(401);
    expect(expired.headers.get("www-authenticate")).toContain(`resource_metadata="${BASE}/.well-known/oauth-protected-resource/mcp"`);
  });

  test("a token issued for another PUBLIC_URL's resource is refused by /mcp", async () => {
    const elsewhere = await harness({ ...HIGH_LIMITS, PUBLIC_URL: "https://cms.example" });
    const clientId = await publicClient();
    const t = await exchange(clientId, await authorize(clientId));
    const res = await mcpRpc((r) => elsewhere.app.handle(new Request(r.url.replace(BASE, "https://cms.example"), r)), "https://cms.example", t.json.access_token, "tools/list");
    expect(res.status).toBe(401);
  });

  test("admin: revoking a consent or deleting a client stops its tokens at once", async () => {
    const clientId = await publicClient({ client_name: "Revocable" });
    const t = await exchange(clientId, await authorize(clientId));
    expect(await mcpWorks(t.json.access_token)).toBe(200);

    const list = await h.request("GET", `/admin/oauth/grants?client_id=${clientId}`);
    expect(list.status).toBe(200);
    expect(list.json.data).toHaveLength(1);
    const grant = list.json.data[0];
    expect(grant).toMatchObject({ client_id: clientId, client_name: "Revocable", user_id: editor.id, user_email: editor.email, project_id: project.id, resource: RESOURCE, revoked_at: null });
    expect(JSON.stringify(list.json)).not.toContain("token_hash");

    const reader = await keyWith(h, ["content:read"]);
    expect((await h.request("DELETE", `/admin/oauth/grants/${grant.id}`, { key: reader })).status).toBe(403);
    const otherProject = await seedProject(h);
    const limitedKey = await keyWith(h, ["keys:write"], [otherProject.id]);
    expect((await h.request("DELETE", `/admin/oauth/grants/${grant.id}`, { key: limitedKey })).status).toBe(404);
    expect((await h.request("GET", `/admin/oauth/grants?client_id=${clientId}`, { key: limitedKey })).json.data).toEqual([]);

    expect((await h.request("DELETE", `/admin/oauth/grants/${grant.id}`)).status).toBe(204);
    expect(await mcpWorks(t.json.access_token)).toBe(401);
    expect((await token({ grant_type: "refresh_token", client_id: clientId, refresh_token: t.json.refresh_token })).json.error).toBe("invalid_grant");
    expect((await h.request("GET", `/admin/oauth/grants?client_id=${clientId}&active=true`)).json.data).toEqual([]);

    // Deleting the client takes its other consents and tokens with it.
    const t2 = await exchange(clientId, await authorize(clientId));
    expect(await mcpWorks(t2.json.access_token)).toBe(200);
    const clients = await h.request("GET", "/admin/oauth/clients");
    expect(clients.json.data.some((c: { client_id: string }) => c.client_id === clientId)).toBe(true);
    expect((await h.request("DELETE", `/admin/oauth/clients/${clientId}`, { key: limitedKey })).status).toBe(403);
    expect((await h.request("DELETE", `/admin/oauth/clients/${clientId}`)).status).toBe(204);
    expect(await mcpWorks(t2.json.access_token)).toBe(401);
    expect(await h.deps.db.select().from(oauthTokens).where(eq(oauthTokens.clientId, clientId))).toHaveLength(0);
    expect((await h.request("DELETE", `/admin/oauth/clients/${clientId}`)).status).toBe(404);
    expect((await h.request("DELETE", `/admin/oauth/grants/${grant.id}`)).status).toBe(404);
  });

  test("a consent revoked between authorization and token exchange yields no token", async () => {
    const clientId = await publicClient();
    const a = await authorize(clientId);
    const [code] = await h.deps.db
      .select()
      .from(oauthCodes)
      .where(eq(oauthCodes.codeHash, hashToken(a.code)));
    expect((await h.request("DELETE", `/admin/oauth/grants/${code!.grantId}`)).status).toBe(204);
    expect((await exchange(clientId, a)).json.error).toBe("invalid_grant");
    expect(
      await h.deps.db
        .select()
        .from(oauthTokens)
        .where(and(eq(oauthTokens.grantId, code!.grantId))),
    ).toHaveLength(0);
  });
});

describe("OAuth Client ID Metadata Documents", async () => {
  const docs = new Map<string, () => Response>();
  // What was dialled, asserted by the tests after each call: an expect in here would throw into the
  // app's fetch, whose failure is an error page like any other (the test would not see it).
  const fetched: Array<{ url: string; redirect: string | undefined; address: string }> = [];
  const fakeFetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    // The server connects to the address its guard checked and names the host in the Host header.
    const connected = new URL(input instanceof Request ? input.url : String(input));
    const host = (init?.headers as Record<string, string> | undefined)?.host;
    const logical = new URL(connected);
    if (host) logical.host = host;
    const url = logical.toString();
    fetched.push({ url, redirect: init?.redirect, address: connected.hostname });
    const doc = docs.get(url);
    return doc ? doc() : new Response("not found", { status: 404 });
  }) as typeof fetch;
  const resolveHost = async (host: string): Promise<string[]> => (host === "internal.example" ? ["10.0.0.5"] : ["93.184.216.34"]);
  let clock = Date.now();
  const h = await harness(HIGH_LIMITS, { fetch: fakeFetch, resolveHost, now: () => new Date(clock) });
  const fetcher: Fetcher = (r) => h.app.handle(r);
  const project = await seedProject(h);
  const user = await seedUser(h, "editor", [project.id]);
  const serve = (url: string, body: unknown, init: ResponseInit = {}) =>
    docs.set(url, () => new Response(typeof body === "string" ? body : JSON.stringify(body), { headers: { "content-type": "application/json" }, ...init }));
  const urlFor = (clientId: string, challenge: string, redirect = REDIRECT) =>
    authorizeUrl(BASE, { response_type: "code", client_id: clientId, redirect_uri: redirect, code_challenge: challenge, code_challenge_method: "S256", state: "cimd", resource: RESOURCE });

  test("an https client_id is fetched, shown with its host, and works through to /mcp", async () => {
    const as = await h.request("GET", "/.well-known/oauth-authorization-server", { key: null });
    expect(as.json.client_id_metadata_document_supported).toBe(true);
    const clientId = `https://agent-${crypto.randomUUID().slice(0, 8)}.example/oauth/client.json`;
    serve(clientId, { client_id: clientId, client_name: "Doc Agent", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" });
    const { verifier, challenge } = pkce();
    const before = fetched.length;
    const r = await authorizeInBrowser(fetcher, urlFor(clientId, challenge), { email: user.email, password: user.password, projectId: project.id });
    expect(r.pages[0]).toContain(`published by <strong>${new URL(clientId).host}</strong>`);
    expect(r.pages[0]).toContain("Doc Agent");
    // One fetch for the whole walk (the row is reused for an hour), never following redirects.
    expect(fetched.slice(before)).toEqual([{ url: clientId, redirect: "manual", address: "93.184.216.34" }]);
    const code = new URL(r.location).searchParams.get("code")!;
    const t = await postForm(fetcher, BASE, "/oauth/token", { grant_type: "authorization_code", client_id: clientId, code, code_verifier: verifier, redirect_uri: REDIRECT, resource: RESOURCE });
    expect(t.status).toBe(200);
    expect((await mcpRpc(fetcher, BASE, t.json.access_token, "tools/call", { name: "get_project", arguments: {} })).json.result.structuredContent.project.id).toBe(project.id);
    const [row] = await h.deps.db.select().from(oauthClients).where(eq(oauthClients.id, clientId));
    expect(row).toMatchObject({ clientName: "Doc Agent", tokenEndpointAuthMethod: "none", secretHash: null, redirectUris: [REDIRECT] });

    // An hour later the document is read again, and a change in it applies.
    clock += 61 * 60_000;
    serve(clientId, { client_id: clientId, client_name: "Doc Agent v2", redirect_uris: ["http://127.0.0.1:5/new"] });
    const stale = await fetcher(new Request(urlFor(clientId, challenge)));
    expect(stale.status).toBe(400);
    expect(await stale.text()).toContain("not one the application registered");
    expect((await h.deps.db.select().from(oauthClients).where(eq(oauthClients.id, clientId)))[0]!.clientName).toBe("Doc Agent v2");
  });

  test("unusable documents and addresses give an error page, never a redirect", async () => {
    const { challenge } = pkce();
    const id = (name: string) => `https://${name}-${crypto.randomUUID().slice(0, 8)}.example/client.json`;
    const cases: Array<[string, () => void, string]> = [];
    const mismatch = id("mismatch");
    cases.push([mismatch, () => serve(mismatch, { client_id: "https://other.example/client.json", redirect_uris: [REDIRECT] }), "client_id is not the document"]);
    const secret = id("secret");
    cases.push([secret, () => serve(secret, { client_id: secret, redirect_uris: [REDIRECT], token_endpoint_auth_method: "client_secret_basic" }), "must be none"]);
    const big = id("big");
    cases.push([big, () => serve(big, { client_id: big, redirect_uris: [REDIRECT], padding: "x".repeat(6000) }), "larger than"]);
    const moved = id("moved");
    cases.push([moved, () => docs.set(moved, () => new Response(null, { status: 302, headers: { location: "https://evil.example/doc.json" } })), "HTTP 302"]);
    const down = id("down");
    cases.push([
      down,
      () =>
        docs.set(down, () => {
          throw new TypeError("fetch failed: connection refused");
        }),
      "could not be fetched",
    ]);
    const notJson = id("notjson");
    cases.push([notJson, () => serve(notJson, "<html>"), "not JSON"]);
    // A document that is one JSON string is a document (not an object), never words shown as our reason.
    const words = id("words");
    cases.push([words, () => serve(words, JSON.stringify("Sign in at evil.example")), "not a JSON object"]);
    const badRedirect = id("badredirect");
    cases.push([badRedirect, () => serve(badRedirect, { client_id: badRedirect, redirect_uris: ["http://evil.example/cb"] }), "loopback"]);
    cases.push([
      "https://internal.example/client.json",
      () => serve("https://internal.example/client.json", { client_id: "https://internal.example/client.json", redirect_uris: [REDIRECT] }),
      "not at a public https address",
    ]);
    for (const [clientId, setup, message] of cases) {
      setup();
      const before = fetched.length;
      const res = await fetcher(new Request(urlFor(clientId, challenge)));
      expect(res.status).toBe(400);
      expect(res.headers.get("location")).toBeNull();
      expect(await res.text()).toContain(message);
      expect(await h.deps.db.select().from(oauthClients).where(eq(oauthClients.id, clientId))).toHaveLength(0);
      // Each document is fetched once, from the address the guard checked, the redirect not followed; the internal one never.
      const dialled = clientId.startsWith("https://internal.example") ? [] : [{ url: clientId, redirect: "manual", address: "93.184.216.34" }];
      expect(fetched.slice(before)).toEqual(dialled);
    }
    expect(fetched.some((f) => f.url.startsWith("https://internal.example"))).toBe(false);
    // Not a metadata-document URL (no path): an unknown client, nothing fetched.
    const count = fetched.length;
    expect((await fetcher(new Request(urlFor("https://agent.example", challenge)))).status).toBe(400);
    expect(fetched.length).toBe(count);
  });

  test("switched off, an https client_id is just an unknown client", async () => {
    const off = await harness({ ...HIGH_LIMITS, OAUTH_CLIENT_METADATA_DOCUMENTS: "false" }, { fetch: fakeFetch, resolveHost });
    const clientId = `https://off-${crypto.randomUUID().slice(0, 8)}.example/client.json`;
    serve(clientId, { client_id: clientId, redirect_uris: [REDIRECT] });
    const count = fetched.length;
    const res = await off.app.handle(new Request(urlFor(clientId, pkce().challenge)));
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("not registered");
    expect(fetched.length).toBe(count);
    expect((await off.request("GET", "/.well-known/oauth-authorization-server", { key: null })).json.client_id_metadata_document_supported).toBe(false);
  });
});
