// Upload from a URL (media.md): its own private-address setting, refusals that never repeat the
// upstream status, and the inputs that once answered 500 (a `%ff` path, a body trickling past the
// time bound). A loopback server stands in for the remote site.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { harness, seedProject, type TestHarness, waitFor } from "./helpers";
import { twoColourPng } from "./media.helpers";

let png: Uint8Array;
let base = "";
let trickleCancelled = false;
let server: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  png = await twoColourPng(64, 16);
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (r) => {
      const path = new URL(r.url).pathname;
      if (path.startsWith("/pic")) return new Response(png as Uint8Array<ArrayBuffer>, { headers: { "content-type": "image/png" } });
      if (path === "/status/500") return new Response("upstream trace: db at 10.0.0.7", { status: 500 });
      if (path === "/status/404") return new Response("no", { status: 404 });
      if (path === "/status/302") return Response.redirect("http://127.0.0.1:1/pic.png", 302);
      if (path === "/trickle") {
        // The PNG's first bytes, then one more every 50 ms: the remote site's pace, which the
        // upload must give up on at its time bound (the test waits for nothing here).
        let sent = 0;
        const body = new ReadableStream<Uint8Array>({
          async pull(c) {
            if (sent > 0) await Bun.sleep(50); // fixed wait: the remote site's pace
            c.enqueue(png.subarray(sent, sent + (sent === 0 ? 16 : 1)));
            sent += sent === 0 ? 16 : 1;
            if (sent >= png.length) c.close();
          },
          cancel() {
            trickleCancelled = true;
          },
        });
        return new Response(body, { headers: { "content-type": "image/png" } });
      }
      return new Response("no", { status: 404 });
    },
  });
  base = `http://127.0.0.1:${server.port}`;
});
afterAll(() => server?.stop(true));

const fromUrl = (h: TestHarness, ref: string, url: string) => h.request("POST", `/admin/p/${ref}/media/from-url`, { body: { url } });
const dataDir = (): string => mkdtempSync(join(tmpdir(), "media-url-"));

describe("upload from a URL: its own private-address setting", () => {
  test("AI_ALLOW_PRIVATE_URLS=true does not open it: loopback is refused by the outbound guard, naming MEDIA_ALLOW_PRIVATE_URLS", async () => {
    const h = await harness({ DATA_DIR: dataDir(), AI_ALLOW_PRIVATE_URLS: "true" });
    const { slug } = await seedProject(h);
    const https = await fromUrl(h, slug, `https://127.0.0.1:${server.port}/pic.png`);
    expect(https.status).toBe(400);
    expect(https.json.error).toMatchObject({ code: "invalid_request", details: { field: "url" } });
    expect(https.json.error.message).toBe("url points to a private or loopback address (allowed only with MEDIA_ALLOW_PRIVATE_URLS=true)");
    const http = await fromUrl(h, slug, `${base}/pic.png`);
    expect(http.status).toBe(400);
    expect(http.json.error.message).toBe("url must use https (http needs MEDIA_ALLOW_PRIVATE_URLS=true)");
    expect((await h.request("GET", `/admin/p/${slug}/media`)).json.total).toBe(0);
  });

  test("MEDIA_ALLOW_PRIVATE_URLS=true opens it (AI_ALLOW_PRIVATE_URLS unset); metadata addresses stay refused", async () => {
    const h = await harness({ DATA_DIR: dataDir(), MEDIA_ALLOW_PRIVATE_URLS: "true" });
    const { slug } = await seedProject(h);
    const ok = await fromUrl(h, slug, `${base}/pic.png`);
    expect(ok.status).toBe(201);
    expect(ok.json.data).toMatchObject({ type: "image/png", filename: "pic.png", size: png.length });
    const metadata = await fromUrl(h, slug, "http://169.254.169.254/latest/meta-data");
    expect(metadata.status).toBe(400);
    expect(metadata.json.error.message).toContain("link-local or cloud metadata");
  });
});

describe("upload from a URL: what the remote answers", () => {
  let h: TestHarness;
  let slug: string;
  beforeAll(async () => {
    h = await harness({ DATA_DIR: dataDir(), MEDIA_ALLOW_PRIVATE_URLS: "true", MEDIA_FETCH_TIMEOUT_MS: "500" });
    slug = (await seedProject(h)).slug;
  });

  test("an upstream 500, 404 or redirect is 400 invalid_request whose answer never repeats the upstream status", async () => {
    for (const status of [500, 404, 302]) {
      const res = await fromUrl(h, slug, `${base}/status/${status}`);
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe("invalid_request");
      expect(res.json.error.details).toEqual({ field: "url" });
      expect(res.json.error.message).not.toContain(String(status));
      expect(res.text).not.toMatch(new RegExp(`\\b${status}\\b`));
      expect(res.text).not.toContain("10.0.0.7");
    }
  });

  test("a path with %ff (not UTF-8 once decoded) is fetched, its file name made safe, never a 500", async () => {
    const res = await fromUrl(h, slug, `${base}/pic%ff%fe.png`);
    expect(res.status).toBe(201);
    expect(res.json.data).toMatchObject({ type: "image/png", filename: "pic-ff-fe.png" });
  });

  test("a body trickling past MEDIA_FETCH_TIMEOUT_MS is 400 invalid_request, and the connection is given up", async () => {
    const started = performance.now();
    const res = await fromUrl(h, slug, `${base}/trickle`);
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ code: "invalid_request", details: { field: "url" } });
    expect(res.json.error.message).toContain("MEDIA_FETCH_TIMEOUT_MS");
    // Answered at the bound, not when the remote would have finished (about 20 s at its pace).
    expect(performance.now() - started).toBeLessThan(5000);
    await waitFor(() => trickleCancelled, { what: "the remote's stream to be cancelled" });
    expect((await h.request("GET", `/admin/p/${slug}/media?q=trickle`)).json.total).toBe(0);
  });
});
