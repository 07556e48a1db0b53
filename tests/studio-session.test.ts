// The studio's session (issue 38): sign-in with the password check and the sign-in limiter, a
// cookie holding a random id stored hashed, idle and absolute ends, sign-out, a person's sessions;
// the admin API taking the session only with X-CMS-Studio: 1 and same-origin, a person's role read
// on every request; never on /mcp, the OAuth token endpoint or with credentialed CORS.
import { describe, expect, test } from "bun:test";
import { and, desc, eq } from "drizzle-orm";
import { nodes, projectMembers, revisions, studioSessions } from "../db/schema";
import { hashToken } from "../src/lib/tokens";
import { BASE, harness, readReply, seedNode, seedProject, type TestHarness } from "./helpers";
import { seedUser } from "./oauth.helpers";

const STUDIO = { "x-cms-studio": "1", "sec-fetch-site": "same-origin" };

async function signIn(h: TestHarness, email: string, password: string, headers: Record<string, string> = STUDIO) {
  return h.request("POST", "/studio/api/session", { key: null, body: { email, password }, headers });
}

/** A signed-in person: the cookie pair to send, and a request helper sending it (with the studio headers unless told otherwise). */
async function person(h: TestHarness, email: string, password: string) {
  const res = await signIn(h, email, password);
  expect(res.status).toBe(200);
  const setCookie = res.headers.get("set-cookie") ?? "";
  const pair = setCookie.split(";")[0] ?? "";
  const send = (method: string, path: string, opts: { body?: unknown; headers?: Record<string, string> } = {}) =>
    h.request(method, path, { key: null, body: opts.body, headers: { cookie: pair, ...(opts.headers ?? STUDIO) } });
  return { pair, secret: pair.split("=")[1] ?? "", session: res.json.data.session, send };
}

