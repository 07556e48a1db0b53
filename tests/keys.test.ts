import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { adminKeys } from "../db/schema";
import { hashToken } from "../src/lib/tokens";
import { harness, keyWith, seedProject } from "./helpers";

describe("admin keys", async () => {
  const h = await harness();

  test("created once, stored hashed, listed by hint, revoked at once", async () => {
    const created = await h.request("POST", "/admin/keys", { body: { name: "ci", scopes: ["content:read"] } });
    expect(created.status).toBe(201);
    expect(created.headers.get("cache-control")).toBe("no-store");
    const { key, id, key_hint } = created.json.data;
    expect(key).toMatch(/^cms_ak_[a-z2-7]{32}$/);
    expect(key_hint.endsWith(key.slice(-4))).toBe(true);
    const [row] = await h.deps.db.select().from(adminKeys).where(eq(adminKeys.id, id));
    expect(row!.keyHash).toBe(hashToken(key));
    expect(JSON.stringify(row)).not.toContain(key);
    const list = await h.request("GET", "/admin/keys");
    expect(list.text).not.toContain(key);
    expect(list.json.data.find((k: any) => k.id === id)).toMatchObject({ name: "ci", scopes: ["content:read"], key_hint });
    const p = await seedProject(h);
    expect((await h.request("GET", `/admin/p/${p.slug}/nodes`, { key })).status).toBe(200);
    const [used] = await h.deps.db.select().from(adminKeys).where(eq(adminKeys.id, id));
    expect(used!.lastUsedAt).not.toBeNull();
    expect((await h.request("DELETE", `/admin/keys/${id}`)).status).toBe(204);
    expect((await h.request("GET", `/admin/p/${p.slug}/nodes`, { key })).status).toBe(401);
  });

  test("a key mints only scopes it holds, within its projects", async () => {
    const a = await seedProject(h);
    const b = await seedProject(h);
    const minter = await keyWith(h, ["keys:write", "content:read"], [a.id]);
    const tooMuch = await h.request("POST", "/admin/keys", { key: minter, body: { name: "x", scopes: ["content:write"], project_ids: [a.id] } });
    expect(tooMuch.status).toBe(403);
    expect(tooMuch.json.error.code).toBe("insufficient_scope");
    const unlimited = await h.request("POST", "/admin/keys", { key: minter, body: { name: "x", scopes: ["content:read"] } });
    expect(unlimited.status).toBe(403);
    const other = await h.request("POST", "/admin/keys", { key: minter, body: { name: "x", scopes: ["content:read"], project_ids: [b.id] } });
    expect(other.status).toBe(404);
    const ok = await h.request("POST", "/admin/keys", { key: minter, body: { name: "x", scopes: ["content:read"], project_ids: [a.id] } });
    expect(ok.status).toBe(201);
    // The limited minter sees only keys inside its projects.
    const list = await h.request("GET", "/admin/keys", { key: minter });
    expect(list.json.data.every((k: any) => k.project_ids?.every((id: string) => id === a.id))).toBe(true);
    const unknownScope = await h.request("POST", "/admin/keys", { body: { name: "x", scopes: ["root"] } });
    expect(unknownScope.status).toBe(400);
  });

  test("keys routes need keys:write", async () => {
    const reader = await keyWith(h, ["projects:read"]);
    expect((await h.request("GET", "/admin/keys", { key: reader })).status).toBe(403);
    expect((await h.request("POST", "/admin/keys", { key: reader, body: { name: "x" } })).status).toBe(403);
    expect((await h.request("DELETE", `/admin/keys/${crypto.randomUUID()}`, { key: reader })).status).toBe(403);
    expect((await h.request("GET", "/admin/keys", { key: null })).status).toBe(401);
    expect((await h.request("GET", "/admin/keys", { key: "cms_ak_doesnotexist" })).status).toBe(401);
    expect((await h.request("DELETE", `/admin/keys/${crypto.randomUUID()}`)).status).toBe(404);
  });
});

describe("failed admin authentications are rate limited per client address", async () => {
  const h = await harness({ ADMIN_AUTH_FAILURE_LIMIT: "3" });

  test("after the limit, 429 with Retry-After for failures from that address, a valid key still served; others unaffected", async () => {
    const from = (ip: string) => ({ "x-forwarded-for": ip });
    const limited = await harness({ ADMIN_AUTH_FAILURE_LIMIT: "3", TRUST_PROXY: "true" });
    for (let i = 0; i < 3; i++) expect((await limited.request("GET", "/admin/projects", { key: "cms_ak_wrong", headers: from("203.0.113.7") })).status).toBe(401);
    const blocked = await limited.request("GET", "/admin/projects", { key: "cms_ak_wrong", headers: from("203.0.113.7") });
    expect(blocked.status).toBe(429);
    expect(blocked.json.error.code).toBe("rate_limited");
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await limited.request("GET", "/admin/projects", { key: null, headers: from("203.0.113.7") })).status).toBe(429);
    expect((await limited.request("GET", "/admin/projects", { headers: from("203.0.113.7") })).status).toBe(200);
    expect((await limited.request("GET", "/admin/projects", { headers: from("198.51.100.1") })).status).toBe(200);
    // Without TRUST_PROXY the forwarded header is ignored.
    expect((await h.request("GET", "/admin/projects", { headers: from("203.0.113.7") })).status).toBe(200);
  });

  test("one count for every admin route: failures on the operation routes and on the model's file routes add up", async () => {
    const from = { "x-forwarded-for": "203.0.113.9" };
    const limited = await harness({ ADMIN_AUTH_FAILURE_LIMIT: "3", TRUST_PROXY: "true" });
    expect((await limited.request("GET", "/admin/projects", { key: "cms_ak_wrong", headers: from })).status).toBe(401);
    expect((await limited.request("GET", "/admin/p/demo/model/types.ts", { key: "cms_ak_wrong", headers: from })).status).toBe(401);
    expect((await limited.request("GET", "/admin/p/demo/model/schema.json", { key: "cms_ak_wrong", headers: from })).status).toBe(401);
    expect((await limited.request("GET", "/admin/p/demo/model/types.ts", { key: "cms_ak_wrong", headers: from })).status).toBe(429);
    expect((await limited.request("GET", "/admin/projects", { key: "cms_ak_wrong", headers: from })).status).toBe(429);
  });
});
