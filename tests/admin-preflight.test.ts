// Issue 22 §5: the admin API's CORS preflight allows what its routes accept. Derived from the
// OpenAPI document (the operations' declarations), so a new method, or a request header a route
// declares (If-Match, when conditional writes come), fails here until the admin policy lists it.
import { describe, expect, test } from "bun:test";
import { BASE, harness } from "./helpers";

const list = (v: string | null): string[] =>
  (v ?? "")
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);

describe("admin CORS preflight", async () => {
  const h = await harness();
  const spec = (await h.request("GET", "/swagger/json", { key: null })).json;
  const admin = Object.entries(spec.paths as Record<string, Record<string, { parameters?: { in: string; name: string }[]; requestBody?: unknown }>>).filter(([path]) => path.startsWith("/admin/"));

  test("every admin path's preflight allows its methods, the bearer, a JSON body and the headers it declares", async () => {
    expect(admin.length).toBeGreaterThan(30);
    const methods = new Set<string>();
    for (const [path, ops] of admin) {
      const url = BASE + path.replace(/\{ref\}/g, "some-project").replace(/\{(\w+)\}/g, crypto.randomUUID());
      for (const [method, op] of Object.entries(ops)) {
        methods.add(method);
        const headers = ["authorization", "x-request-id", ...(op.requestBody ? ["content-type"] : []), ...(op.parameters ?? []).filter((p) => p.in === "header").map((p) => p.name.toLowerCase())];
        const pre = await h.app.handle(
          new Request(url, { method: "OPTIONS", headers: { origin: BASE, "access-control-request-method": method.toUpperCase(), "access-control-request-headers": headers.join(", ") } }),
        );
        expect({ path, method, status: pre.status, origin: pre.headers.get("access-control-allow-origin") }).toEqual({ path, method, status: 204, origin: BASE });
        expect({ path, method, allowed: list(pre.headers.get("access-control-allow-methods")) }).toEqual({ path, method, allowed: expect.arrayContaining([method]) });
        expect({ path, method, allowed: list(pre.headers.get("access-control-allow-headers")) }).toEqual({ path, method, allowed: expect.arrayContaining(headers) });
      }
    }
    expect([...methods].sort()).toEqual(["delete", "get", "patch", "post", "put"]);
    // What admin answers carry that a page needs to read: the challenge, the retry delay, the request id.
    const answer = await h.app.handle(new Request(`${BASE}/admin/projects`, { headers: { origin: BASE, authorization: `Bearer ${h.rootKey}` } }));
    expect(list(answer.headers.get("access-control-expose-headers"))).toEqual(expect.arrayContaining(["www-authenticate", "retry-after", "x-request-id"]));
  });
});
