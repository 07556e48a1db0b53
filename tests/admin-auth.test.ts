import { afterAll, describe, expect, test } from "bun:test";
import { createAdminKey } from "../src/keys/service";
import { harness, keyWith, seedProject } from "./helpers";

// Issue 12 §4: one failed-authentication limiter for the whole admin API, a valid key still served
// from a blocked address, and RFC 6750 §3 challenges on every admin 401 and 403.

describe("failed admin authentications: one limiter for the app, valid keys still served", async () => {
  // The default limit (30 a minute), over a real listening socket: the address is the socket's.
  const h = await harness();
  const project = await seedProject(h);
  h.app.listen({ port: 0, hostname: "127.0.0.1" });
  const base = `http://127.0.0.1:${h.app.server!.port}`;
  afterAll(() => h.app.stop(true));
  const get = async (path: string, key: string | null) => {
    const res = await fetch(base + path, { headers: key ? { authorization: `Bearer ${key}` } : {} });
    const json = res.headers.get("content-type")?.includes("json") ? await res.json() : null;
    return { status: res.status, headers: res.headers, json: json as any };
  };
  const bad = `cms_ak_${"x".repeat(32)}`;
  // One path per admin route group (each group is its own Elysia plugin).
  const groups = [
    `/admin/p/${project.slug}/nodes`,
    "/admin/keys",
    `/admin/p/${project.slug}/theme`,
    "/admin/oauth/clients",
    "/admin/ai/kinds",
    `/admin/p/${project.slug}/ai/providers`,
    `/admin/p/${project.slug}/ai/mcp/tokens`,
    // The model file routes are a route group of their own, handed the app's one authenticator.
    `/admin/p/${project.slug}/model/types.ts`,
  ];

  test("30 bad tokens on /admin/projects block the address on every other admin route group: 429, not 401", async () => {
    for (let i = 0; i < 30; i++) {
      const r = await get("/admin/projects", bad);
      expect(r.status).toBe(401);
    }
    const blocked = await get("/admin/projects", bad);
    expect(blocked.status).toBe(429);
    expect(blocked.json.error.code).toBe("rate_limited");
    for (const path of groups) {
      const r = await get(path, bad);
      expect({ path, status: r.status, code: r.json.error?.code }).toEqual({ path, status: 429, code: "rate_limited" });
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
      expect((await get(path, null)).status).toBe(429);
    }
  });

  test("a valid key from the blocked address is still served (administrators behind one NAT as the guesser)", async () => {
    expect((await get("/admin/projects", bad)).status).toBe(429);
    // A valid key from the same address is served, on the group where the failures happened and on the others.
    for (const path of ["/admin/projects", ...groups]) {
      const r = await get(path, h.rootKey);
      expect({ path, status: r.status }).toEqual({ path, status: 200 });
    }
    const listed = await get("/admin/projects", h.rootKey);
    expect(listed.json.data.some((p: { slug: string }) => p.slug === project.slug)).toBe(true);
    // A valid key lacking the scope is judged as usual (403), and its success does not lift the block for bad keys.
    const reader = await keyWith(h, ["projects:read"]);
    expect((await get(`/admin/p/${project.slug}/nodes`, reader)).status).toBe(403);
    expect((await get("/admin/keys", bad)).status).toBe(429);
  });

  test("apps are independent: another app over a socket from the same address knows nothing of this block", async () => {
    const other = await harness();
    other.app.listen({ port: 0, hostname: "127.0.0.1" });
    try {
      const r = await fetch(`http://127.0.0.1:${other.app.server!.port}/admin/projects`, { headers: { authorization: `Bearer ${bad}` } });
      expect(r.status).toBe(401);
      expect((await get("/admin/projects", bad)).status).toBe(429);
    } finally {
      await other.app.stop(true);
    }
  });
});