describe("studio sessions", async () => {
  const h = await harness({ OAUTH_SIGNIN_RATE_LIMIT: "1000000" });
  const db = h.deps.db;
  const p = await seedProject(h);
  const other = await seedProject(h);
  const editor = await seedUser(h, "editor", [p.id]);
  const viewer = await seedUser(h, "viewer", [p.id]);

  test("sign-in: a cookie holding a random id stored hashed, HttpOnly, SameSite=Strict, Path=/; the same 401 for an unknown email and a wrong password", async () => {
    const wrong = await signIn(h, editor.email, "not-the-password");
    const unknown = await signIn(h, "nobody@example.com", "whatever-password");
    for (const r of [wrong, unknown]) {
      expect(r.status).toBe(401);
      expect(r.json.error).toEqual({ code: "unauthorized", message: "wrong email or password" });
      expect(r.headers.get("set-cookie")).toBeNull();
    }
    const ok = await signIn(h, editor.email, editor.password);
    expect(ok.status).toBe(200);
    expect(ok.json.data.user).toEqual({ id: editor.id, email: editor.email, role: "member" });
    const cookie = ok.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(/^cms_studio=[a-z2-7]{32}; Path=\/; Max-Age=604800; HttpOnly; SameSite=Strict$/);
    const secret = cookie.split(";")[0]?.split("=")[1] ?? "";
    const [row] = await db.select().from(studioSessions).where(eq(studioSessions.id, ok.json.data.session.id));
    expect(row?.tokenHash).toBe(hashToken(secret));
    expect(row?.tokenHash).not.toContain(secret);
    expect(JSON.stringify(ok.json)).not.toContain(secret);
    expect(h.logs.join("\n")).not.toContain(secret);
    expect(h.logs.join("\n")).not.toContain(editor.password);
    // Who is signed in: the same person and session, its times as stored.
    const who = await h.request("GET", "/studio/api/session", { key: null, headers: { cookie: cookie.split(";")[0] ?? "", ...STUDIO } });
    expect(who.status).toBe(200);
    expect(who.json.data).toEqual({ user: ok.json.data.user, session: { id: row?.id, created_at: row?.createdAt.toISOString(), expires_at: row?.expiresAt.toISOString() } });
  });

  test("over https the cookie is __Host-cms_studio and Secure", async () => {
    const s = await harness({ PUBLIC_URL: "https://cms.example.com", OAUTH_SIGNIN_RATE_LIMIT: "1000000" });
    const r = await s.request("POST", "/studio/api/session", { key: null, body: { email: editor.email, password: editor.password }, headers: STUDIO });
    expect(r.status).toBe(200);
    expect(r.headers.get("set-cookie")).toMatch(/^__Host-cms_studio=[a-z2-7]{32}; Path=\/; Max-Age=604800; HttpOnly; SameSite=Strict; Secure$/);
  });

  test("sign-in itself needs the header and this origin (no login CSRF)", async () => {
    const refusals: Array<Record<string, string>> = [{}, { "x-cms-studio": "1", "sec-fetch-site": "cross-site" }, { "x-cms-studio": "1", origin: "https://evil.example" }];
    for (const headers of refusals) {
      const r = await signIn(h, editor.email, editor.password, headers);
      expect(r.status).toBe(403);
      expect(r.json.error.code).toBe("forbidden");
      expect(r.headers.get("set-cookie")).toBeNull();
    }
    // No Sec-Fetch-Site (an older browser): Origin must be PUBLIC_URL's.
    expect((await signIn(h, editor.email, editor.password, { "x-cms-studio": "1", origin: BASE })).status).toBe(200);
  });

  test("the sign-in limiter: attempts per address, 429 with Retry-After", async () => {
    const s = await harness({ OAUTH_SIGNIN_RATE_LIMIT: "2", TRUST_PROXY: "true" });
    // An address of this run alone: the limiter's counts live in the database, shared by every app.
    const headers = { ...STUDIO, "x-forwarded-for": `203.0.113.${Math.floor(Math.random() * 250) + 1}, 198.51.100.${Date.now() % 250}` };
    const attempt = () => s.request("POST", "/studio/api/session", { key: null, body: { email: editor.email, password: "wrong-password" }, headers });
    const statuses = [(await attempt()).status, (await attempt()).status];
    const third = await attempt();
    expect(statuses).toEqual([401, 401]);
    expect(third.status).toBe(429);
    expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(0);
    // Even the right password is refused while limited.
    expect((await s.request("POST", "/studio/api/session", { key: null, body: { email: editor.email, password: editor.password }, headers })).status).toBe(429);
  });

  test("the admin API takes the session: a person's projects, reads and writes recorded as the person with the client studio", async () => {
    const me = await person(h, editor.email, editor.password);
    const list = await me.send("GET", "/admin/projects");
    expect(list.status).toBe(200);
    expect(list.json.data.map((x: { id: string }) => x.id)).toEqual([p.id]);
    expect((await me.send("GET", `/admin/p/${other.slug}/nodes`)).status).toBe(404);
    const node = await seedNode(h, p.slug, { slug: "about", title: "About" });
    const patched = await me.send("PATCH", `/admin/p/${p.slug}/nodes/${node.id}`, { body: { title: "About us" }, headers: { ...STUDIO, "if-match": `"r${node.revision}"` } });
    expect(patched.status).toBe(200);
    expect(patched.json.data.title).toBe("About us");
    const [rev] = await db.select().from(revisions).where(eq(revisions.nodeId, node.id)).orderBy(desc(revisions.number)).limit(1);
    expect(rev?.actor).toEqual({ kind: "user", id: editor.id, name: editor.email, user: { id: editor.id, email: editor.email }, client: { id: "studio", name: "studio" } });
    const log = await h.request("GET", `/admin/p/${p.slug}/activity?node_id=${node.id}`);
    expect(log.status).toBe(200);
    const entry = log.json.data.find((e: { operation: string }) => e.operation === "update_node");
    expect(entry.actor).toMatchObject({ kind: "user", id: editor.id, user: { id: editor.id, email: editor.email }, client: { id: "studio", name: "studio" } });
    const role = await me.send("GET", `/studio/api/p/${p.slug}/me`);
    expect(role.json.data).toMatchObject({ project_id: p.id, role: "editor" });
    expect(role.json.data.scopes).toContain("content:publish");
    expect((await me.send("GET", `/studio/api/p/${other.slug}/me`)).status).toBe(404);
  });

  test("a route without a project (a provider by id): the person's right counts only in the projects whose role grants it", async () => {
    const admin = await seedUser(h, "admin", [p.id]);
    await h.deps.db.insert(projectMembers).values({ projectId: other.id, userId: admin.id, role: "viewer" });
    const mine = await h.request("POST", `/admin/p/${p.slug}/ai/providers`, { body: { name: "Mine", kind: "openai", api_key: "sk-mine-1234567890" } });
    const theirs = await h.request("POST", `/admin/p/${other.slug}/ai/providers`, { body: { name: "Theirs", kind: "openai", api_key: "sk-theirs-1234567890" } });
    expect([mine.status, theirs.status]).toEqual([201, 201]);
    const me = await person(h, admin.email, admin.password);
    const read = await me.send("GET", `/admin/ai/providers/${mine.json.data.id}`);
    expect(read.status).toBe(200);
    expect(read.json.data.name).toBe("Mine");
    // A viewer in the other project: its provider is not there for this person.
    expect((await me.send("GET", `/admin/ai/providers/${theirs.json.data.id}`)).status).toBe(404);
    expect((await me.send("PATCH", `/admin/ai/providers/${theirs.json.data.id}`, { body: { name: "Taken" } })).status).toBe(404);
    // An editor holds no ai:write anywhere: refused before any lookup.
    const ed = await person(h, editor.email, editor.password);
    expect((await ed.send("GET", `/admin/ai/providers/${mine.json.data.id}`)).status).toBe(403);
    // Instance-wide routes stay an owner's (or a key's): a member without users:write is refused.
    expect((await me.send("GET", "/admin/users")).status).toBe(403);
  });

  test("a person hands out only rights their role holds: MCP tokens and members' roles", async () => {
    const admin = await seedUser(h, "admin", [p.id]);
    const member = await seedUser(h, "viewer", [p.id]);
    const me = await person(h, admin.email, admin.password);
    const token = await me.send("POST", `/admin/p/${p.slug}/ai/mcp/tokens`, { body: { name: "from the studio", scopes: ["content:read", "content:write"] } });
    expect(token.status).toBe(201);
    expect(token.json.data.token).toMatch(/^cms_mcp_/);
    expect((await me.send("PUT", `/admin/p/${p.slug}/members/${member.id}`, { body: { role: "editor" } })).status).toBe(200);
    // An editor holds no ai:write or keys:write: both refused, nothing written.
    const ed = await person(h, editor.email, editor.password);
    expect((await ed.send("POST", `/admin/p/${p.slug}/ai/mcp/tokens`, { body: { name: "nope", scopes: ["content:read"] } })).status).toBe(403);
    expect((await ed.send("PUT", `/admin/p/${p.slug}/members/${member.id}`, { body: { role: "admin" } })).status).toBe(403);
    const [row] = await db
      .select()
      .from(projectMembers)
      .where(and(eq(projectMembers.userId, member.id), eq(projectMembers.projectId, p.id)));
    expect(row?.role).toBe("editor");
    // A stranger to the project is not there for a project's admin (no adding people they cannot see).
    const stranger = await seedUser(h, "viewer", [other.id]);
    expect((await me.send("PUT", `/admin/p/${p.slug}/members/${stranger.id}`, { body: { role: "viewer" } })).status).toBe(404);
    expect((await me.send("POST", `/admin/p/${p.slug}/members`, { body: { email: stranger.email, role: "viewer" } })).status).toBe(404);
    // An admin of the other project too reaches its people: adds the stranger by email.
    await db.insert(projectMembers).values({ projectId: other.id, userId: admin.id, role: "admin" });
    const added = await me.send("POST", `/admin/p/${p.slug}/members`, { body: { email: stranger.email.toUpperCase(), role: "viewer" } });
    expect([added.status, added.json.data?.user_id]).toEqual([201, stranger.id]);
    // An owner adds anyone with an account, in any project.
    const owner = await seedUser(h, "owner", []);
    const boss = await person(h, owner.email, owner.password);
    const nobody = await seedUser(h, "viewer", []);
    const byOwner = await boss.send("POST", `/admin/p/${p.slug}/members`, { body: { email: nobody.email, role: "editor" } });
    expect([byOwner.status, byOwner.json.data?.role]).toEqual([201, "editor"]);
    const rows = await db.select().from(projectMembers).where(eq(projectMembers.projectId, p.id));
    expect(
      rows
        .filter((r) => [stranger.id, nobody.id].includes(r.userId))
        .map((r) => r.role)
        .sort(),
    ).toEqual(["editor", "viewer"]);
  });

  test("refused and nothing written: a cookie without the header, from another site, or a write from another origin", async () => {
    const me = await person(h, editor.email, editor.password);
    const node = await seedNode(h, p.slug, { slug: `csrf-${Date.now()}`, title: "Before" });
    const cases: Array<Record<string, string>> = [
      {}, // the cookie alone
      { "x-cms-studio": "0", "sec-fetch-site": "same-origin" },
      { "x-cms-studio": "1", "sec-fetch-site": "cross-site" },
      { "x-cms-studio": "1", "sec-fetch-site": "same-site" },
      { "x-cms-studio": "1", origin: "https://evil.example" }, // no Sec-Fetch-Site: Origin decides
      { "x-cms-studio": "1" }, // a write with neither
    ];
    for (const headers of cases) {
      const r = await me.send("PATCH", `/admin/p/${p.slug}/nodes/${node.id}`, { body: { title: "Changed" }, headers });
      expect(r.status).toBe(403);
      expect(r.json.error.code).toBe("forbidden");
    }
    // Reads from another site are refused too; a read without Sec-Fetch-Site (a non-browser client) with the header is not.
    expect((await me.send("GET", `/admin/p/${p.slug}/nodes/${node.id}`, { headers: { "x-cms-studio": "1", "sec-fetch-site": "cross-site" } })).status).toBe(403);
    expect((await me.send("GET", `/admin/p/${p.slug}/nodes/${node.id}`, { headers: { "x-cms-studio": "1" } })).status).toBe(200);
    const [row] = await db.select().from(nodes).where(eq(nodes.id, node.id));
    expect(row?.title).toBe("Before");
    expect(row?.revision).toBe(node.revision);
  });

  test("a viewer reads and cannot write; demotion and removal take effect on the next request", async () => {
    const v = await person(h, viewer.email, viewer.password);
    const node = await seedNode(h, p.slug, { slug: `roles-${Date.now()}`, title: "Roles" });
    expect((await v.send("GET", `/admin/p/${p.slug}/nodes/${node.id}`)).status).toBe(200);
    const refused = await v.send("PATCH", `/admin/p/${p.slug}/nodes/${node.id}`, { body: { title: "By a viewer" } });
    expect(refused.status).toBe(403);
    expect(refused.json.error.code).toBe("insufficient_scope");
    const e2 = await seedUser(h, "editor", [p.id]);
    const ed = await person(h, e2.email, e2.password);
    expect((await ed.send("PATCH", `/admin/p/${p.slug}/nodes/${node.id}`, { body: { title: "By an editor" } })).status).toBe(200);
    await db
      .update(projectMembers)
      .set({ role: "viewer" })
      .where(and(eq(projectMembers.userId, e2.id), eq(projectMembers.projectId, p.id)));
    const demoted = await ed.send("PATCH", `/admin/p/${p.slug}/nodes/${node.id}`, { body: { title: "After demotion" } });
    expect(demoted.status).toBe(403);
    expect(demoted.json.error.code).toBe("insufficient_scope");
    await db.delete(projectMembers).where(eq(projectMembers.userId, e2.id));
    expect((await ed.send("GET", `/admin/p/${p.slug}/nodes/${node.id}`)).status).toBe(404);
    expect((await ed.send("GET", "/admin/projects")).json.data).toEqual([]);
    const [row] = await db.select().from(nodes).where(eq(nodes.id, node.id));
    expect(row?.title).toBe("By an editor");
  });

  test("never on /mcp, the OAuth token endpoint, or with credentialed CORS", async () => {
    const me = await person(h, editor.email, editor.password);
    const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } };
    const mcp = await readReply(
      await h.app.handle(
        new Request(`${BASE}/mcp`, {
          method: "POST",
          headers: { cookie: me.pair, ...STUDIO, "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: JSON.stringify(init),
        }),
      ),
    );
    expect(mcp.status).toBe(401);
    const token = await readReply(
      await h.app.handle(
        new Request(`${BASE}/oauth/token`, {
          method: "POST",
          headers: { cookie: me.pair, ...STUDIO, "content-type": "application/x-www-form-urlencoded" },
          body: "grant_type=client_credentials",
        }),
      ),
    );
    expect(token.status).toBeGreaterThanOrEqual(400);
    expect(token.status).toBeLessThan(500);
    expect(token.text).not.toContain("access_token");
    const preflight = await h.app.handle(
      new Request(`${BASE}/admin/projects`, { method: "OPTIONS", headers: { origin: BASE, "access-control-request-method": "GET", "access-control-request-headers": "x-cms-studio" } }),
    );
    expect(preflight.headers.get("access-control-allow-credentials")).toBeNull();
    const evil = await h.app.handle(new Request(`${BASE}/admin/projects`, { method: "OPTIONS", headers: { origin: "https://evil.example", "access-control-request-method": "GET" } }));
    expect(evil.headers.get("access-control-allow-origin")).toBeNull();
    expect(evil.headers.get("access-control-allow-credentials")).toBeNull();
  });

  test("sign-out ends the session on the server; a person lists their sessions and ends one, not another person's", async () => {
    const a = await person(h, editor.email, editor.password);
    const b = await person(h, editor.email, editor.password);
    const mine = await a.send("GET", "/studio/api/sessions");
    expect(mine.status).toBe(200);
    const ids = mine.json.data.map((s: { id: string }) => s.id);
    expect(ids).toContain(a.session.id);
    expect(ids).toContain(b.session.id);
    expect(mine.json.data.find((s: { id: string }) => s.id === a.session.id).current).toBe(true);
    const v = await person(h, viewer.email, viewer.password);
    expect((await v.send("DELETE", `/studio/api/sessions/${b.session.id}`)).status).toBe(404);
    expect((await b.send("GET", "/studio/api/session")).status).toBe(200);
    expect((await a.send("DELETE", `/studio/api/sessions/${b.session.id}`)).status).toBe(204);
    expect((await b.send("GET", "/studio/api/session")).status).toBe(401);
    expect((await b.send("GET", "/admin/projects")).status).toBe(401);
    const out = await a.send("DELETE", "/studio/api/session");
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toMatch(/^cms_studio=; Path=\/; Max-Age=0/);
    expect(await db.select().from(studioSessions).where(eq(studioSessions.id, a.session.id))).toEqual([]);
    expect((await a.send("GET", "/admin/projects")).status).toBe(401);
  });

  test("a new password ends the person's sessions; a deleted user's sessions go with them", async () => {
    const u = await seedUser(h, "editor", [p.id]);
    const a = await person(h, u.email, u.password);
    const other = await person(h, editor.email, editor.password);
    const changed = await h.request("PATCH", `/admin/users/${u.id}`, { body: { password: "a-brand-new-password" } });
    expect(changed.status).toBe(200);
    expect((await a.send("GET", "/studio/api/session")).status).toBe(401);
    expect((await other.send("GET", "/studio/api/session")).status).toBe(200);
    const b = await person(h, u.email, "a-brand-new-password");
    expect((await h.request("DELETE", `/admin/users/${u.id}`)).status).toBe(204);
    expect((await b.send("GET", "/admin/projects")).status).toBe(401);
    expect(await db.select().from(studioSessions).where(eq(studioSessions.userId, u.id))).toEqual([]);
  });

  test("an idle session ends after the idle timeout, a busy one at its absolute end", async () => {
    let now = Date.now();
    const s = await harness({ OAUTH_SIGNIN_RATE_LIMIT: "1000000", STUDIO_SESSION_IDLE_TIMEOUT: "3600", STUDIO_SESSION_MAX_AGE: "10800" }, { now: () => new Date(now) });
    const idle = await person(s, editor.email, editor.password);
    now += 3_500_000;
    expect((await idle.send("GET", "/studio/api/session")).status).toBe(200); // used: idle time starts again
    now += 3_500_000;
    expect((await idle.send("GET", "/studio/api/session")).status).toBe(200);
    now += 3_700_000;
    expect((await idle.send("GET", "/studio/api/session")).status).toBe(401);
    const busy = await person(s, editor.email, editor.password);
    for (let i = 0; i < 4; i++) {
      now += 2_400_000;
      expect((await busy.send("GET", "/admin/projects")).status).toBe(200);
    }
    now += 1_200_000; // 3 h 20 min after sign-in
    expect((await busy.send("GET", "/admin/projects")).status).toBe(401);
  });
});
