// Every admin route in the OpenAPI document: no key → 401, a key without the route's scope → 403
// insufficient_scope naming that scope, and the named scope alone is enough to get past the check.
import { describe, expect, test } from "bun:test";
import { ADMIN_SCOPES } from "../src/lib/scopes";
import { harness, keyWith, seedNode, seedProject } from "./helpers";

describe("scope checks on every admin route", async () => {
  const h = await harness({ AI_ALLOW_PRIVATE_URLS: "true", ADMIN_AUTH_FAILURE_LIMIT: "1000000" });
  const p = await seedProject(h);
  const node = await seedNode(h, p.slug, { slug: "n" });
  const spec = (await h.request("GET", "/swagger/json", { key: null })).json as { paths: Record<string, Record<string, unknown>> };
  const routes = Object.entries(spec.paths)
    .filter(([path]) => path.startsWith("/admin"))
    .flatMap(([path, ops]) => Object.keys(ops).map((m) => ({ method: m.toUpperCase(), url: path.replace("{ref}", p.slug).replace("{id}", node.id).replace("{locale}", "fr").replace("{userId}", crypto.randomUUID()) })));
  const noScopes = await keyWith(h, []);

  test("the document lists the admin routes of every feature", () => {
    const all = routes.map((r) => r.url).join(" ");
    for (const part of ["/admin/projects", "/nodes", "/theme", "/admin/keys", "/ai/providers", "/ai/translate", "/ai/mcp/tokens", "/admin/oauth/grants", "/admin/ai/kinds", "/admin/users", "/members"]) expect(all).toContain(part);
  });

  test("no key is 401, a key without the scope is 403 naming it, and that scope alone passes the check", async () => {
    for (const { method, url } of routes) {
      const anon = await h.request(method, url, { key: null, body: method === "GET" || method === "DELETE" ? undefined : {} });
      expect({ method, url, status: anon.status }).toEqual({ method, url, status: 401 });
      const denied = await h.request(method, url, { key: noScopes, body: method === "GET" || method === "DELETE" ? undefined : {} });
      expect({ method, url, status: denied.status, code: denied.json?.error?.code }).toEqual({ method, url, status: 403, code: "insufficient_scope" });
      // One scope, or (members of a project) alternatives, each of which alone is enough.
      const named = ADMIN_SCOPES.filter((s) => denied.json.error.message.includes(s));
      expect({ method, url, named: named.length > 0 }).toEqual({ method, url, named: true });
      for (const scope of named) {
        const enough = await keyWith(h, [scope]);
        const allowed = await h.request(method, url, { key: enough, body: method === "GET" || method === "DELETE" ? undefined : {} });
        expect({ method, url, scope, passed: allowed.status !== 401 && allowed.status !== 403 }).toEqual({ method, url, scope, passed: true });
      }
    }
  });
});
