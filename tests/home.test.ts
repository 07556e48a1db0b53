import { afterAll, describe, expect, test } from "bun:test";
import pkg from "../package.json";
import { seedDemo } from "../src/demo";
import { APP_VERSION } from "../src/home/routes";
import { BASE, freshDatabase, harness, readReply } from "./helpers";

describe("GET /: where a newcomer lands", async () => {
  // A database of its own: whether the demo project exists is part of what is tested.
  const fresh = await freshDatabase();
  afterAll(() => fresh.drop());
  const h = await harness({}, { db: fresh.handle.db, dbHandle: fresh.handle });
  const home = (accept?: string) => h.app.handle(new Request(`${BASE}/`, { headers: accept === undefined ? {} : { accept } })).then(readReply);

  test("JSON by default (curl, fetch, */*): version and the links, no demo links while there is no demo project", async () => {
    expect(APP_VERSION).toBe(pkg.version);
    for (const accept of [undefined, "*/*", "application/json", "application/json, text/html;q=0.9"]) {
      const res = await home(accept);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(res.headers.get("vary")).toBe("Accept");
      expect(res.json.version).toBe(pkg.version);
      const links = Object.fromEntries(res.json.links.map((l: any) => [l.rel, l.href]));
      expect(links).toMatchObject({
        studio: `${BASE}/studio/`,
        "api-explorer": `${BASE}/swagger`,
        health: `${BASE}/healthz`,
        ready: `${BASE}/readyz`,
        mcp: `${BASE}/mcp`,
      });
      expect(res.json.demo).toBeNull();
    }
  });

  test("every link it gives answers (explorer, health, readiness; MCP asks for credentials)", async () => {
    const res = await home();
    for (const l of res.json.links) {
      const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } };
      const r =
        l.rel === "mcp"
          ? await h.app.handle(new Request(l.href, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify(init) }))
          : await h.app.handle(new Request(l.href));
      if (l.rel === "mcp") {
        expect(r.status).toBe(401);
        expect(r.headers.get("www-authenticate")).toContain("resource_metadata");
      } else expect(r.status).toBe(200);
      await r.arrayBuffer();
    }
  });

  test("a browser gets a small HTML page with the same links, escaped, no script allowed", async () => {
    const res = await home("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(res.text.startsWith("<!doctype html>")).toBe(true);
    expect(res.text).toContain(`Version <strong>${pkg.version}</strong>`);
    for (const path of ["/swagger", "/healthz", "/readyz", "/mcp"]) expect(res.text).toContain(`href="${BASE}${path}"`);
    // The studio first: the page's first link, before the developers' list.
    expect(res.text.indexOf(`href="${BASE}/studio/"`)).toBeGreaterThan(0);
    expect(res.text.indexOf(`href="${BASE}/studio/"`)).toBeLessThan(res.text.indexOf(`href="${BASE}/swagger"`));
    expect(res.text).toContain("No demo project");
    expect(res.text).not.toContain("<script");
  });

  test("once the demo project exists, both forms list its delivery URLs, and they answer", async () => {
    await seedDemo(fresh.handle.db, new Date());
    const json = await home();
    const demo = json.json.demo.map((l: any) => l.href);
    expect(demo).toContain(`${BASE}/api/p/demo/nodes/by-path/home`);
    expect(demo).toContain(`${BASE}/api/p/demo/sitemap.xml`);
    for (const href of demo) {
      const r = await h.app.handle(new Request(href));
      expect(r.status).toBe(200);
      await r.arrayBuffer();
    }
    const html = await home("text/html");
    expect(html.text).toContain(`href="${BASE}/api/p/demo/nodes/by-path/home"`);
    expect(html.text).toContain(`href="${BASE}/api/p/demo/entries?collection=blog"`.replace("&", "&amp;"));
    expect(html.text).not.toContain("No demo project");
  });
});
