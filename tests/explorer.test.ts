import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { BASE, harness } from "./helpers";

// Issue 12 §4: the explorer at /swagger (where administrators paste their keys) loads nothing from
// elsewhere: its script is the pinned dependency served by this service, under a strict CSP.
const pkgDir = join(import.meta.dir, "..", "node_modules", "@scalar", "api-reference");
const installed = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as { version: string };
const bundle = readFileSync(join(pkgDir, "dist", "browser", "standalone.js"));

function directives(csp: string): Map<string, string[]> {
  return new Map(
    csp
      .split(";")
      .map((d) => d.trim().split(/\s+/))
      .flatMap(([name, ...values]) => (name ? [[name, values]] : [])),
  );
}

describe("API explorer: self-hosted, pinned, under a CSP", async () => {
  let outbound = 0;
  const h = await harness({}, { fetch: (async () => (outbound++, Promise.reject(new Error("offline")))) as unknown as typeof fetch });
  const get = (path: string, headers: Record<string, string> = {}) => h.app.handle(new Request(BASE + path, { headers }));

  test("/swagger is our page: same-origin scripts only, no inline script, nothing remote", async () => {
    const res = await get("/swagger");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await res.text();
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBe(2);
    for (const [, attrs, body] of scripts) {
      expect(body!.trim()).toBe("");
      const src = /\bsrc="([^"]+)"/.exec(attrs!)?.[1] ?? "";
      expect(new URL(src, `${BASE}/swagger`).origin).toBe(BASE);
    }
    expect(html).not.toMatch(/https?:|\/\/|@latest|jsdelivr|unpkg|<style|style=|<link/i);
    expect(html).toContain(`swagger/assets/scalar-api-reference-${installed.version}.js`);
  });

  test("the page's CSP allows scripts and connections to this origin only, no eval, no framing", async () => {
    const res = await get("/swagger");
    const csp = directives(res.headers.get("content-security-policy") ?? "");
    expect(csp.get("default-src")).toEqual(["'none'"]);
    expect(csp.get("script-src")).toEqual(["'self'"]);
    expect(csp.get("connect-src")).toEqual(["'self'"]);
    expect(csp.get("frame-ancestors")).toEqual(["'none'"]);
    expect(csp.get("base-uri")).toEqual(["'none'"]);
    expect(csp.get("form-action")).toEqual(["'none'"]);
    for (const [name, values] of csp) {
      // Nothing but this origin (and data: for images and fonts): no host, no scheme-wide source.
      for (const v of values) expect({ name, v, ok: ["'self'", "'none'", "'unsafe-inline'", "data:"].includes(v) }).toEqual({ name, v, ok: true });
      if (name !== "style-src") expect(values).not.toContain("'unsafe-inline'");
      expect(values).not.toContain("'unsafe-eval'");
    }
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
  });

  test("the bundle is the installed pinned package's file, byte for byte, plain and gzipped, cached by version", async () => {
    const path = `/swagger/assets/scalar-api-reference-${installed.version}.js`;
    const plain = await get(path);
    expect(plain.status).toBe(200);
    expect(plain.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(plain.headers.get("x-content-type-options")).toBe("nosniff");
    expect(plain.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(Buffer.from(await plain.arrayBuffer()).equals(bundle)).toBe(true);
    const zipped = await get(path, { "accept-encoding": "gzip, deflate, br" });
    expect(zipped.status).toBe(200);
    expect(zipped.headers.get("content-encoding")).toBe("gzip");
    expect(zipped.headers.get("vary")).toBe("accept-encoding");
    const body = Buffer.from(await zipped.arrayBuffer());
    expect(body.length).toBeLessThan(bundle.length / 2);
    expect(gunzipSync(body).equals(bundle)).toBe(true);
    // Another version's name is not served.
    expect((await get("/swagger/assets/scalar-api-reference-latest.js")).status).toBe(404);
  });

  test("the init script points the explorer at /swagger/json with telemetry, web fonts and stored keys off", async () => {
    const res = await get("/swagger/assets/explorer.js");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    const js = await res.text();
    const config = JSON.parse(/^Scalar\.createApiReference\("#app", (\{.*\})\);\s*$/s.exec(js)?.[1] ?? "null");
    expect(config).toMatchObject({ url: "swagger/json", telemetry: false, withDefaultFonts: false, persistAuth: false, agent: { disabled: true } });
    const doc = await get(new URL(config.url, `${BASE}/swagger`).pathname);
    expect(doc.status).toBe(200);
    expect((await doc.json()).openapi).toBe("3.0.3");
  });

  test("serving the explorer makes no outbound request, and the explorer is not an API operation", async () => {
    expect(outbound).toBe(0);
    const spec = (await (await get("/swagger/json")).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(spec.paths).filter((p) => p.startsWith("/swagger"))).toEqual([]);
  });
});