describe("WWW-Authenticate on admin 401 and 403 (RFC 6750 §3)", async () => {
  const h = await harness({ ADMIN_AUTH_FAILURE_LIMIT: "1000000" });
  const project = await seedProject(h);
  const paths = [
    "/admin/projects",
    `/admin/p/${project.slug}/nodes`,
    "/admin/keys",
    `/admin/p/${project.slug}/theme`,
    "/admin/oauth/clients",
    "/admin/ai/kinds",
    `/admin/p/${project.slug}/ai/mcp/tokens`,
    // The model file routes are a route group of their own, handed the app's one authenticator.
    `/admin/p/${project.slug}/model/types.ts`,
  ];

  test("401 without credentials: a bare Bearer challenge with a realm, no error code", async () => {
    for (const path of paths) {
      for (const headers of [{}, { authorization: "Basic dXNlcjpwYXNz" }, { authorization: "Bearer" }] as Record<string, string>[]) {
        const r = await h.request("GET", path, { key: null, headers });
        expect({ path, status: r.status, code: r.json.error.code, challenge: r.headers.get("www-authenticate") }).toEqual({
          path,
          status: 401,
          code: "unauthorized",
          challenge: 'Bearer realm="admin"',
        });
      }
    }
  });

  test('401 with a bad, short or revoked token: error="invalid_token"', async () => {
    const { key: row, plaintext: revoked } = await createAdminKey(h.deps.db, { name: "to-revoke", scopes: ["projects:read"] }, null, new Date());
    expect((await h.request("GET", "/admin/projects", { key: revoked })).status).toBe(200);
    expect((await h.request("DELETE", `/admin/keys/${row.id}`)).status).toBe(204);
    for (const path of paths) {
      for (const key of [`cms_ak_${"y".repeat(32)}`, "short", revoked]) {
        const r = await h.request("GET", path, { key });
        expect({ path, status: r.status, code: r.json.error.code, challenge: r.headers.get("www-authenticate") }).toEqual({
          path,
          status: 401,
          code: "unauthorized",
          challenge: 'Bearer realm="admin", error="invalid_token"',
        });
      }
    }
  });

  test('403 for a missing scope: error="insufficient_scope" naming the scope; the body is unchanged', async () => {
    const reader = await keyWith(h, ["projects:read"]);
    // The theme takes either of two scopes (issue 37): both are named in the body; the challenge names
    // none, as RFC 6750's scope attribute lists scopes that are all required.
    const THEME_SCOPES = ["projects:write", "theme:write"];
    const cases: Array<[string, string, unknown, string | string[]]> = [
      ["GET", `/admin/p/${project.slug}/nodes`, undefined, "content:read"],
      ["POST", `/admin/p/${project.slug}/nodes`, { slug: "n", title: "n" }, "content:write"],
      ["POST", "/admin/projects", { slug: "x-forbidden", name: "x", default_locale: "en", locales: ["en"] }, "projects:write"],
      ["GET", "/admin/keys", undefined, "keys:write"],
      ["PUT", `/admin/p/${project.slug}/theme`, { tokens: {} }, THEME_SCOPES],
      ["GET", "/admin/oauth/clients", undefined, "keys:write"],
    ];
    for (const [method, path, body, scope] of cases) {
      const r = await h.request(method, path, { key: reader, body });
      expect({ path, status: r.status, code: r.json.error.code, required: r.json.error.details?.required }).toEqual({ path, status: 403, code: "insufficient_scope", required: scope });
      const named = typeof scope === "string" ? `, scope="${scope}"` : "";
      expect(r.headers.get("www-authenticate")).toBe(`Bearer realm="admin", error="insufficient_scope"${named}`);
    }
    // content:write alone no longer writes the theme: it is refused the same way.
    const writer = await keyWith(h, ["projects:read", "content:read", "content:write"]);
    const theme = await h.request("PUT", `/admin/p/${project.slug}/theme`, { key: writer, body: { tokens: {} } });
    expect({ status: theme.status, code: theme.json.error.code, required: theme.json.error.details?.required }).toEqual({ status: 403, code: "insufficient_scope", required: THEME_SCOPES });
    expect(theme.headers.get("www-authenticate")).toBe('Bearer realm="admin", error="insufficient_scope"');
    // The reader key is otherwise valid: the same key reads what its scope allows.
    expect((await h.request("GET", "/admin/projects", { key: reader })).status).toBe(200);
  });

  test("403 from a service (a project-limited key creating a project, minting a scope it lacks) is a challenge too", async () => {
    const limited = await keyWith(h, ["projects:read", "projects:write", "keys:write"], [project.id]);
    const create = await h.request("POST", "/admin/projects", { key: limited, body: { slug: "x-limited", name: "x", default_locale: "en", locales: ["en"] } });
    expect(create.status).toBe(403);
    expect(create.json.error.code).toBe("insufficient_scope");
    expect(create.headers.get("www-authenticate")).toBe('Bearer realm="admin", error="insufficient_scope"');
    const mint = await h.request("POST", "/admin/keys", { key: limited, body: { name: "more", scopes: ["ai:write"], project_ids: [project.id] } });
    expect(mint.status).toBe(403);
    expect(mint.json.error.details.required).toBe("ai:write");
    expect(mint.headers.get("www-authenticate")).toBe('Bearer realm="admin", error="insufficient_scope", scope="ai:write"');
  });

  test("a successful admin answer carries no challenge", async () => {
    const r = await h.request("GET", "/admin/projects");
    expect(r.status).toBe(200);
    expect(r.headers.get("www-authenticate")).toBeNull();
  });
});
