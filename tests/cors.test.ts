// One CORS policy per surface (src/lib/cors.ts): delivery and the OAuth endpoints open to any origin,
// the admin API and /mcp only to their allow-lists; nothing else answers with CORS headers.
import { describe, expect, test } from "bun:test";
import { BASE, harness, seedNode, seedProject } from "./helpers";

const EVIL = "https://evil.example";
const ACAO = "access-control-allow-origin";

describe("CORS per surface", async () => {
  const h = await harness({ MCP_ALLOWED_ORIGINS: "https://agent.example" });
  const p = await seedProject(h);
  await seedNode(h, p.slug, { slug: "home" }, true);
  const send = (method: string, path: string, origin: string, headers: Record<string, string> = {}, key: string | null = h.rootKey) =>
    h.app.handle(new Request(BASE + path, { method, headers: { origin, ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers } }));
  const preflight = (path: string, origin: string, method = "GET") =>
    send("OPTIONS", path, origin, { "access-control-request-method": method, "access-control-request-headers": "authorization, content-type" }, null);

  test("admin routes answer no other origin: no open CORS on answers, errors or preflights", async () => {
    const ok = await send("GET", "/admin/projects", EVIL);
    expect(ok.status).toBe(200);
    expect(ok.headers.get(ACAO)).toBeNull();
    const denied = await send("GET", "/admin/projects", EVIL, {}, null);
    expect(denied.status).toBe(401);
    expect(denied.headers.get(ACAO)).toBeNull();
    const pre = await preflight(`/admin/p/${p.slug}/nodes`, EVIL, "POST");
    expect(pre.headers.get(ACAO)).toBeNull();
    expect(pre.headers.get("access-control-allow-credentials")).toBeNull();
  });

  test("admin routes answer their allow-list (the service's own origin), echoed with Vary: Origin", async () => {
    const ok = await send("GET", `/admin/p/${p.slug}/nodes`, BASE);
    expect(ok.status).toBe(200);
    expect(ok.headers.get(ACAO)).toBe(BASE);
    expect(ok.headers.get("vary")).toContain("Origin");
    const pre = await preflight(`/admin/p/${p.slug}/nodes`, BASE, "POST");
    expect(pre.status).toBe(204);
    expect(pre.headers.get(ACAO)).toBe(BASE);
    expect(pre.headers.get("access-control-allow-methods")).toContain("POST");
    expect(pre.headers.get("access-control-allow-headers")).toContain("authorization");
  });

  test("ADMIN_ALLOWED_ORIGINS replaces the admin allow-list (the service's own origin is then off it)", async () => {
    const h2 = await harness({ ADMIN_ALLOWED_ORIGINS: "https://studio.example/, https://cms.example" });
    const at = (origin: string) => h2.app.handle(new Request(`${BASE}/admin/projects`, { headers: { origin, authorization: `Bearer ${h2.rootKey}` } }));
    for (const origin of ["https://studio.example", "https://cms.example"]) {
      const res = await at(origin);
      expect(res.status).toBe(200);
      expect(res.headers.get(ACAO)).toBe(origin);
    }
    for (const origin of [BASE, EVIL]) {
      const res = await at(origin);
      expect(res.status).toBe(200);
      expect(res.headers.get(ACAO)).toBeNull();
    }
    const pre = await h2.app.handle(new Request(`${BASE}/admin/p/${p.slug}/nodes`, { method: "OPTIONS", headers: { origin: "https://studio.example", "access-control-request-method": "POST" } }));
    expect(pre.status).toBe(204);
    expect(pre.headers.get(ACAO)).toBe("https://studio.example");
    // /mcp keeps its own list.
    expect((await h2.app.handle(new Request(`${BASE}/mcp`, { method: "OPTIONS", headers: { origin: "https://studio.example", "access-control-request-method": "POST" } }))).status).toBe(403);
  });

  test("the authorization endpoint and the ops routes carry no CORS headers", async () => {
    for (const path of ["/oauth/authorize?client_id=x", "/healthz", "/swagger/json"]) {
      const res = await send("GET", path, EVIL, {}, null);
      expect({ path, acao: res.headers.get(ACAO) }).toEqual({ path, acao: null });
    }
    const pre = await preflight("/oauth/authorize", EVIL, "POST");
    expect(pre.headers.get(ACAO)).toBeNull();
  });

  test("delivery and the OAuth token endpoints are open to any origin, never with credentials", async () => {
    const read = await send("GET", `/api/p/${p.slug}/nodes/by-path/home`, EVIL, {}, null);
    expect(read.status).toBe(200);
    expect(read.headers.get(ACAO)).toBe("*");
    const pre = await preflight(`/api/p/${p.slug}/nodes/by-path/home`, EVIL);
    expect(pre.status).toBe(204);
    expect(pre.headers.get(ACAO)).toBe("*");
    expect(pre.headers.get("access-control-allow-headers")).toBe("authorization, content-type");
    const token = await preflight("/oauth/token", EVIL, "POST");
    expect(token.headers.get(ACAO)).toBe("*");
    expect(token.headers.get("access-control-allow-headers")).toContain("mcp-protocol-version");
    const answer = await h.app.handle(new Request(`${BASE}/oauth/token`, { method: "POST", headers: { origin: EVIL, "content-type": "application/x-www-form-urlencoded" }, body: "grant_type=nope" }));
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.headers.get(ACAO)).toBe("*");
    for (const res of [read, pre, token, answer]) expect(res.headers.get("access-control-allow-credentials")).toBeNull();
  });

  test("/mcp answers its allow-list only", async () => {
    const allowed = await preflight("/mcp", "https://agent.example", "POST");
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get(ACAO)).toBe("https://agent.example");
    expect((await preflight("/mcp", EVIL, "POST")).status).toBe(403);
  });
});
