// Issue 13: users and project members through the admin API; the last owner; passwords.
import { afterAll, describe, expect, test } from "bun:test";
import { and, eq, sql } from "drizzle-orm";
import { oauthClients, oauthGrants, projectMembers, users } from "../db/schema";
import { ROLE_SCOPES } from "../src/lib/scopes";
import { verifyUser } from "../src/users/service";
import { freshDatabase, HIGH_LIMITS, harness, keyWith, seedProject } from "./helpers";
import { authorizeUrl, CookieJar, hiddenFields, pkce } from "./oauth.helpers";

const email = (tag: string): string => `${tag}-${crypto.randomUUID().slice(0, 8)}@example.com`;
const PASSWORD = "a-long-enough-password";

describe("admin API: users", async () => {
  const h = await harness(HIGH_LIMITS);

  test("the OpenAPI document lists every new route with its schemas", async () => {
    const spec = (await h.request("GET", "/swagger/json", { key: null })).json;
    const ops: [string, string][] = [
      ["/admin/users", "get"],
      ["/admin/users", "post"],
      ["/admin/users/{id}", "get"],
      ["/admin/users/{id}", "patch"],
      ["/admin/users/{id}", "delete"],
      ["/admin/p/{ref}/members", "get"],
      ["/admin/p/{ref}/members/{userId}", "put"],
      ["/admin/p/{ref}/members/{userId}", "delete"],
    ];
    for (const [path, method] of ops) {
      const op = spec.paths[path]?.[method];
      expect({ path, method, documented: !!op }).toEqual({ path, method, documented: true });
      expect(op.security).toEqual([{ bearerAuth: [] }]);
      expect(Object.keys(op.responses)).toContain("403");
    }
    const user = spec.paths["/admin/users/{id}"].get.responses["200"].content["application/json"].schema;
    expect(JSON.stringify(user)).toContain("memberships");
    expect(JSON.stringify(user)).not.toContain("password");
    const create = spec.paths["/admin/users"].post.requestBody.content["application/json"].schema;
    expect(create.properties.password.minLength).toBe(12);
    const put = spec.paths["/admin/p/{ref}/members/{userId}"].put.requestBody.content["application/json"].schema;
    expect(JSON.stringify(put.properties.role)).toContain("admin");
  });

  test("create, read, list, update, delete; the hash is never answered", async () => {
    const e = email("crud");
    const created = await h.request("POST", "/admin/users", { body: { email: e.toUpperCase(), password: PASSWORD } });
    expect(created.status).toBe(201);
    expect(created.json.data).toMatchObject({ email: e, role: "member", memberships: [] });
    const id = created.json.data.id;
    const [row] = await h.deps.db.select().from(users).where(eq(users.id, id));
    expect(row!.passwordHash).toStartWith("$argon2id$");
    expect(created.text).not.toContain("argon2");
    expect(created.text).not.toContain(PASSWORD);

    const one = await h.request("GET", `/admin/users/${id}`);
    expect(one.status).toBe(200);
    expect(one.json.data.email).toBe(e);
    const list = await h.request("GET", "/admin/users");
    expect(list.status).toBe(200);
    expect(list.json.data.some((u: { id: string }) => u.id === id)).toBe(true);
    expect(list.text).not.toContain("argon2");

    // Another owner, so that demoting or deleting this one never meets the last-owner rule here.
    await h.request("POST", "/admin/users", { body: { email: email("spare-owner"), password: PASSWORD, role: "owner" } });
    const e2 = email("renamed");
    const patched = await h.request("PATCH", `/admin/users/${id}`, { body: { email: e2, password: "another-long-password", role: "owner" } });
    expect(patched.status).toBe(200);
    expect(patched.json.data).toMatchObject({ id, email: e2, role: "owner" });
    expect(patched.text).not.toContain("argon2");
    expect(await verifyUser(h.deps.db, e2, "another-long-password")).not.toBeNull();
    expect(await verifyUser(h.deps.db, e2, PASSWORD)).toBeNull();

    expect((await h.request("DELETE", `/admin/users/${id}`)).status).toBe(204);
    expect((await h.request("GET", `/admin/users/${id}`)).status).toBe(404);
    expect((await h.request("DELETE", `/admin/users/${id}`)).status).toBe(404);
    expect(await h.deps.db.select().from(users).where(eq(users.id, id))).toHaveLength(0);
  });

  test("bad input: short password, bad email, unknown role, duplicate email; nothing written", async () => {
    const e = email("bad");
    const short = await h.request("POST", "/admin/users", { body: { email: e, password: "elevenchars" } });
    expect(short.status).toBe(400);
    expect(short.json.error.code).toBe("invalid_request");
    expect((await h.request("POST", "/admin/users", { body: { email: "not-an-email", password: PASSWORD } })).json.error.code).toBe("invalid_request");
    expect((await h.request("POST", "/admin/users", { body: { email: e, password: PASSWORD, role: "editor" } })).status).toBe(400);
    expect(await h.deps.db.select().from(users).where(eq(users.email, e))).toHaveLength(0);
    const ok = await h.request("POST", "/admin/users", { body: { email: e, password: PASSWORD } });
    expect(ok.status).toBe(201);
    const dup = await h.request("POST", "/admin/users", { body: { email: e, password: PASSWORD } });
    expect(dup.status).toBe(409);
    expect(dup.json.error.code).toBe("conflict");
    const other = (await h.request("POST", "/admin/users", { body: { email: email("other"), password: PASSWORD } })).json.data.id;
    expect((await h.request("PATCH", `/admin/users/${other}`, { body: { email: e } })).status).toBe(409);
    expect((await h.request("PATCH", `/admin/users/${other}`, { body: { password: "short" } })).status).toBe(400);
    expect((await h.request("GET", "/admin/users/not-a-uuid")).status).toBe(400);
  });

  test("users:write is required; a project-limited key sees only its projects' members and cannot write users", async () => {
    const a = await seedProject(h);
    const b = await seedProject(h);
    const inA = (await h.request("POST", "/admin/users", { body: { email: email("in-a"), password: PASSWORD } })).json.data;
    const inB = (await h.request("POST", "/admin/users", { body: { email: email("in-b"), password: PASSWORD } })).json.data;
    expect((await h.request("PUT", `/admin/p/${a.slug}/members/${inA.id}`, { body: { role: "editor" } })).status).toBe(200);
    expect((await h.request("PUT", `/admin/p/${b.slug}/members/${inB.id}`, { body: { role: "viewer" } })).status).toBe(200);
    expect((await h.request("PUT", `/admin/p/${b.slug}/members/${inA.id}`, { body: { role: "admin" } })).status).toBe(200);

    const noScope = await keyWith(h, ["projects:read", "projects:write", "content:read", "content:write", "content:publish", "ai:read", "ai:write", "keys:write", "model:write", "webhooks:write"]);
    const denied = await h.request("GET", "/admin/users", { key: noScope });
    expect(denied.status).toBe(403);
    expect(denied.json.error.details.required).toBe("users:write");
    expect((await h.request("POST", "/admin/users", { key: noScope, body: { email: email("x"), password: PASSWORD } })).status).toBe(403);

    const limited = await keyWith(h, ["users:write", "keys:write", "content:read", "content:write", "projects:read", "ai:read"], [a.id]);
    const list = await h.request("GET", "/admin/users", { key: limited });
    expect(list.status).toBe(200);
    expect(list.json.data.map((u: { id: string }) => u.id)).toEqual([inA.id]);
    // A's member, but only A's membership is shown: B is not the key's business.
    expect(list.json.data[0].memberships).toEqual([{ project_id: a.id, role: "editor" }]);
    expect(list.text).not.toContain(b.id);
    expect((await h.request("GET", `/admin/users/${inB.id}`, { key: limited })).status).toBe(404);
    expect((await h.request("PATCH", `/admin/users/${inB.id}`, { key: limited, body: { role: "owner" } })).status).toBe(404);
    expect((await h.request("DELETE", `/admin/users/${inB.id}`, { key: limited })).status).toBe(404);
    // A user of its own project is visible, but users are instance-wide: writing them needs an unlimited key.
    expect((await h.request("PATCH", `/admin/users/${inA.id}`, { key: limited, body: { role: "owner" } })).status).toBe(403);
    expect((await h.request("POST", "/admin/users", { key: limited, body: { email: email("y"), password: PASSWORD } })).status).toBe(403);
    const [still] = await h.deps.db.select().from(users).where(eq(users.id, inA.id));
    expect(still!.role).toBe("member");
  });
});

