// Review fixes of the OAuth server: what real MCP clients send (resource forms, foreign scopes,
// Basic with an empty password), session fixation on the consent page, the token rate limit key.
import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { oauthCodes, oauthGrants, oauthTokens } from "../db/schema";
import { hashToken } from "../src/lib/tokens";

/** The parallel-refresh window the tests that need one configure (OAUTH_REFRESH_REUSE_GRACE=60). */
const REFRESH_REUSE_GRACE_MS = 60_000;

import { BASE, HIGH_LIMITS, harness, seedProject } from "./helpers";
import { authorizeInBrowser, authorizeUrl, CookieJar, type Fetcher, hiddenFields, mcpRpc, metadataDocumentFetch, pkce, postForm, seedUser } from "./oauth.helpers";

const RESOURCE = `${BASE}/mcp`;
const REDIRECT = "http://127.0.0.1:43124/callback";

describe("OAuth: what real clients send", async () => {
  const h = await harness({ ...HIGH_LIMITS, OAUTH_REFRESH_REUSE_GRACE: "60", OAUTH_REQUIRE_RESOURCE: "false" });
  const fetcher: Fetcher = (r) => h.app.handle(r);
  const project = await seedProject(h);
  const editor = await seedUser(h, "editor", [project.id]);

  async function publicClient(): Promise<string> {
    const res = await h.request("POST", "/oauth/register", { key: null, body: { client_name: "Review Agent", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" } });
    if (res.status !== 201) throw new Error(res.text);
    return res.json.client_id;
  }

  const params = (clientId: string, challenge: string, extra: Record<string, string | undefined>) => ({
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: "S256",
    state: "st",
    ...extra,
  });

  /** Consent as a browser would, returning the code and the offered scopes. */
  async function codeFor(clientId: string, extra: Record<string, string | undefined>) {
    const { verifier, challenge } = pkce();
    const r = await authorizeInBrowser(fetcher, authorizeUrl(BASE, params(clientId, challenge, extra)), { email: editor.email, password: editor.password, projectId: project.id });
    const code = new URL(r.location).searchParams.get("code");
    if (!code) throw new Error(`no code: ${r.location}`);
    const offered = [...r.pages.at(-1)!.matchAll(/name="grant_scope" value="([^"]+)"/g)].map((m) => m[1]);
    return { code, verifier, offered };
  }

  const token = (form: Record<string, string>, headers: Record<string, string> = {}) => postForm(fetcher, BASE, "/oauth/token", form, headers);

  test("resource: the trailing-slash, origin and differently spelled forms of our MCP URL are accepted and bound canonically; others are invalid_target", async () => {
    const clientId = await publicClient();
    for (const resource of [`${BASE}/mcp/`, "HTTP://LOCALHOST/mcp", `${BASE}:80/mcp`, BASE, `${BASE}/`]) {
      const { challenge } = pkce();
      const res = await fetcher(new Request(authorizeUrl(BASE, params(clientId, challenge, { resource }))));
      expect(res.status).toBe(200);
      expect(res.headers.get("location")).toBeNull();
    }
    for (const resource of [
      "https://elsewhere.example/mcp",
      `${BASE}/mcp?tenant=2`,
      `${BASE}/mcp#x`,
      `${BASE}/admin`,
      "http://localhost:8080/mcp",
      "https://localhost/mcp",
      "not a url",
      `${BASE}/mcp/x`,
    ]) {
      const { challenge } = pkce();
      const res = await fetcher(new Request(authorizeUrl(BASE, params(clientId, challenge, { resource }))));
      expect(res.status).toBe(302);
      const loc = new URL(res.headers.get("location")!);
      expect(loc.searchParams.get("error")).toBe("invalid_target");
      expect(loc.searchParams.get("state")).toBe("st");
    }

    // A whole flow with the trailing-slash form: the grant, the code and the tokens carry the canonical URI.
    const a = await codeFor(clientId, { resource: `${RESOURCE}/` });
    const [code] = await h.deps.db
      .select()
      .from(oauthCodes)
      .where(eq(oauthCodes.codeHash, hashToken(a.code)));
    expect(code!.resource).toBe(RESOURCE);
    const foreign = await token({ grant_type: "authorization_code", client_id: clientId, code: a.code, code_verifier: a.verifier, redirect_uri: REDIRECT, resource: "https://elsewhere.example/mcp" });
    expect(foreign.status).toBe(400);
    expect(foreign.json.error).toBe("invalid_target");

    const b = await codeFor(clientId, { resource: `${RESOURCE}/` });
    const ok = await token({ grant_type: "authorization_code", client_id: clientId, code: b.code, code_verifier: b.verifier, redirect_uri: REDIRECT, resource: `${RESOURCE}/` });
    expect(ok.status).toBe(200);
    const [access] = await h.deps.db
      .select()
      .from(oauthTokens)
      .where(eq(oauthTokens.tokenHash, hashToken(ok.json.access_token)));
    expect(access!.resource).toBe(RESOURCE);
    expect((await mcpRpc(fetcher, BASE, ok.json.access_token, "tools/call", { name: "get_project", arguments: {} })).status).toBe(200);
    const refreshed = await token({ grant_type: "refresh_token", client_id: clientId, refresh_token: ok.json.refresh_token, resource: BASE });
    expect(refreshed.status).toBe(200);
    const wrong = await token({ grant_type: "refresh_token", client_id: clientId, refresh_token: refreshed.json.refresh_token, resource: `${BASE}/other` });
    expect(wrong.json.error).toBe("invalid_target");
  });

  test("with OAUTH_REQUIRE_RESOURCE=false, an omitted resource (Codex, older Claude Code) means the one resource this server protects", async () => {
    const clientId = await publicClient();
    const a = await codeFor(clientId, { resource: undefined });
    const res = await token({ grant_type: "authorization_code", client_id: clientId, code: a.code, code_verifier: a.verifier, redirect_uri: REDIRECT });
    expect(res.status).toBe(200);
    const [access] = await h.deps.db
      .select()
      .from(oauthTokens)
      .where(eq(oauthTokens.tokenHash, hashToken(res.json.access_token)));
    expect(access!.resource).toBe(RESOURCE);
    const call = await mcpRpc(fetcher, BASE, res.json.access_token, "tools/call", { name: "get_project", arguments: {} });
    expect(call.status).toBe(200);
    expect(call.json.result.structuredContent.project.id).toBe(project.id);
  });

  test("scope naming none of ours (offline_access, openid) is ignored: every MCP scope the user holds is offered", async () => {
    const clientId = await publicClient();
    const all = await codeFor(clientId, { resource: RESOURCE, scope: "openid offline_access" });
    expect(all.offered).toEqual(["content:read", "content:write", "content:publish", "ai:read"]);
    const res = await token({ grant_type: "authorization_code", client_id: clientId, code: all.code, code_verifier: all.verifier, redirect_uri: REDIRECT });
    expect(res.json.scope).toBe("content:read content:write content:publish ai:read");
    const some = await codeFor(clientId, { resource: RESOURCE, scope: "offline_access content:read" });
    expect(some.offered).toEqual(["content:read"]);
  });

  test("refresh: scopes this service does not define are ignored like at authorization; ours outside the grant are refused", async () => {
    const clientId = await publicClient();
    const a = await codeFor(clientId, { resource: RESOURCE, scope: "content:read ai:read offline_access" });
    const first = await token({ grant_type: "authorization_code", client_id: clientId, code: a.code, code_verifier: a.verifier, redirect_uri: REDIRECT });
    expect(first.json.scope).toBe("content:read ai:read");
    // The client re-sends what it first asked for.
    const again = await token({ grant_type: "refresh_token", client_id: clientId, refresh_token: first.json.refresh_token, scope: "content:read ai:read offline_access" });
    expect(again.status).toBe(200);
    expect(again.json.scope).toBe("content:read ai:read");
    const only = await token({ grant_type: "refresh_token", client_id: clientId, refresh_token: again.json.refresh_token, scope: "offline_access" });
    expect(only.json.scope).toBe("content:read ai:read");
    const narrowed = await token({ grant_type: "refresh_token", client_id: clientId, refresh_token: only.json.refresh_token, scope: "openid ai:read" });
    expect(narrowed.json.scope).toBe("ai:read");
    for (const scope of ["content:read", "content:write", "ai:read keys:write"]) {
      const wider = await token({ grant_type: "refresh_token", client_id: clientId, refresh_token: narrowed.json.refresh_token, scope });
      expect(wider.status).toBe(400);
      expect(wider.json.error).toBe("invalid_scope");
    }
  });

  test("registration without token_endpoint_auth_method (VS Code and others) is a public client that needs no secret", async () => {
    const reg = await h.request("POST", "/oauth/register", { key: null, body: { client_name: "Omits method", redirect_uris: ["http://127.0.0.1:33418"] } });
    expect(reg.status).toBe(201);
    expect(reg.json.token_endpoint_auth_method).toBe("none");
    expect(reg.json.client_secret).toBeUndefined();
    const { verifier, challenge } = pkce();
    const url = authorizeUrl(BASE, {
      response_type: "code",
      client_id: reg.json.client_id,
      redirect_uri: "http://127.0.0.1:33418",
      code_challenge: challenge,
      code_challenge_method: "S256",
      state: "vs",
      resource: RESOURCE,
    });
    const r = await authorizeInBrowser(fetcher, url, { email: editor.email, password: editor.password, projectId: project.id });
    const code = new URL(r.location).searchParams.get("code")!;
    const res = await token({ grant_type: "authorization_code", client_id: reg.json.client_id, code, code_verifier: verifier, redirect_uri: "http://127.0.0.1:33418", resource: RESOURCE });
    expect(res.status).toBe(200);
    expect(res.json.refresh_token).toMatch(/^cms_rt_/);
    // Asking for a secret still gets one.
    const conf = await h.request("POST", "/oauth/register", { key: null, body: { redirect_uris: [REDIRECT], token_endpoint_auth_method: "client_secret_post" } });
    expect(conf.json.client_secret).toMatch(/^cms_cs_/);
  });

  test("a public client sending Basic with an empty password (id:) is a public client", async () => {
    const clientId = await publicClient();
    const a = await codeFor(clientId, { resource: RESOURCE });
    const basic = `Basic ${btoa(`${encodeURIComponent(clientId)}:`)}`;
    const res = await token({ grant_type: "authorization_code", code: a.code, code_verifier: a.verifier, redirect_uri: REDIRECT, resource: RESOURCE }, { authorization: basic });
    expect(res.status).toBe(200);
    expect(res.json.access_token).toMatch(/^cms_at_/);
    // A non-empty password is still refused for a client that has none.
    const b = await codeFor(clientId, { resource: RESOURCE });
    const withSecret = await token({ grant_type: "authorization_code", code: b.code, code_verifier: b.verifier, redirect_uri: REDIRECT }, { authorization: `Basic ${btoa(`${clientId}:guess`)}` });
    expect(withSecret.status).toBe(401);
    expect(withSecret.json.error).toBe("invalid_client");
  });

  test("session fixation: signing in replaces the CSRF nonce, so a form token learnt for a planted nonce is worthless", async () => {
    const clientId = await publicClient();
    const { challenge } = pkce();
    const url = authorizeUrl(BASE, params(clientId, challenge, { resource: RESOURCE }));
    // The attacker fetches the page with a nonce of their choosing and reads the form token for it…
    const planted = "PlantedNonce0123456789";
    const attackerPage = await fetcher(new Request(url, { headers: { cookie: `cms_oauth_csrf=${planted}` } }));
    expect(attackerPage.headers.getSetCookie()).toEqual([]); // the server adopts a valid nonce it is shown
    const attackerFields = hiddenFields(await attackerPage.text());

    // …then plants the nonce in the victim's browser, and the victim signs in.
    const jar = new CookieJar();
    jar.cookies.set("cms_oauth_csrf", planted);
    const page = await fetcher(new Request(url, { headers: { cookie: jar.header() } }));
    const fields = hiddenFields(await page.text());
    expect(fields.csrf_token).toBe(attackerFields.csrf_token);
    const signedIn = await fetcher(
      new Request(`${BASE}/oauth/authorize`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", cookie: jar.header() },
        body: new URLSearchParams({ ...fields, email: editor.email, password: editor.password }).toString(),
      }),
    );
    expect(signedIn.status).toBe(200);
    jar.store(signedIn);
    expect(jar.cookies.get("cms_oauth_csrf")).not.toBe(planted);
    const consentFields = hiddenFields(await signedIn.text());
    expect(consentFields.csrf_token).not.toBe(attackerFields.csrf_token);

    // The attacker's forged approval, riding on the victim's cookies, is refused and issues nothing.
    const codesBefore = (await h.deps.db.select().from(oauthGrants).where(eq(oauthGrants.clientId, clientId))).length;
    const forged = await fetcher(
      new Request(`${BASE}/oauth/authorize`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", cookie: jar.header() },
        body: new URLSearchParams({ ...attackerFields, step: "consent", project: project.id, action: "approve", grant_scope: "content:read" }).toString(),
      }),
    );
    expect(forged.status).toBe(403);
    expect(forged.headers.get("location")).toBeNull();
    expect((await h.deps.db.select().from(oauthGrants).where(eq(oauthGrants.clientId, clientId))).length).toBe(codesBefore);

    // The victim's own page goes on working with the new token.
    const post = (form: Record<string, string>) =>
      fetcher(
        new Request(`${BASE}/oauth/authorize`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", cookie: jar.header() }, body: new URLSearchParams(form).toString() }),
      );
    let current = consentFields;
    if (current.step === "project") {
      const chosen = await post({ ...current, project: project.id });
      expect(chosen.status).toBe(200);
      current = hiddenFields(await chosen.text());
    }
    expect(current.step).toBe("consent");
    const own = await post({ ...current, project: project.id, action: "approve", grant_scope: "content:read" });
    expect(own.status).toBe(303);
    expect(new URL(own.headers.get("location")!).searchParams.get("code")).toMatch(/^cms_code_/);
  });

  test("RFC 9700 §4.11.2: an invalid request of an https client is not redirected before the user signs in (no open redirector)", async () => {
    const reg = await h.request("POST", "/oauth/register", { key: null, body: { redirect_uris: ["https://phish.example/land"], token_endpoint_auth_method: "none" } });
    const clientId = reg.json.client_id;
    const { challenge } = pkce();
    const bad = { response_type: "code", client_id: clientId, redirect_uri: "https://phish.example/land", state: "s&<", resource: RESOURCE };
    for (const query of [bad, { ...bad, code_challenge: challenge, code_challenge_method: "plain" }, { ...bad, code_challenge: challenge, code_challenge_method: "S256", response_type: "token" }]) {
      const res = await fetcher(new Request(authorizeUrl(BASE, query)));
      expect(res.status).toBe(400);
      expect(res.headers.get("location")).toBeNull();
      expect(res.headers.get("content-type")).toContain("text/html");
      expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
      const html = await res.text();
      const link = /<a href="([^"]+)"/.exec(html)![1]!.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n)));
      const back = new URL(link);
      expect(`${back.origin}${back.pathname}`).toBe("https://phish.example/land");
      expect(back.searchParams.get("error")).toMatch(/^(invalid_request|unsupported_response_type)$/);
      expect(back.searchParams.get("state")).toBe("s&<");
      expect(back.searchParams.get("iss")).toBe(BASE);
      expect(html).toContain("phish.example");
      expect(html).not.toContain("s&<");
    }
    // A loopback (or private-use scheme) client still gets the RFC 6749 redirect: nothing to phish there.
    const loopback = await publicClient();
    const res = await fetcher(new Request(authorizeUrl(BASE, { ...bad, client_id: loopback, redirect_uri: REDIRECT })));
    expect(res.status).toBe(302);
    expect(new URL(res.headers.get("location")!).searchParams.get("error")).toBe("invalid_request");
  });

  test.each(Array.from({ length: Number(process.env.RACE_N ?? 1) }, (_, i) => i))("races: five simultaneous redemptions of one code give one answer, and the reuse withdraws it (%i)", async () => {
    const clientId = await publicClient();
    const a = await codeFor(clientId, { resource: RESOURCE });
    const form = { grant_type: "authorization_code", client_id: clientId, code: a.code, code_verifier: a.verifier, redirect_uri: REDIRECT, resource: RESOURCE };
    const answers = await Promise.all(Array.from({ length: 5 }, () => token(form)));
    const ok = answers.filter((r) => r.status === 200);
    // At most one presentation wins; a loser's replay may revoke the grant before the winner is
    // answered, in which case nobody gets tokens. Either way the code bought nothing that survives.
    expect(ok.length).toBeLessThanOrEqual(1);
    for (const r of answers.filter((x) => x.status !== 200)) expect(r.json.error).toBe("invalid_grant");
    for (const winner of ok) {
      expect((await mcpRpc(fetcher, BASE, winner.json.access_token, "tools/list", {})).status).toBe(401);
      expect((await token({ grant_type: "refresh_token", client_id: clientId, refresh_token: winner.json.refresh_token })).json.error).toBe("invalid_grant");
    }
    const [code] = await h.deps.db
      .select()
      .from(oauthCodes)
      .where(eq(oauthCodes.codeHash, hashToken(a.code)));
    const [grant] = await h.deps.db.select().from(oauthGrants).where(eq(oauthGrants.id, code!.grantId));
    expect(grant!.revokedAt).not.toBeNull();
  });

  test("races: parallel refreshes with one refresh token (MCP hosts after the access token expires) all get working pairs; reuse past the grace revokes the family", async () => {
    const clientId = await publicClient();
    const a = await codeFor(clientId, { resource: RESOURCE });
    const first = await token({ grant_type: "authorization_code", client_id: clientId, code: a.code, code_verifier: a.verifier, redirect_uri: REDIRECT });
    expect(first.status).toBe(200);
    const form = { grant_type: "refresh_token", client_id: clientId, refresh_token: first.json.refresh_token };
    const answers = await Promise.all(Array.from({ length: 5 }, () => token(form)));
    for (const r of answers) expect(r.status).toBe(200);
    expect(new Set(answers.map((r) => r.json.refresh_token)).size).toBe(5);
    for (const r of answers) expect((await mcpRpc(fetcher, BASE, r.json.access_token, "tools/list", {})).status).toBe(200);
    const [row] = await h.deps.db
      .select()
      .from(oauthTokens)
      .where(eq(oauthTokens.tokenHash, hashToken(first.json.refresh_token)));
    expect(row!.usedAt).not.toBeNull();
    // A late retry inside the grace is served too; whichever pair the client keeps refreshes on.
    const retry = await token(form);
    expect(retry.status).toBe(200);
    const next = await token({ grant_type: "refresh_token", client_id: clientId, refresh_token: answers[2]!.json.refresh_token });
    expect(next.status).toBe(200);

    // Past the grace the same presentation is reuse: the whole family, siblings included, is revoked.
    const later = await harness({ ...HIGH_LIMITS, OAUTH_REFRESH_REUSE_GRACE: "60" }, { now: () => new Date(Date.now() + REFRESH_REUSE_GRACE_MS + 5_000) });
    const replay = await postForm((r) => later.app.handle(r), BASE, "/oauth/token", form);
    expect(replay.status).toBe(400);
    expect(replay.json.error).toBe("invalid_grant");
    for (const t of [...answers.map((r) => r.json.access_token), next.json.access_token]) expect((await mcpRpc(fetcher, BASE, t, "tools/list", {})).status).toBe(401);
    expect((await token({ grant_type: "refresh_token", client_id: clientId, refresh_token: next.json.refresh_token })).json.error).toBe("invalid_grant");
    const [grant] = await h.deps.db.select().from(oauthGrants).where(eq(oauthGrants.id, row!.grantId));
    expect(grant!.revokedAt).not.toBeNull();
  });

  test("the grace never revives a revoked family, another client's token or an explicitly revoked refresh token", async () => {
    const clientId = await publicClient();
    const a = await codeFor(clientId, { resource: RESOURCE });
    const first = await token({ grant_type: "authorization_code", client_id: clientId, code: a.code, code_verifier: a.verifier, redirect_uri: REDIRECT });
    const form = { grant_type: "refresh_token", client_id: clientId, refresh_token: first.json.refresh_token };
    expect((await token(form)).status).toBe(200);
    const other = await publicClient();
    expect((await token({ ...form, client_id: other })).json.error).toBe("invalid_grant");
    const revoked = await postForm(fetcher, BASE, "/oauth/revoke", { token: first.json.refresh_token, client_id: clientId });
    expect(revoked.status).toBe(200);
    const afterRevoke = await token(form);
    expect(afterRevoke.status).toBe(400);
    expect(afterRevoke.json.error).toBe("invalid_grant");
  });

  test("the token rate limit counts per client and address: another address is not locked out by someone hammering a public client_id", async () => {
    const limited = await harness({ ...HIGH_LIMITS, OAUTH_TOKEN_RATE_LIMIT: "2", TRUST_PROXY: "true" });
    const reg = await limited.request("POST", "/oauth/register", { key: null, body: { redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" } });
    const clientId = reg.json.client_id;
    const send = (addr: string) =>
      postForm((r) => limited.app.handle(r), BASE, "/oauth/token", { grant_type: "refresh_token", client_id: clientId, refresh_token: "cms_rt_unknown" }, { "x-forwarded-for": addr });
    const attacker = `198.51.100.${Math.floor(Math.random() * 250)}`;
    expect((await send(attacker)).json.error).toBe("invalid_grant");
    expect((await send(attacker)).json.error).toBe("invalid_grant");
    const third = await send(attacker);
    expect(third.status).toBe(429);
    expect(third.json.error).toBe("rate_limited");
    expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(0);
    const victim = await send(`203.0.113.${Math.floor(Math.random() * 250)}`);
    expect(victim.status).toBe(400);
    expect(victim.json.error).toBe("invalid_grant");
  });
});

describe("OAuth review fixes: long Client ID Metadata Document URLs", async () => {
  const documents = new Map<string, unknown>();
  const outbound = metadataDocumentFetch(documents);
  const h = await harness(HIGH_LIMITS, { fetch: outbound, resolveHost: async () => ["93.184.216.34"] });
  const fetcher: Fetcher = (r) => h.app.handle(r);
  const project = await seedProject(h);
  const user = await seedUser(h, "editor", [project.id]);

  test("a metadata-document client_id longer than 200 characters is the same client at the authorization and token endpoints", async () => {
    const clientId = `https://agent.example/clients/${"a".repeat(400)}/metadata.json`;
    documents.set(clientId, { client_id: clientId, client_name: "Long Id Agent", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" });
    const { verifier, challenge } = pkce();
    const url = authorizeUrl(BASE, { response_type: "code", client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: "S256", state: "long", resource: RESOURCE });
    const r = await authorizeInBrowser(fetcher, url, { email: user.email, password: user.password, projectId: project.id });
    const code = new URL(r.location).searchParams.get("code")!;
    expect(code).toMatch(/^cms_code_/);
    const res = await postForm(fetcher, BASE, "/oauth/token", { grant_type: "authorization_code", client_id: clientId, code, code_verifier: verifier, redirect_uri: REDIRECT, resource: RESOURCE });
    expect(res.status).toBe(200);
    expect(res.json.access_token).toMatch(/^cms_at_/);
    const grants = await h.request("GET", `/admin/oauth/grants?client_id=${encodeURIComponent(clientId)}`);
    expect(grants.status).toBe(200);
    expect(grants.json.data).toHaveLength(1);
    const removed = await h.request("DELETE", `/admin/oauth/clients/${encodeURIComponent(clientId)}`);
    expect(removed.status).toBe(204);
    expect((await mcpRpc(fetcher, BASE, res.json.access_token, "tools/list", {})).status).toBe(401);
  });
});
