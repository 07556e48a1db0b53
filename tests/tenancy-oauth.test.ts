// Issue 13 through OAuth: the consent page offers only the user's projects, refuses any other,
// and every use of an access or refresh token reads the membership again.
import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { oauthCodes, oauthGrants } from "../db/schema";
import { BASE, HIGH_LIMITS, harness, seedNode, seedProject } from "./helpers";
import { authorizeInBrowser, authorizeUrl, CookieJar, type Fetcher, hiddenFields, mcpRpc, pkce, postForm, seedUser } from "./oauth.helpers";

const REDIRECT = "http://127.0.0.1:43123/cb";
const RESOURCE = `${BASE}/mcp`;

describe("OAuth and project membership", async () => {
  const h = await harness({ ...HIGH_LIMITS, INSTANCE_NAME: "Acme <CMS>" });
  const fetcher: Fetcher = (r) => h.app.handle(r);
  const a = await seedProject(h);
  const a2 = await seedProject(h);
  const b = await seedProject(h);
  const nodeB = await seedNode(h, b.slug, { slug: "b-secret", title: "B secret draft" });
  const client = (await h.request("POST", "/oauth/register", { key: null, body: { client_name: "Tenant agent", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" } })).json
    .client_id as string;

  const start = (challenge: string) =>
    authorizeUrl(BASE, { response_type: "code", client_id: client, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: "S256", state: "s", resource: RESOURCE });
  const tokenFor = async (user: { email: string; password: string }, projectId: string) => {
    const { verifier, challenge } = pkce();
    const r = await authorizeInBrowser(fetcher, start(challenge), { email: user.email, password: user.password, projectId });
    const code = new URL(r.location).searchParams.get("code")!;
    const t = await postForm(fetcher, BASE, "/oauth/token", { grant_type: "authorization_code", client_id: client, code, code_verifier: verifier, redirect_uri: REDIRECT, resource: RESOURCE });
    expect(t.status).toBe(200);
    return t.json as { access_token: string; refresh_token: string; scope: string };
  };
  const refresh = (rt: string) => postForm(fetcher, BASE, "/oauth/token", { grant_type: "refresh_token", client_id: client, refresh_token: rt });
  const createNode = (token: string, slug: string) => mcpRpc(fetcher, BASE, token, "tools/call", { name: "create_node", arguments: { slug, title: slug } });

  test("the sign-in page names the service; the chooser lists only the user's projects with the role; one name on every page", async () => {
    await h.request("PATCH", `/admin/p/${a.slug}/theme`, { body: { name_override: "Brand display name" } });
    const user = await seedUser(h, "viewer", [a.id]);
    await h.request("PUT", `/admin/p/${a2.slug}/members/${user.id}`, { body: { role: "admin" } });
    const jar = new CookieJar();
    const first = await fetcher(new Request(start(pkce().challenge)));
    jar.store(first);
    const signIn = await first.text();
    expect(signIn).toContain("Sign in to Acme &#60;CMS&#62;");
    expect(signIn).toContain("<strong>localhost</strong>");
    const post = async (form: Record<string, string>) => {
      const res = await fetcher(
        new Request(`${BASE}/oauth/authorize`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", cookie: jar.header() }, body: new URLSearchParams(form).toString() }),
      );
      jar.store(res);
      return res;
    };
    const chooser = await post({ ...hiddenFields(signIn), email: user.email, password: user.password });
    const html = await chooser.text();
    expect(chooser.status).toBe(200);
    const options = [...html.matchAll(/<option value="([^"]+)">([^<]*)<\/option>/g)].map((m) => [m[1], m[2]]);
    expect(options.sort()).toEqual(
      [
        [a.id, `${a.slug} (your role: viewer)`],
        [a2.id, `${a2.slug} (your role: admin)`],
      ].sort(),
    );
    expect(html).not.toContain(b.id);
    expect(html).not.toContain(b.slug);
    const consent = await post({ ...hiddenFields(html), project: a.id });
    const consentHtml = await consent.text();
    expect(consent.status).toBe(200);
    // The project's name, as in the chooser; not the theme's display name for the public site.
    expect(consentHtml).toContain(`<h1>Allow access to ${a.slug}?</h1>`);
    expect(consentHtml).not.toContain("Brand display name");
    expect(consentHtml).toContain("your role in this project: viewer");
    expect([...consentHtml.matchAll(/name="grant_scope" value="([^"]+)"/g)].map((m) => m[1])).toEqual(["content:read", "ai:read"]);
  });

  test("consent for a project the user is not a member of is refused, whatever the form says", async () => {
    const user = await seedUser(h, "editor", [a.id, a2.id]);
    const jar = new CookieJar();
    const first = await fetcher(new Request(start(pkce().challenge)));
    jar.store(first);
    const post = async (form: URLSearchParams | Record<string, string>) => {
      const res = await fetcher(
        new Request(`${BASE}/oauth/authorize`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", cookie: jar.header() }, body: new URLSearchParams(form).toString() }),
      );
      jar.store(res);
      return res;
    };
    const chooserHtml = await (await post({ ...hiddenFields(await first.text()), email: user.email, password: user.password })).text();
    // Choosing B at the project step.
    const pick = await post({ ...hiddenFields(chooserHtml), project: b.id });
    expect(pick.status).toBe(403);
    expect(await pick.text()).toContain("You cannot connect that project");
    // A consent form for A, edited to name B and approve every scope.
    const consentHtml = await (await post({ ...hiddenFields(chooserHtml), project: a.id })).text();
    const forged = new URLSearchParams({ ...hiddenFields(consentHtml), project: b.id, action: "approve" });
    for (const s of ["content:read", "content:write", "ai:read"]) forged.append("grant_scope", s);
    const refused = await post(forged);
    expect(refused.status).toBe(403);
    expect(refused.headers.get("location")).toBeNull();
    // A project that does not exist answers the same.
    const ghost = new URLSearchParams({ ...hiddenFields(consentHtml), project: crypto.randomUUID(), action: "approve", grant_scope: "content:read" });
    expect((await post(ghost)).status).toBe(403);
    expect(await h.deps.db.select().from(oauthGrants).where(eq(oauthGrants.userId, user.id))).toHaveLength(0);
    // Through the whole flow too: the browser walk ends on the refusal, not a code.
    const walk = await authorizeInBrowser(fetcher, start(pkce().challenge), { email: user.email, password: user.password, projectId: b.id }).catch((e: Error) => e);
    expect(walk).toBeInstanceOf(Error);
    expect(String(walk)).toContain("403");
  });

  test("a user of no project is told so and can only leave", async () => {
    const user = await seedUser(h, "editor", []);
    const walk = await authorizeInBrowser(fetcher, start(pkce().challenge), { email: user.email, password: user.password, projectId: a.id }).catch((e: Error) => e);
    // The walk stops at a page with no project form: there is nothing to choose.
    expect(walk).toBeInstanceOf(Error);
    expect(String(walk)).toContain("Choose a project");
    const jar = new CookieJar();
    const first = await fetcher(new Request(start(pkce().challenge)));
    jar.store(first);
    const res = await fetcher(
      new Request(`${BASE}/oauth/authorize`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", cookie: jar.header() },
        body: new URLSearchParams({ ...hiddenFields(await first.text()), email: user.email, password: user.password }).toString(),
      }),
    );
    expect(await res.text()).toContain("not a member of any project");
  });

  test("removal from the project stops the access token at the next call and refuses refresh", async () => {
    const user = await seedUser(h, "editor", [a.id]);
    const t = await tokenFor(user, a.id);
    expect(t.scope).toBe("content:read content:write content:publish ai:read");
    expect((await createNode(t.access_token, "before-removal")).json.result.isError).toBeFalsy();
    expect((await h.request("DELETE", `/admin/p/${a.slug}/members/${user.id}`)).status).toBe(204);
    const after = await mcpRpc(fetcher, BASE, t.access_token, "tools/list", {});
    expect(after.status).toBe(401);
    expect(after.headers.get("www-authenticate")).toContain('error="invalid_token"');
    const r = await refresh(t.refresh_token);
    expect(r.status).toBe(400);
    expect(r.json.error).toBe("invalid_grant");
    // Added back: the consent's tokens work again (the grant was not withdrawn, only unusable).
    await h.request("PUT", `/admin/p/${a.slug}/members/${user.id}`, { body: { role: "editor" } });
    expect((await mcpRpc(fetcher, BASE, t.access_token, "tools/list", {})).status).toBe(200);
  });

  test("the same on every instance: removed through one, refused at once by another", async () => {
    const other = await harness(HIGH_LIMITS);
    const elsewhere: Fetcher = (r) => other.app.handle(r);
    const user = await seedUser(h, "viewer", [a.id]);
    const t = await tokenFor(user, a.id);
    expect((await mcpRpc(elsewhere, BASE, t.access_token, "tools/list", {})).status).toBe(200);
    expect((await h.request("DELETE", `/admin/p/${a.slug}/members/${user.id}`)).status).toBe(204);
    expect((await mcpRpc(elsewhere, BASE, t.access_token, "tools/list", {})).status).toBe(401);
    expect((await postForm(elsewhere, BASE, "/oauth/token", { grant_type: "refresh_token", client_id: client, refresh_token: t.refresh_token })).json.error).toBe("invalid_grant");
  });

  test("a lowered role narrows the live token at the next call and the refreshed one", async () => {
    const user = await seedUser(h, "editor", [a.id]);
    const t = await tokenFor(user, a.id);
    await h.request("PUT", `/admin/p/${a.slug}/members/${user.id}`, { body: { role: "viewer" } });
    const write = await createNode(t.access_token, `after-lowering-${crypto.randomUUID().slice(0, 6)}`);
    // The scope challenge: the role no longer holds content:write, so no step-up is offered either.
    expect(write.status).toBe(200);
    expect(write.json.result.isError).toBe(true);
    expect(write.json.result.content[0].text).toContain("content:write");
    const r = await refresh(t.refresh_token);
    expect(r.status).toBe(200);
    expect(r.json.scope).toBe("content:read ai:read");
  });

  test("a role in another project does not carry over: an admin of A2 is nothing in B", async () => {
    const user = await seedUser(h, "admin", [a2.id]);
    const t = await tokenFor(user, a2.id);
    const get = await mcpRpc(fetcher, BASE, t.access_token, "tools/call", { name: "get_node", arguments: { id: nodeB.id } });
    expect(get.json.result.isError).toBe(true);
    expect(JSON.stringify(get.json)).not.toContain("B secret draft");
  });

  test("a deleted user's tokens stop and refresh is refused", async () => {
    const user = await seedUser(h, "editor", [a.id]);
    const t = await tokenFor(user, a.id);
    expect((await h.request("DELETE", `/admin/users/${user.id}`)).status).toBe(204);
    expect((await mcpRpc(fetcher, BASE, t.access_token, "tools/list", {})).status).toBe(401);
    expect((await refresh(t.refresh_token)).json.error).toBe("invalid_grant");
  });

  test("a code issued before the removal buys no token", async () => {
    const user = await seedUser(h, "editor", [a.id]);
    const { verifier, challenge } = pkce();
    const r = await authorizeInBrowser(fetcher, start(challenge), { email: user.email, password: user.password, projectId: a.id });
    const code = new URL(r.location).searchParams.get("code")!;
    await h.request("DELETE", `/admin/p/${a.slug}/members/${user.id}`);
    const t = await postForm(fetcher, BASE, "/oauth/token", { grant_type: "authorization_code", client_id: client, code, code_verifier: verifier, redirect_uri: REDIRECT, resource: RESOURCE });
    expect(t.status).toBe(400);
    expect(t.json.error).toBe("invalid_grant");
    const [c] = await h.deps.db.select().from(oauthCodes).innerJoin(oauthGrants, eq(oauthGrants.id, oauthCodes.grantId)).where(eq(oauthGrants.userId, user.id));
    expect(c!.oauth_codes.usedAt).not.toBeNull();
  });

  test("an instance owner acts in every project; demoted to member, in none", async () => {
    const owner = await seedUser(h, "owner");
    const spare = await seedUser(h, "owner");
    const t = await tokenFor(owner, b.id);
    expect((await mcpRpc(fetcher, BASE, t.access_token, "tools/call", { name: "get_node", arguments: { id: nodeB.id } })).json.result.isError).toBeFalsy();
    expect((await h.request("PATCH", `/admin/users/${owner.id}`, { body: { role: "member" } })).status).toBe(200);
    expect((await mcpRpc(fetcher, BASE, t.access_token, "tools/list", {})).status).toBe(401);
    expect((await refresh(t.refresh_token)).json.error).toBe("invalid_grant");
    await h.request("DELETE", `/admin/users/${spare.id}`);
  });
});

test("docs/admin-api.md's access table says what each role grants through OAuth, as the code does", async () => {
  const { MCP_SCOPES, ROLE_SCOPES } = await import("../src/lib/scopes");
  const readme = await Bun.file(new URL("../docs/admin-api.md", import.meta.url)).text();
  const rows = new Map(
    [...readme.matchAll(/^\| (owner \(user\)|project admin \(member\)|editor \(member\)|viewer \(member\)) \| [^|]+ \| through OAuth: `([^`]+)`(.*)\|$/gm)].map((m) => [
      m[1],
      { scopes: m[2], rest: m[3] },
    ]),
  );
  const viaOAuth = (role: keyof typeof ROLE_SCOPES) => MCP_SCOPES.filter((s) => ROLE_SCOPES[role].includes(s)).join(" ");
  expect(rows.get("owner (user)")?.scopes).toBe(viaOAuth("owner"));
  expect(rows.get("project admin (member)")?.scopes).toBe(viaOAuth("admin"));
  expect(rows.get("editor (member)")?.scopes).toBe(viaOAuth("editor"));
  expect(rows.get("viewer (member)")?.scopes).toBe(viaOAuth("viewer"));
  // What the admin role holds beyond an editor, named in its row.
  for (const s of ROLE_SCOPES.admin.filter((s) => !ROLE_SCOPES.editor.includes(s))) expect(rows.get("project admin (member)")?.rest).toContain(`\`${s}\``);
});