describe("admin API: members", async () => {
  const h = await harness(HIGH_LIMITS);
  const a = await seedProject(h);
  const b = await seedProject(h);
  const newUser = async (tag: string): Promise<string> => (await h.request("POST", "/admin/users", { body: { email: email(tag), password: PASSWORD } })).json.data.id;

  test("put adds or changes, get lists, delete removes; database follows", async () => {
    const u = await newUser("member");
    const put = await h.request("PUT", `/admin/p/${a.slug}/members/${u}`, { body: { role: "viewer" } });
    expect(put.status).toBe(200);
    expect(put.json.data).toMatchObject({ user_id: u, role: "viewer" });
    expect((await h.request("PUT", `/admin/p/${a.id}/members/${u}`, { body: { role: "admin" } })).json.data.role).toBe("admin");
    const rows = await h.deps.db.select().from(projectMembers).where(eq(projectMembers.userId, u));
    expect(rows.map((r) => [r.projectId, r.role])).toEqual([[a.id, "admin"]]);
    const list = await h.request("GET", `/admin/p/${a.slug}/members`);
    expect(list.status).toBe(200);
    expect(list.json.data.filter((m: { user_id: string }) => m.user_id === u)).toHaveLength(1);
    expect((await h.request("GET", `/admin/p/${b.slug}/members`)).json.data.some((m: { user_id: string }) => m.user_id === u)).toBe(false);
    expect((await h.request("DELETE", `/admin/p/${a.slug}/members/${u}`)).status).toBe(204);
    expect((await h.request("DELETE", `/admin/p/${a.slug}/members/${u}`)).status).toBe(404);
    expect(await h.deps.db.select().from(projectMembers).where(eq(projectMembers.userId, u))).toHaveLength(0);
  });

  test("bad input: unknown role 400, unknown user 404, unknown project 404; nothing written", async () => {
    const u = await newUser("bad-member");
    const bad = await h.request("PUT", `/admin/p/${a.slug}/members/${u}`, { body: { role: "owner" } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe("invalid_request");
    expect((await h.request("PUT", `/admin/p/${a.slug}/members/${u}`, { body: {} })).status).toBe(400);
    const ghost = await h.request("PUT", `/admin/p/${a.slug}/members/${crypto.randomUUID()}`, { body: { role: "viewer" } });
    expect(ghost.status).toBe(404);
    expect(ghost.json.error.code).toBe("not_found");
    expect((await h.request("PUT", `/admin/p/${crypto.randomUUID()}/members/${u}`, { body: { role: "viewer" } })).status).toBe(404);
    expect(await h.deps.db.select().from(projectMembers).where(eq(projectMembers.userId, u))).toHaveLength(0);
  });

  test("keys:write on the project suffices; another project's members are 404; a key grants no role beyond its own scopes", async () => {
    const u = await newUser("managed");
    // A project-limited key manages people already in its projects (strangers: see the next test).
    expect((await h.request("PUT", `/admin/p/${a.slug}/members/${u}`, { body: { role: "viewer" } })).status).toBe(200);
    const keyA = await keyWith(h, ["keys:write", "projects:read", "content:read", "content:write", "content:publish", "ai:read", "media:write"], [a.id]);
    expect((await h.request("PUT", `/admin/p/${a.slug}/members/${u}`, { key: keyA, body: { role: "editor" } })).status).toBe(200);
    expect((await h.request("GET", `/admin/p/${a.slug}/members`, { key: keyA })).status).toBe(200);
    for (const [method, path, body] of [
      ["GET", `/admin/p/${b.slug}/members`, undefined],
      ["PUT", `/admin/p/${b.slug}/members/${u}`, { role: "viewer" }],
      ["DELETE", `/admin/p/${b.slug}/members/${u}`, undefined],
    ] as const) {
      const r = await h.request(method, path, { key: keyA, body });
      expect({ method, path, status: r.status }).toEqual({ method, path, status: 404 });
    }
    // admin carries ai:write and keys:write: a key without ai:write cannot hand it out.
    const up = await h.request("PUT", `/admin/p/${a.slug}/members/${u}`, { key: keyA, body: { role: "admin" } });
    expect(up.status).toBe(403);
    expect(up.json.error.details.required).toBe("ai:write");
    const [m] = await h.deps.db
      .select()
      .from(projectMembers)
      .where(and(eq(projectMembers.userId, u), eq(projectMembers.projectId, a.id)));
    expect(m!.role).toBe("editor");
    // Neither keys:write nor users:write: 403 naming both.
    const reader = await keyWith(h, ["projects:read", "content:read"], [a.id]);
    const r = await h.request("GET", `/admin/p/${a.slug}/members`, { key: reader });
    expect(r.status).toBe(403);
    expect(r.json.error.details.required).toEqual(["keys:write", "users:write"]);
    expect(r.headers.get("www-authenticate")).toBe('Bearer realm="admin", error="insufficient_scope"');
    // users:write reaches members of any project, but hands out no role whose scopes it lacks:
    // the member would otherwise get through OAuth what the key cannot do itself.
    const usersOnly = await keyWith(h, ["users:write"]);
    const refused = await h.request("PUT", `/admin/p/${b.slug}/members/${u}`, { key: usersOnly, body: { role: "admin" } });
    expect(refused.status).toBe(403);
    expect(refused.json.error.message).toContain("cannot make a member admin");
    expect(
      await h.deps.db
        .select()
        .from(projectMembers)
        .where(and(eq(projectMembers.userId, u), eq(projectMembers.projectId, b.id))),
    ).toHaveLength(0);
    // users:write with every scope of the admin role.
    const userAdmin = await keyWith(h, ["users:write", ...ROLE_SCOPES.admin]);
    expect((await h.request("PUT", `/admin/p/${b.slug}/members/${u}`, { key: userAdmin, body: { role: "admin" } })).status).toBe(200);
  });
});

describe("members: a project-limited key learns nothing about people outside its projects", async () => {
  const h = await harness(HIGH_LIMITS);
  const a = await seedProject(h);
  const b = await seedProject(h);
  const c = await seedProject(h);
  const newUser = async (tag: string): Promise<{ id: string; email: string }> => (await h.request("POST", "/admin/users", { body: { email: email(tag), password: PASSWORD } })).json.data;
  const membersOf = async (userId: string) => (await h.deps.db.select().from(projectMembers).where(eq(projectMembers.userId, userId))).map((m) => [m.projectId, m.role]);

  test("adding an existing outsider answers exactly as a made-up id; a root key or an unlimited users:write key still adds", async () => {
    const inB = await newUser("in-b");
    expect((await h.request("PUT", `/admin/p/${b.slug}/members/${inB.id}`, { body: { role: "viewer" } })).status).toBe(200);
    const nowhere = await newUser("nowhere");
    const owner = (await h.request("POST", "/admin/users", { body: { email: email("owner"), password: PASSWORD, role: "owner" } })).json.data;
    const scopes = ["keys:write", "projects:read", "content:read", "content:write", "content:publish", "ai:read", "media:write"];
    // keys:write limited to A; and a limited key holding users:write and every scope: neither reaches outside.
    const keys = [await keyWith(h, scopes, [a.id]), await keyWith(h, [...scopes, "users:write", "ai:write", "projects:write", "model:write", "webhooks:write"], [a.id])];
    for (const key of keys) {
      const ghost = await h.request("PUT", `/admin/p/${a.slug}/members/${crypto.randomUUID()}`, { key, body: { role: "viewer" } });
      expect(ghost.status).toBe(404);
      for (const target of [inB, nowhere, owner]) {
        const r = await h.request("PUT", `/admin/p/${a.slug}/members/${target.id}`, { key, body: { role: "viewer" } });
        expect({ status: r.status, body: r.json, type: r.headers.get("content-type") }).toEqual({ status: 404, body: ghost.json, type: ghost.headers.get("content-type") });
        expect(r.text).not.toContain(target.email);
        // Nor anything else the key may call about that person.
        expect((await h.request("GET", `/admin/users/${target.id}`, { key })).json).toEqual((await h.request("GET", `/admin/users/${crypto.randomUUID()}`, { key })).json);
        expect((await h.request("DELETE", `/admin/p/${a.slug}/members/${target.id}`, { key })).json).toEqual(
          (await h.request("DELETE", `/admin/p/${a.slug}/members/${crypto.randomUUID()}`, { key })).json,
        );
      }
      expect(ghost.json.error).toEqual({ code: "not_found", message: "user not found" });
    }
    expect(await membersOf(inB.id)).toEqual([[b.id, "viewer"]]);
    expect(await membersOf(nowhere.id)).toEqual([]);
    expect(await membersOf(owner.id)).toEqual([]);

    // The root key (no project limit) adds anyone; so does an unlimited users:write key.
    const root = await h.request("PUT", `/admin/p/${a.slug}/members/${nowhere.id}`, { body: { role: "viewer" } });
    expect(root.status).toBe(200);
    expect(root.json.data).toMatchObject({ user_id: nowhere.id, email: nowhere.email, role: "viewer" });
    const usersWrite = await keyWith(h, ["users:write", ...scopes]);
    const added = await h.request("PUT", `/admin/p/${a.slug}/members/${inB.id}`, { key: usersWrite, body: { role: "editor" } });
    expect(added.status).toBe(200);
    expect(added.json.data.email).toBe(inB.email);
    expect(await membersOf(inB.id)).toEqual(
      expect.arrayContaining([
        [b.id, "viewer"],
        [a.id, "editor"],
      ]),
    );
    // Once a member of A, the A-limited key manages that person (and a key limited to A and C may bring them to C).
    expect((await h.request("PUT", `/admin/p/${a.slug}/members/${nowhere.id}`, { key: keys[0], body: { role: "editor" } })).status).toBe(200);
    const keyAC = await keyWith(h, scopes, [a.id, c.id]);
    expect((await h.request("PUT", `/admin/p/${c.slug}/members/${nowhere.id}`, { key: keyAC, body: { role: "viewer" } })).status).toBe(200);
    expect(await membersOf(nowhere.id)).toEqual(
      expect.arrayContaining([
        [a.id, "editor"],
        [c.id, "viewer"],
      ]),
    );
  });

  test("add_member by email: any case, a new role for a member; an outsider's email answers as an unknown one; nothing written", async () => {
    const inB = await newUser("by-email-b");
    const outsider = await newUser("by-email-out");
    expect((await h.request("PUT", `/admin/p/${b.slug}/members/${inB.id}`, { body: { role: "viewer" } })).status).toBe(200);
    const scopes = ["keys:write", "projects:read", "content:read", "content:write", "content:publish", "ai:read", "media:write"];
    const keyAB = await keyWith(h, scopes, [a.id, b.id]);
    // A key limited to A and B brings B's member into A by email, written in capitals.
    const added = await h.request("POST", `/admin/p/${a.slug}/members`, { key: keyAB, body: { email: inB.email.toUpperCase(), role: "editor" } });
    expect(added.status).toBe(201);
    expect(added.json.data).toMatchObject({ user_id: inB.id, email: inB.email, role: "editor" });
    const again = await h.request("POST", `/admin/p/${a.slug}/members`, { key: keyAB, body: { email: inB.email, role: "viewer" } });
    expect(again.json.data.role).toBe("viewer");
    // Someone outside the key's projects and an email nobody has: the same 404, naming no one.
    const unknown = await h.request("POST", `/admin/p/${a.slug}/members`, { key: keyAB, body: { email: "nobody-here@example.com", role: "viewer" } });
    expect(unknown.status).toBe(404);
    expect(unknown.json.error.code).toBe("not_found");
    const out = await h.request("POST", `/admin/p/${a.slug}/members`, { key: keyAB, body: { email: outsider.email, role: "viewer" } });
    expect({ status: out.status, body: out.json }).toEqual({ status: 404, body: unknown.json });
    expect(await membersOf(outsider.id)).toEqual([]);
    expect((await h.request("POST", `/admin/p/${a.slug}/members`, { key: keyAB, body: { email: inB.email, role: "owner" } })).status).toBe(400);
    expect(await membersOf(inB.id)).toEqual(
      expect.arrayContaining([
        [b.id, "viewer"],
        [a.id, "viewer"],
      ]),
    );
    // The root key adds anyone by email.
    expect((await h.request("POST", `/admin/p/${c.slug}/members`, { body: { email: outsider.email, role: "editor" } })).status).toBe(201);
    expect(await membersOf(outsider.id)).toEqual([[c.id, "editor"]]);
  });

  test("consents: a project-limited key reads the email of a member of its projects only, never of someone who left or an owner", async () => {
    const stays = await newUser("stays");
    const leaves = await newUser("leaves");
    const owner = (await h.request("POST", "/admin/users", { body: { email: email("consenting-owner"), password: PASSWORD, role: "owner" } })).json.data;
    for (const u of [stays, leaves]) expect((await h.request("PUT", `/admin/p/${c.slug}/members/${u.id}`, { body: { role: "editor" } })).status).toBe(200);
    const clientId = `client-${crypto.randomUUID()}`;
    await h.deps.db
      .insert(oauthClients)
      .values({ id: clientId, redirectUris: ["http://127.0.0.1:9/cb"], tokenEndpointAuthMethod: "none", grantTypes: ["authorization_code"], responseTypes: ["code"] });
    for (const u of [stays, leaves, owner]) {
      await h.deps.db.insert(oauthGrants).values({ id: crypto.randomUUID(), clientId, userId: u.id, projectId: c.id, scopes: ["content:read"], resource: "http://localhost/mcp" });
    }
    expect((await h.request("DELETE", `/admin/p/${c.slug}/members/${leaves.id}`)).status).toBe(204);
    const emails = async (key?: string) =>
      Object.fromEntries(
        ((await h.request("GET", `/admin/oauth/grants?client_id=${encodeURIComponent(clientId)}`, { key })).json.data as { user_id: string; user_email: string | null }[]).map((g) => [
          g.user_id,
          g.user_email,
        ]),
      );
    const keyC = await keyWith(h, ["keys:write"], [c.id]);
    expect(await emails(keyC)).toEqual({ [stays.id]: stays.email, [leaves.id]: null, [owner.id]: null });
    // A key without project limit reads them all.
    expect(await emails()).toEqual({ [stays.id]: stays.email, [leaves.id]: leaves.email, [owner.id]: owner.email });
  });
});

describe("owners: users:write never leads to more than the key holds", async () => {
  const h = await harness(HIGH_LIMITS);

  test("making an owner, or changing, demoting or deleting one, needs a key holding every scope", async () => {
    const usersOnly = await keyWith(h, ["users:write"]);
    const wouldBe = email("would-be-owner");
    const made = await h.request("POST", "/admin/users", { key: usersOnly, body: { email: wouldBe, password: PASSWORD, role: "owner" } });
    expect(made.status).toBe(403);
    expect(made.json.error.code).toBe("insufficient_scope");
    expect(made.json.error.message).toContain("creating an owner");
    expect(await h.deps.db.select().from(users).where(eq(users.email, wouldBe))).toHaveLength(0);
    const member = (await h.request("POST", "/admin/users", { key: usersOnly, body: { email: email("plain-member"), password: PASSWORD } })).json.data;
    expect(member.role).toBe("member");
    expect((await h.request("PATCH", `/admin/users/${member.id}`, { key: usersOnly, body: { role: "owner" } })).status).toBe(403);
    const owner = (await h.request("POST", "/admin/users", { body: { email: email("real-owner"), password: PASSWORD, role: "owner" } })).json.data;
    const [before] = await h.deps.db.select().from(users).where(eq(users.id, owner.id));
    for (const patch of [{ password: "a brand new password" }, { email: email("taken-over") }, { role: "member" }]) {
      const r = await h.request("PATCH", `/admin/users/${owner.id}`, { key: usersOnly, body: patch });
      expect(r.status).toBe(403);
    }
    expect((await h.request("DELETE", `/admin/users/${owner.id}`, { key: usersOnly })).status).toBe(403);
    const [after] = await h.deps.db.select().from(users).where(eq(users.id, owner.id));
    expect(after).toEqual(before!);
    // The root key (every scope) may.
    expect((await h.request("PATCH", `/admin/users/${member.id}`, { body: { role: "owner" } })).status).toBe(200);
  });
});

describe("members: a user deleted while being added", async () => {
  const fresh = await freshDatabase();
  const h = await harness(HIGH_LIMITS, { db: fresh.handle.db, dbHandle: fresh.handle });
  afterAll(() => fresh.drop());

  test("is 404, not 500, and leaves no membership", async () => {
    const p = await seedProject(h);
    const u = (await h.request("POST", "/admin/users", { body: { email: email("vanishing"), password: PASSWORD } })).json.data.id;
    // The user disappears between the service reading it and the insert (a concurrent DELETE /admin/users/{id}).
    const exec = async (q: string) => fresh.handle.db.execute(sql.raw(q));
    await exec("create function cms_test_vanish() returns trigger language plpgsql as $$ begin delete from users where id = new.user_id; return new; end $$");
    await exec("create trigger cms_test_vanish before insert on project_members for each row execute function cms_test_vanish()");
    const r = await h.request("PUT", `/admin/p/${p.slug}/members/${u}`, { body: { role: "viewer" } });
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe("not_found");
    expect(await fresh.handle.db.select().from(projectMembers)).toHaveLength(0);
  });
});

describe("the last owner", async () => {
  const fresh = await freshDatabase();
  const h = await harness(HIGH_LIMITS, { db: fresh.handle.db, dbHandle: fresh.handle });
  afterAll(() => fresh.drop());

  test("cannot be deleted or demoted, also when two requests race to remove the last two", async () => {
    // With no owner at all (a database whose owner was made by hand elsewhere), members can still be removed.
    const member = (await h.request("POST", "/admin/users", { body: { email: email("member"), password: PASSWORD } })).json.data.id;
    expect((await h.request("DELETE", `/admin/users/${member}`)).status).toBe(204);
    const first = (await h.request("POST", "/admin/users", { body: { email: email("owner1"), password: PASSWORD, role: "owner" } })).json.data.id;
    const demote = await h.request("PATCH", `/admin/users/${first}`, { body: { role: "member" } });
    expect(demote.status).toBe(409);
    expect(demote.json.error.code).toBe("conflict");
    expect((await h.request("DELETE", `/admin/users/${first}`)).status).toBe(409);
    const [row] = await fresh.handle.db.select().from(users).where(eq(users.id, first));
    expect(row!.role).toBe("owner");

    for (let round = 0; round < 5; round++) {
      const second = (await h.request("POST", "/admin/users", { body: { email: email("owner2"), password: PASSWORD, role: "owner" } })).json.data.id;
      const owners = (await fresh.handle.db.select().from(users).where(eq(users.role, "owner"))).map((u) => u.id);
      expect(owners.sort()).toEqual([first, second].sort());
      const [x, y] = await Promise.all([
        h.request("PATCH", `/admin/users/${first}`, { body: { role: "member" } }),
        round % 2 === 0 ? h.request("DELETE", `/admin/users/${second}`) : h.request("PATCH", `/admin/users/${second}`, { body: { role: "member" } }),
      ]);
      expect([x.status, y.status].filter((s) => s === 409)).toHaveLength(1);
      const left = await fresh.handle.db.select().from(users).where(eq(users.role, "owner"));
      expect(left).toHaveLength(1);
      // Back to one known owner for the next round.
      const survivor = left[0]!.id;
      if (survivor !== first) {
        expect((await h.request("PATCH", `/admin/users/${first}`, { body: { role: "owner" } })).status).toBe(200);
        expect((await h.request("DELETE", `/admin/users/${survivor}`)).status).toBe(204);
      } else if (round % 2 === 1) {
        expect((await h.request("DELETE", `/admin/users/${second}`)).status).toBe(204);
      }
    }
  });
});

describe("a changed password ends the consent-page sign-in", async () => {
  const h = await harness(HIGH_LIMITS);
  const a = await seedProject(h);
  const b = await seedProject(h);

  test("the next step of the page asks to sign in again", async () => {
    const e = email("pw");
    const u = (await h.request("POST", "/admin/users", { body: { email: e, password: PASSWORD } })).json.data.id;
    await h.request("PUT", `/admin/p/${a.slug}/members/${u}`, { body: { role: "editor" } });
    await h.request("PUT", `/admin/p/${b.slug}/members/${u}`, { body: { role: "editor" } });
    const client = (await h.request("POST", "/oauth/register", { key: null, body: { redirect_uris: ["http://127.0.0.1:43123/cb"], token_endpoint_auth_method: "none" } })).json.client_id;
    const url = authorizeUrl("http://localhost", {
      response_type: "code",
      client_id: client,
      redirect_uri: "http://127.0.0.1:43123/cb",
      code_challenge: pkce().challenge,
      code_challenge_method: "S256",
      resource: "http://localhost/mcp",
    });
    const jar = new CookieJar();
    const send = async (req: Request): Promise<Response> => {
      const res = await h.app.handle(req);
      jar.store(res);
      return res;
    };
    const post = (form: Record<string, string>) =>
      send(
        new Request("http://localhost/oauth/authorize", {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded", cookie: jar.header() },
          body: new URLSearchParams(form).toString(),
        }),
      );
    const page = await (await send(new Request(url, { headers: { cookie: jar.header() } }))).text();
    const chooser = await post({ ...hiddenFields(page), email: e, password: PASSWORD });
    expect(chooser.status).toBe(200);
    const chooserHtml = await chooser.text();
    expect(hiddenFields(chooserHtml).step).toBe("project");

    // Before the change the sign-in carries on to the consent step.
    const consent = await post({ ...hiddenFields(chooserHtml), project: a.id });
    expect(consent.status).toBe(200);
    const consentHtml = await consent.text();
    expect(hiddenFields(consentHtml).step).toBe("consent");

    expect((await h.request("PATCH", `/admin/users/${u}`, { body: { password: "a-brand-new-password" } })).status).toBe(200);
    const after = await post({ ...hiddenFields(consentHtml), action: "approve", grant_scope: "content:read" });
    expect(after.status).toBe(401);
    expect(await after.text()).toContain("Your sign-in has expired");
    expect(await h.deps.db.select().from(oauthGrants).where(eq(oauthGrants.userId, u))).toHaveLength(0);
  });
});

describe("CLI: users and members through the same service functions", () => {
  test("users:create/list/update/delete and members:set/list/remove against the configured database", async () => {
    const { mkdtempSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { openDb } = await import("../db/client");
    const { projects } = await import("../db/schema");
    // PostgreSQL: a database of its own; embedded: the CLI's own DATA_DIR (an in-memory one would go unused).
    const fresh = process.env.DATABASE_URL?.startsWith("postgres") ? await freshDatabase() : null;
    const dir = mkdtempSync(join(tmpdir(), "cms-cli-users-"));
    const env: Record<string, string> = { ...(process.env as Record<string, string>), SEED_DEMO: "false", LOG_LEVEL: "silent" };
    if (fresh) env.DATABASE_URL = fresh.url!;
    else {
      delete env.DATABASE_URL;
      env.DATA_DIR = dir;
    }
    const cli = async (...args: string[]): Promise<{ code: number; out: string }> => cliWith(null, ...args);
    const cliWith = async (input: string | null, ...args: string[]): Promise<{ code: number; out: string }> => {
      const stdin = input === null ? "ignore" : new Blob([input]);
      const p = Bun.spawn([process.execPath, "src/cli.ts", ...args], { env, stdin, stdout: "pipe", stderr: "pipe", cwd: join(import.meta.dir, "..") });
      const out = await new Response(p.stdout).text();
      return { code: await p.exited, out };
    };
    try {
      const owner = await cli("users:create", "--email", "boss@example.com", "--password", PASSWORD, "--role", "owner");
      expect(owner.code).toBe(0);
      const ed = JSON.parse((await cli("users:create", "--email", "ed@example.com", "--password", PASSWORD)).out);
      expect(ed).toMatchObject({ email: "ed@example.com", role: "member", memberships: [] });
      expect((await cli("users:create", "--email", "short@example.com", "--password", "elevenchars")).code).toBe(1);
      // A project to be a member of, written straight into the CLI's database.
      const projectId = crypto.randomUUID();
      const direct = fresh ? fresh.handle : await openDb({ databaseUrl: null, dataDir: dir });
      await direct.db.insert(projects).values({ id: projectId, slug: "cli-site", name: "CLI site", defaultLocale: "en", locales: ["en"] });
      if (!fresh) await direct.close();

      const set = await cli("members:set", "cli-site", "ed@example.com", "--role", "admin");
      expect(set.code).toBe(0);
      expect(JSON.parse(set.out)).toMatchObject({ user_id: ed.id, role: "admin" });
      expect((await cli("members:set", "cli-site", "ed@example.com", "--role", "owner")).code).toBe(1);
      const members = (await cli("members:list", "cli-site")).out
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(members).toEqual([expect.objectContaining({ user_id: ed.id, email: "ed@example.com", role: "admin" })]);
      const listed = (await cli("users:list")).out
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(listed.find((u) => u.id === ed.id).memberships).toEqual([{ project_id: projectId, role: "admin" }]);
      expect(listed.map((u) => JSON.stringify(u)).join("")).not.toContain("argon2");

      const renamed = await cli("users:update", ed.id, "--email", "edna@example.com", "--password", "a-new-long-password");
      expect(renamed.code).toBe(0);
      expect(JSON.parse(renamed.out).email).toBe("edna@example.com");
      // --password-stdin takes no value: the word after it is still the user.
      const viaStdin = await cliWith("a-password-from-stdin\n", "users:update", "--password-stdin", "edna@example.com");
      expect(viaStdin.code).toBe(0);
      expect(JSON.parse(viaStdin.out).email).toBe("edna@example.com");
      expect((await cli("users:update", "boss@example.com", "--role", "member")).code).toBe(1);
      expect((await cli("members:remove", "cli-site", "edna@example.com")).code).toBe(0);
      expect((await cli("members:remove", "cli-site", "edna@example.com")).code).toBe(1);
      expect((await cli("users:delete", "boss@example.com")).code).toBe(1);
      expect((await cli("users:delete", "edna@example.com")).code).toBe(0);

      const check = fresh ? fresh.handle : await openDb({ databaseUrl: null, dataDir: dir });
      const left = await check.db.select().from(users);
      expect(left.map((u) => [u.email, u.role])).toEqual([["boss@example.com", "owner"]]);
      if (!fresh) await check.close();
    } finally {
      if (fresh) await fresh.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000); // a dozen CLI processes, each opening the database: slow beside a parallel worker
});
