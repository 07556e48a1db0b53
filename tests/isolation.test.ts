// Tenant isolation matrix: every admin route that takes a ref or an id, called with a credential
// of project A and the refs/ids of project B, answers 404 exactly like an id that never existed,
// and no list shows B's rows.
import { describe, expect, test } from "bun:test";
import { ADMIN_SCOPES } from "../src/lib/scopes";
import { harness, keyWith, seedNode, seedProject } from "./helpers";

describe("tenant isolation: admin keys", async () => {
  const h = await harness({ AI_ALLOW_PRIVATE_URLS: "true" });
  const a = await seedProject(h);
  const b = await seedProject(h);
  await seedNode(h, a.slug, { slug: "a-home" }, true);
  const nodeB = await seedNode(h, b.slug, { slug: "b-home", blocks: [{ type: "text" }] }, true);
  await h.request("PUT", `/admin/p/${b.slug}/nodes/${nodeB.id}/translations/fr`, { body: { meta: { title: "B fr" } } });
  const providerB = (await h.request("POST", `/admin/p/${b.slug}/ai/providers`, { body: { name: "b", kind: "openai", api_key: "sk-b-secret", base_url: "http://127.0.0.1:9/v1" } })).json.data;
  const tokenB = (await h.request("POST", `/admin/p/${b.slug}/ai/mcp/tokens`, { body: { name: "b" } })).json.data;
  const keyA = await keyWith(h, [...ADMIN_SCOPES], [a.id]);

  const spec = (await h.request("GET", "/swagger/json", { key: null })).json as { paths: Record<string, Record<string, unknown>> };
  const idFor = (path: string): string => {
    if (path.includes("/ai/providers/")) return providerB.id;
    if (path.includes("/mcp/tokens/")) return tokenB.id;
    return nodeB.id;
  };
  const routes = Object.entries(spec.paths)
    // Admin keys and OAuth clients belong to no project (a project-limited key cannot manage them: 403).
    .filter(([path]) => path.startsWith("/admin") && /\{(ref|id)\}/.test(path) && !path.startsWith("/admin/keys") && !path.startsWith("/admin/oauth/clients"))
    .flatMap(([path, ops]) => Object.keys(ops).map((m) => ({ method: m.toUpperCase(), path })));

  test("the matrix covers the routes of every feature", () => {
    const covered = routes.map((r) => r.path).join(" ");
    for (const part of ["/admin/projects/{ref}", "/nodes/{id}", "/translations/{locale}", "/theme", "/ai/providers", "/ai/translate", "/mcp/tokens"]) expect(covered).toContain(part);
  });

  test("every route with B's ref or ids and A's key is 404, with the body of a missing id", async () => {
    for (const { method, path } of routes) {
      const url = path.replace("{ref}", b.slug).replace("{id}", idFor(path)).replace("{locale}", "fr");
      const bodyFor = method === "GET" || method === "DELETE" ? undefined : path.endsWith("/blocks") ? [] : path.endsWith("/translate") ? { from: "en", to: "fr", text: "hi" } : { name: "x", title: "x", slug: "x", kind: "openai", accent_color: "#000000" };
      const r = await h.request(method, url, { key: keyA, body: bodyFor });
      expect({ method, url, status: r.status }).toEqual({ method, url, status: 404 });
      expect(r.json.error.code).toBe("not_found");
      // The same route with an id that never existed answers the same body.
      const ghost = await h.request(method, path.replace("{ref}", crypto.randomUUID()).replace("{id}", crypto.randomUUID()).replace("{locale}", "fr"), { key: keyA, body: bodyFor });
      expect({ url, body: r.json }).toEqual({ url, body: ghost.json });
    }
  });

  test("no list shows B's rows to A's key", async () => {
    const lists = ["/admin/projects", `/admin/p/${a.slug}/nodes`, `/admin/p/${a.slug}/ai/providers`, `/admin/p/${a.slug}/ai/mcp/tokens`];
    for (const url of lists) {
      const r = await h.request("GET", url, { key: keyA });
      expect({ url, status: r.status }).toEqual({ url, status: 200 });
      for (const s of [b.id, b.slug, nodeB.id, providerB.id, tokenB.id]) expect({ url, leaked: r.text.includes(s) }).toEqual({ url, leaked: false });
    }
  });
});
