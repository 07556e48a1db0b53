// /studio serves the built app (issue 38): index.html for every route of the app (deep links
// survive a reload), no-cache, under a CSP without inline script; hashed assets immutable and
// gzipped; an unknown asset or studio API route is 404, never the page.
import { describe, expect, test } from "bun:test";
import { gunzipSync } from "node:zlib";
import { BASE, harness } from "./helpers";

describe("serving the studio", async () => {
  const h = await harness();
  const get = (path: string, headers: Record<string, string> = {}) => h.app.handle(new Request(BASE + path, { headers }));

  test("every route of the app answers index.html: no-cache, the CSP, no inline script, framing refused", async () => {
    const pages = await Promise.all(["/studio", "/studio/", "/studio/p/demo", "/studio/p/demo/nodes/0196f0b0-0000-7000-8000-000000000000?locale=fr", "/studio/sessions"].map((p) => get(p)));
    const bodies = await Promise.all(pages.map((r) => r.text()));
    for (const [i, r] of pages.entries()) {
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(r.headers.get("cache-control")).toBe("no-cache");
      const csp = r.headers.get("content-security-policy") ?? "";
      expect(csp).toContain("script-src 'self';");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("default-src 'none'");
      expect(csp).not.toContain("unsafe-inline");
      expect(csp).not.toContain("unsafe-eval");
      expect(r.headers.get("x-frame-options")).toBe("DENY");
      expect(bodies[i]).toBe(bodies[0] as string);
    }
    const html = bodies[0] ?? "";
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attrs, body] of scripts) {
      expect(attrs).toMatch(/src="\/studio\/assets\/[^"]+\.js"/);
      expect(body?.trim()).toBe("");
    }
    expect(html.replace(/<!--[\s\S]*?-->/g, "")).not.toMatch(/<style\b|\sstyle="/);
  });

  test("hashed assets: immutable, gzipped when asked, the bytes the page names; an unknown asset is 404", async () => {
    const html = await (await get("/studio/")).text();
    const assets = [...html.matchAll(/(?:src|href)="(\/studio\/assets\/[^"]+)"/g)].map((m) => m[1] as string);
    expect(assets.some((a) => a.endsWith(".js"))).toBe(true);
    expect(assets.some((a) => a.endsWith(".css"))).toBe(true);
    for (const a of assets) {
      const plain = await get(a);
      expect(plain.status).toBe(200);
      expect(plain.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(plain.headers.get("content-type")).toBe(a.endsWith(".js") ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8");
      const bytes = new Uint8Array(await plain.arrayBuffer());
      const zipped = await get(a, { "accept-encoding": "gzip, br" });
      expect(zipped.headers.get("content-encoding")).toBe("gzip");
      expect(zipped.headers.get("vary")).toBe("accept-encoding");
      expect(gunzipSync(new Uint8Array(await zipped.arrayBuffer()))).toEqual(Buffer.from(bytes));
    }
    const missing = await get("/studio/assets/nope-12345678.js");
    expect(missing.status).toBe(404);
    expect(await missing.text()).not.toContain("<!doctype");
    const api = await get("/studio/api/nope");
    expect(api.status).toBe(404);
    expect((await api.json()).error.code).toBe("not_found");
  });
});
