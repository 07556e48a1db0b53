// Variant rendering under attack (issue 36, item 2) and media answers in memory (item 3): names
// reduced to what changes the output, renders under a queue, a per-client rate and the project's
// quota, MEDIA_VARIANTS=strict, the memory cache keyed by the canonical variant and dropped on a
// deletion, PDF sandboxed. Real app, real database, real sharp, local disk.
import { beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import sharp from "sharp";
import { loadConfig } from "../src/config";
import type { AppDeps } from "../src/core/deps";
import { WorkQueue } from "../src/lib/work-queue";
import { harness, seedProject, type TestHarness, waitFor } from "./helpers";
import { twoColourPng, uploadForm } from "./media.helpers";

/** Noise: it does not compress, so its renders cost what real photos cost. */
async function noise(width: number, height: number, format: "png" | "jpeg" = "png"): Promise<Uint8Array> {
  const img = sharp({ create: { width, height, channels: 3, background: "#000", noise: { type: "gaussian", mean: 128, sigma: 60 } } });
  return new Uint8Array(await (format === "png" ? img.png() : img.jpeg({ quality: 90 })).toBuffer());
}

/** The variants stored for a hash on disk: names and bytes. */
function storedVariants(dataDir: string, hash: string): { names: string[]; bytes: number } {
  const dir = join(dataDir, "media", hash.slice(0, 2), hash, "v");
  let names: string[] = [];
  try {
    names = readdirSync(dir).filter((n) => !n.endsWith(".tmp"));
  } catch {
    names = [];
  }
  return { names, bytes: names.reduce((n, f) => n + statSync(join(dir, f)).size, 0) };
}

const get = (h: TestHarness, url: string, headers: Record<string, string> = {}): Promise<Response> => Promise.resolve(h.app.handle(new Request(url, { headers })));

describe("media variants: canonical names, memory, PDF", () => {
  let h: TestHarness;
  let dataDir: string;
  let ref: string;
  let wide: any;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "media-render-"));
    h = await harness({ DATA_DIR: dataDir, MEDIA_RENDER_RATE: "1000" });
    ref = (await seedProject(h)).slug;
    wide = (await uploadForm(h, ref, await twoColourPng(1280, 320), "wide.png")).json.data;
  }, 120_000);

  test("eight spellings of q for a PNG render and store one object, under one ETag", async () => {
    const item = (await uploadForm(h, ref, await noise(900, 700), "noise.png")).json.data;
    const etags = new Set<string | null>();
    for (const q of [40, 50, 60, 70, 75, 80, 90, 100]) {
      const res = await get(h, `${item.url}&w=640&fm=png&q=${q}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("image/png");
      etags.add(res.headers.get("etag"));
      await res.arrayBuffer();
    }
    const stored = storedVariants(dataDir, item.hash);
    console.log(`media-render: 8 q spellings of one PNG variant stored ${stored.names.length} object(s), ${stored.bytes} bytes`);
    expect(stored.names).toEqual(["r640x498.png"]);
    expect(etags.size).toBe(1);
  });

  test("fit without both sizes, and sizes past the original, name the variant they render; nothing is enlarged", async () => {
    const names = async (queries: string[]): Promise<Set<string | null>> => {
      const tags = new Set<string | null>();
      for (const q of queries) {
        const res = await get(h, `${wide.url}&${q}`);
        expect(res.status).toBe(200);
        tags.add(res.headers.get("etag"));
        await res.arrayBuffer();
      }
      return tags;
    };
    expect((await names(["w=640&fm=webp", "w=640&fit=cover&fm=webp", "w=640&fit=contain&fm=webp", "w=640&h=2560&fit=inside&fm=webp"])).size).toBe(1);
    // 2560 wide on a 1280 × 320 image is the image at its own size.
    const full = await names(["w=2560&fm=webp", "w=1600&fm=webp", "fm=webp", "h=1024&fm=webp"]);
    expect(full.size).toBe(1);
    const res = await get(h, `${wide.url}&w=2560&fm=webp`);
    expect(await sharp(new Uint8Array(await res.arrayBuffer())).metadata()).toMatchObject({ width: 1280, height: 320 });
    // A cover box larger than the image keeps its shape at the image's resolution: 640 × 640 of a 320-high image is 320 × 320.
    const cover = await get(h, `${wide.url}&w=640&h=640&fm=png`);
    expect(await sharp(new Uint8Array(await cover.arrayBuffer())).metadata()).toMatchObject({ width: 320, height: 320 });
    expect(storedVariants(dataDir, wide.hash).names.sort()).toEqual(["o-q75.webp", "o-e480.0.320x320.png", "r640x160-q75.webp"].sort());
  });

  test("answers in memory are keyed by the canonical variant (padded URLs share it) and a deleted item is not served at once", async () => {
    const item = (await uploadForm(h, ref, await twoColourPng(640, 160), "kept.png")).json.data;
    const url = `${item.url}&w=320&fm=webp`;
    const first = await get(h, url);
    expect(first.status).toBe(200);
    const etag = first.headers.get("etag");
    // Another file name and unknown parameters 7 KB long: the same entry, answered before routing.
    const padded = `${url.replace("/kept.png?", "/other-name.png?")}&pad=${"x".repeat(7000)}`;
    const fast = h.front.answer(new Request(padded));
    expect(fast?.status).toBe(200);
    expect(fast?.headers.get("etag")).toBe(etag);
    expect((await h.request("DELETE", `/admin/p/${ref}/media/${item.id}?force=true`)).status).toBe(204);
    expect(h.front.answer(new Request(url))).toBeNull();
    expect((await get(h, url)).status).toBe(404);
    expect((await get(h, item.url)).status).toBe(404);
  });

  test("a PDF is served with Content-Security-Policy: sandbox; SVG keeps its policy", async () => {
    const pdf = new TextEncoder().encode("%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n");
    const up = await uploadForm(h, ref, pdf, "doc.pdf");
    expect(up.status).toBe(201);
    const res = await get(h, up.json.data.url);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/pdf");
    expect(res.headers.get("content-security-policy")).toBe("sandbox");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    const svg = await uploadForm(h, ref, new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>'), "a.svg");
    expect((await get(h, svg.json.data.url)).headers.get("content-security-policy")).toStartWith("sandbox; default-src 'none'");
  });

  test("rendered variants count in the project's storage: past the quota nothing more is rendered (413), uploads see the usage", async () => {
    const p = await seedProject(h);
    const bytes = await noise(400, 300);
    expect((await h.request("PATCH", `/admin/projects/${p.slug}`, { body: { media_quota_bytes: bytes.length + 20_000 } })).status).toBe(200);
    const item = (await uploadForm(h, p.slug, bytes, "q.png")).json.data;
    const one = await get(h, `${item.url}&w=320&fm=png`);
    expect(one.status).toBe(200);
    const size = (await one.arrayBuffer()).byteLength;
    const rows = await h.deps.db.execute(sql`select name, size from media_variants where project_id = ${p.id}`);
    expect((Array.isArray(rows) ? rows : (rows as any).rows).map((r: any) => [r.name, Number(r.size)])).toEqual([["r320x240.png", size]]);
    const over = await get(h, `${item.url}&w=320&fm=webp`);
    expect(over.status).toBe(413);
    expect((await over.json()).error).toMatchObject({ code: "quota_exceeded", details: { used_bytes: bytes.length + size } });
    expect((await get(h, `${item.url}&w=320&fm=png`)).status).toBe(200); // stored: still served
    const upload = await uploadForm(h, p.slug, await twoColourPng(64, 64), "small.png");
    expect(upload.status).toBe(413);
    expect(upload.json.error.details.used_bytes).toBe(bytes.length + size);
  });
});

describe("media variants: rate, queue, strict", () => {
  test("MEDIA_RENDER_RATE per client address: 429 with Retry-After; stored variants and other clients are served", async () => {
    const h = await harness({ DATA_DIR: mkdtempSync(join(tmpdir(), "media-rate-")), MEDIA_RENDER_RATE: "2", TRUST_PROXY: "true" });
    const ref = (await seedProject(h)).slug;
    const item = (await uploadForm(h, ref, await twoColourPng(640, 160), "r.png")).json.data;
    const a = { "x-forwarded-for": "203.0.113.7" };
    expect((await get(h, `${item.url}&w=320&fm=webp`, a)).status).toBe(200);
    expect((await get(h, `${item.url}&w=320&fm=png`, a)).status).toBe(200);
    const refused = await get(h, `${item.url}&w=320&fm=jpeg`, a);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await refused.json()).error.code).toBe("rate_limited");
    expect((await get(h, `${item.url}&w=320&fm=webp&q=70`, a)).status).toBe(200); // stored: not a render
    expect((await get(h, `${item.url}&w=320&fm=jpeg`, { "x-forwarded-for": "198.51.100.9" })).status).toBe(200);
  });

  test("renders queue: MEDIA_RENDER_CONCURRENCY run, then the queue (one project at most half), beyond it 503 with Retry-After", async () => {
    const queue = new WorkQueue(1, 2);
    const h = await harness({ DATA_DIR: mkdtempSync(join(tmpdir(), "media-queue-")), MEDIA_RENDER_RATE: "1000" }, { renderQueue: queue } as Partial<AppDeps>);
    const [a, b] = [await seedProject(h), await seedProject(h)];
    const big = await noise(1600, 1600, "jpeg");
    const itemA = (await uploadForm(h, a.slug, big, "a.jpg")).json.data;
    const itemB = (await uploadForm(h, b.slug, await noise(800, 800, "jpeg"), "b.jpg")).json.data;
    const running = get(h, `${itemA.url}&w=1600&fm=webp`);
    await waitFor(() => queue.stats().running === 1, { what: "the first render to run" });
    const waiting = get(h, `${itemA.url}&w=1280&fm=webp`);
    await waitFor(() => queue.stats().waiting === 1, { what: "the second to wait" });
    const full = await get(h, `${itemA.url}&w=1024&fm=webp`);
    expect(full.status).toBe(503);
    expect(Number(full.headers.get("retry-after"))).toBeGreaterThan(0);
    // Project A holds its half of the queue; project B still gets a place, and past it, 503 too.
    const other = get(h, `${itemB.url}&w=640&fm=webp`);
    await waitFor(() => queue.stats().waiting === 2, { what: "project B's render to wait" });
    expect((await get(h, `${itemB.url}&w=320&fm=webp`)).status).toBe(503);
    for (const r of await Promise.all([running, waiting, other])) expect(r.status).toBe(200);
    expect(queue.stats()).toEqual({ running: 0, waiting: 0 });
  }, 120_000);

  test("MEDIA_VARIANTS=strict: the set is rendered after the upload; anything else is refused (400)", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "media-strict-"));
    const h = await harness({ DATA_DIR: dataDir, MEDIA_VARIANTS: "strict", MEDIA_VARIANT_SET: "w=320&fm=webp w=640&h=640&fit=cover&fm=jpeg" });
    const ref = (await seedProject(h)).slug;
    const item = (await uploadForm(h, ref, await twoColourPng(1280, 320), "s.png")).json.data;
    await waitFor(() => storedVariants(dataDir, item.hash).names.length === 2, { timeout: 30_000, what: "the pre-rendered set" });
    expect(storedVariants(dataDir, item.hash).names.sort()).toEqual(["o-e480.0.320x320-q75.jpeg", "r320x80-q75.webp"]);
    expect((await get(h, `${item.url}&w=320&fm=webp`)).status).toBe(200);
    expect((await get(h, `${item.url}&w=320`, { accept: "image/webp" })).status).toBe(200); // fm=auto answering WebP: the same variant
    const refused = await get(h, `${item.url}&w=640&fm=webp`);
    expect(refused.status).toBe(400);
    expect((await refused.json()).error.details.field).toBe("variant");
    expect((await get(h, item.url)).status).toBe(200);
    expect(storedVariants(dataDir, item.hash).names).toHaveLength(2);
  }, 60_000);

  test("a second project's upload completes promptly while the first's renders run", async () => {
    const defaults = loadConfig({}).media;
    const queue = new WorkQueue(defaults.renderConcurrency, defaults.renderQueue);
    const h = await harness({ DATA_DIR: mkdtempSync(join(tmpdir(), "media-tenant-")), MEDIA_RENDER_RATE: "1000" }, { renderQueue: queue } as Partial<AppDeps>);
    const [a, b] = [await seedProject(h), await seedProject(h)];
    const itemA = (await uploadForm(h, a.slug, await noise(1600, 1600, "jpeg"), "a.jpg")).json.data;
    const photo = await noise(1024, 768, "jpeg");
    const upload = async (): Promise<number> => {
      const t = performance.now();
      const res = await uploadForm(h, b.slug, photo, "b.jpg");
      expect(res.status).toBe(201);
      return performance.now() - t;
    };
    const idle = await upload();
    const t0 = performance.now();
    const renders = [1600, 1280, 1024, 800].map((w) => get(h, `${itemA.url}&w=${w}&fm=webp`).then(async (r) => (await r.arrayBuffer(), performance.now() - t0)));
    await waitFor(() => queue.stats().running > 0, { what: "a render to run" });
    const loaded = await upload();
    const finished = await Promise.all(renders);
    const last = Math.max(...finished);
    console.log(`media-render: second project's upload ${Math.round(idle)} ms idle, ${Math.round(loaded)} ms while 4 renders of project A ran (they took ${Math.round(last)} ms)`);
    // Before renders were queued, the upload waited for nearly all of them (2,700 ms of 2,976 ms here): sharp's work shares one thread pool.
    expect(loaded).toBeLessThan(last / 3);
  }, 180_000);
});
