// The media library end to end (issue 26), run over each storage driver: media.test.ts (local disk)
// and media-s3.test.ts (s3rver on loopback). Real app, real database, real sharp; the app builds its
// storage from the environment (MEDIA_STORAGE, MEDIA_S3_*, DATA_DIR) as a deployment's does.
import { beforeAll, describe, expect, test } from "bun:test";
import sharp from "sharp";
import { media } from "../db/schema";
import { harness, keyWith, seedNode, seedProject, type TestHarness } from "./helpers";
import { jpegWithGps, pngBomb, twoColourPng, uploadForm } from "./media.helpers";

export interface SuiteSetup {
  /** The environment that chooses and configures the storage. */
  env(): Record<string, string>;
  /** Every object's key in the storage, read without the app's driver. */
  keys(): Promise<string[]>;
  /** True when the object is in the storage. */
  has(key: string): Promise<boolean>;
  /** Every object written (a rewrite of a key too), where the storage tells (S3: the server's events); null where it does not (disk). */
  written(): readonly string[] | null;
}

export function mediaSuite(name: string, setup: SuiteSetup): void {
  describe(`media library (${name})`, () => {
    let h: TestHarness;
    let ref: string;
    let projectId: string;
    let photo: any;
    /** The keys stored since `before` (a listing). */
    const added = async (before: readonly string[]): Promise<string[]> => (await setup.keys()).filter((k) => !before.includes(k));
    /** How many times each key was written since the `from`th write, where the storage tells. */
    const writesSince = (from: number | undefined): string[] | null => setup.written()?.slice(from) ?? null;

    beforeAll(async () => {
      h = await harness(setup.env());
      const p = await seedProject(h);
      ref = p.slug;
      projectId = p.id;
    }, 120_000);

    test("multipart upload: type from the bytes, size, EXIF location stripped, placeholder and dominant colour", async () => {
      const bytes = await jpegWithGps();
      expect((await sharp(bytes).metadata()).exif).toBeDefined();
      const res = await uploadForm(h, ref, bytes, "Holiday Photo.png", { alt: "A red wall", title: "Wall", focal_x: "0.25", focal_y: "0.5" }, { type: "image/png" });
      expect(res.status).toBe(201);
      photo = res.json.data;
      expect(photo).toMatchObject({ type: "image/jpeg", filename: "Holiday-Photo.jpg", width: 1200, height: 800, title: "Wall", alt: { en: "A red wall" }, focal_point: { x: 0.25, y: 0.5 } });
      expect(photo.placeholder).toMatch(/^[A-Za-z0-9+/]+=*$/);
      expect(photo.dominant_color).toMatch(/^#[0-9a-f]{6}$/);
      expect(photo.url).toContain(`/api/p/${ref}/media/${photo.id}/Holiday-Photo.jpg?v=`);
      // The stored original carries no EXIF (so no location), as the delivered file shows.
      const original = await h.app.handle(new Request(photo.url));
      expect(original.status).toBe(200);
      const served = new Uint8Array(await original.arrayBuffer());
      expect(served.length).toBe(photo.size);
      const meta = await sharp(served).metadata();
      expect(meta.exif).toBeUndefined();
      expect(new TextDecoder("latin1").decode(served)).not.toContain("GPS");
      const [row] = await h.deps.db
        .select()
        .from(media)
        .where((await import("drizzle-orm")).eq(media.id, photo.id));
      expect(row?.hash).toBe(photo.hash);
      expect(await setup.has(`${photo.hash.slice(0, 2)}/${photo.hash}/original`)).toBe(true);
    });

    test("the same bytes are stored once", async () => {
      const bytes = await twoColourPng(640, 160);
      const before = await setup.keys();
      const from = setup.written()?.length;
      const a = await uploadForm(h, ref, bytes, "a.png");
      const b = await uploadForm(h, ref, bytes, "b.png");
      expect(a.status).toBe(201);
      expect(b.status).toBe(201);
      expect(a.json.data.id).not.toBe(b.json.data.id);
      expect(a.json.data.hash).toBe(b.json.data.hash);
      const key = `${a.json.data.hash.slice(0, 2)}/${a.json.data.hash}/original`;
      expect(await added(before)).toEqual([key]);
      // Where the storage tells its writes: the second upload wrote nothing.
      expect(writesSince(from) ?? [key]).toEqual([key]);
    });

    test("a renamed executable is refused (415), whatever its name and header say", async () => {
      const elf = new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, ...new Array(200).fill(0)]);
      const res = await uploadForm(h, ref, elf, "cat.jpg", {}, { type: "image/jpeg" });
      expect(res.status).toBe(415);
      expect(res.json.error.code).toBe("unsupported_media_type");
      const mz = new Uint8Array([0x4d, 0x5a, 0x90, 0, 3, 0, 0, 0, ...new Array(200).fill(0)]);
      expect((await uploadForm(h, ref, mz, "cat.png", {}, { type: "image/png" })).status).toBe(415);
    });

    test("a decompression bomb is refused from its header, before decoding (413)", async () => {
      const bomb = pngBomb();
      expect(bomb.length).toBeLessThan(20_000);
      const res = await uploadForm(h, ref, bomb, "bomb.png");
      expect(res.status).toBe(413);
      expect(res.json.error.code).toBe("payload_too_large");
      expect(res.json.error.details).toMatchObject({ width: 50_000, height: 50_000 });
    });

    test("an SVG with a script is served harmlessly: sandboxing CSP, nosniff, never transformed", async () => {
      const svg = new TextEncoder().encode(
        '<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="120" height="80"><script>alert(document.cookie)</script><rect width="120" height="80"/></svg>',
      );
      const up = await uploadForm(h, ref, svg, "logo.svg");
      expect(up.status).toBe(201);
      expect(up.json.data).toMatchObject({ type: "image/svg+xml", width: 120, height: 80 });
      const res = await h.app.handle(new Request(`${up.json.data.url}&w=320&fm=webp`));
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("image/svg+xml");
      expect(res.headers.get("content-security-policy")).toStartWith("sandbox");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(await res.text()).toContain("<script>");
    });

    test("variants: rendered once under 32 concurrent requests, stored beside the original, ETag, 304, immutable", async () => {
      const url = `${photo.url}&w=640&fm=webp`;
      const before = await setup.keys();
      const from = setup.written()?.length;
      const answers = await Promise.all(Array.from({ length: 32 }, () => h.app.handle(new Request(url))));
      const bodies = await Promise.all(answers.map(async (r) => new Uint8Array(await r.arrayBuffer())));
      for (const r of answers) {
        expect(r.status).toBe(200);
        expect(r.headers.get("content-type")).toBe("image/webp");
        expect(r.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      }
      expect(new Set(answers.map((r) => r.headers.get("etag"))).size).toBe(1);
      expect(bodies.every((b) => b.length === bodies[0]?.length)).toBe(true);
      const variant = `${photo.hash.slice(0, 2)}/${photo.hash}/v/r640x427-q75.webp`;
      expect(await added(before)).toEqual([variant]);
      // Rendered and stored once, not once per request (where the storage tells its writes).
      expect(writesSince(from) ?? [variant]).toEqual([variant]);
      expect(await setup.has(variant)).toBe(true);
      const meta = await sharp(bodies[0]).metadata();
      expect(meta).toMatchObject({ format: "webp", width: 640, height: 427 });
      expect(meta.exif).toBeUndefined();
      // Conditional GET.
      const etag = answers[0]?.headers.get("etag") ?? "";
      const again = await h.app.handle(new Request(url, { headers: { "if-none-match": etag } }));
      expect(again.status).toBe(304);
      expect(again.headers.get("etag")).toBe(etag);
      expect(await again.text()).toBe("");
      // Without the current version tag: revalidated, not immutable.
      const stale = await h.app.handle(new Request(url.replace(/v=[^&]+/, "v=old")));
      expect(stale.headers.get("cache-control")).toBe("public, max-age=60");
      expect(await added(before)).toEqual([variant]);
    });

    test("ranges: 206 of the asked bytes (kept in memory or streamed from the storage), 416 past the end, If-Range, HEAD", async () => {
      // A small original (answered from memory) and one larger than what memory keeps (streamed by chunks).
      const small = await twoColourPng(64, 32);
      const large = new Uint8Array(
        await sharp({ create: { width: 360, height: 300, channels: 3, background: "#000", noise: { type: "gaussian", mean: 128, sigma: 60 } } })
          .png()
          .toBuffer(),
      );
      expect(large.length).toBeGreaterThan(300 * 1024);
      for (const bytes of [small, large]) {
        const up = await uploadForm(h, ref, bytes, "ranged.png");
        expect(up.status).toBe(201);
        const url = up.json.data.url;
        const whole = await h.app.handle(new Request(url));
        expect(whole.status).toBe(200);
        expect(whole.headers.get("accept-ranges")).toBe("bytes");
        expect(new Uint8Array(await whole.arrayBuffer())).toEqual(bytes as Uint8Array<ArrayBuffer>);
        const etag = whole.headers.get("etag") ?? "";
        const part = await h.app.handle(new Request(url, { headers: { range: "bytes=10-109" } }));
        expect(part.status).toBe(206);
        expect(part.headers.get("content-range")).toBe(`bytes 10-109/${bytes.length}`);
        expect(part.headers.get("content-length")).toBe("100");
        expect(new Uint8Array(await part.arrayBuffer())).toEqual(bytes.subarray(10, 110) as Uint8Array<ArrayBuffer>);
        const tail = await h.app.handle(new Request(url, { headers: { range: "bytes=-7" } }));
        expect(tail.status).toBe(206);
        expect(new Uint8Array(await tail.arrayBuffer())).toEqual(bytes.subarray(bytes.length - 7) as Uint8Array<ArrayBuffer>);
        const open = await h.app.handle(new Request(url, { headers: { range: `bytes=${bytes.length - 5}-` } }));
        expect(open.headers.get("content-range")).toBe(`bytes ${bytes.length - 5}-${bytes.length - 1}/${bytes.length}`);
        expect((await open.arrayBuffer()).byteLength).toBe(5);
        const past = await h.app.handle(new Request(url, { headers: { range: `bytes=${bytes.length}-` } }));
        expect(past.status).toBe(416);
        expect(past.headers.get("content-range")).toBe(`bytes */${bytes.length}`);
        const stale = await h.app.handle(new Request(url, { headers: { range: "bytes=0-9", "if-range": '"other"' } }));
        expect(stale.status).toBe(200);
        expect((await stale.arrayBuffer()).byteLength).toBe(bytes.length);
        const same = await h.app.handle(new Request(url, { headers: { range: "bytes=0-9", "if-range": etag } }));
        expect(same.status).toBe(206);
        expect((await h.app.handle(new Request(url, { headers: { "if-none-match": etag } }))).status).toBe(304);
        const head = await h.app.handle(new Request(url, { method: "HEAD" }));
        expect(head.status).toBe(200);
        expect(head.headers.get("content-length")).toBe(String(bytes.length));
      }
      // A variant of several MiB: read by chunks (S3: ranged GETs of 1 MiB), a range across a chunk's end.
      const photo = await sharp({ create: { width: 1000, height: 1000, channels: 3, background: "#000", noise: { type: "gaussian", mean: 128, sigma: 60 } } })
        .jpeg({ quality: 70 })
        .toBuffer();
      const up = await uploadForm(h, ref, new Uint8Array(photo), "big.jpg");
      expect(up.status).toBe(201);
      const variant = `${up.json.data.url}&fm=png`;
      const whole = new Uint8Array(await (await h.app.handle(new Request(variant))).arrayBuffer());
      expect(whole.length).toBeGreaterThan(2 * 1024 * 1024);
      const across = await h.app.handle(new Request(variant, { headers: { range: `bytes=${1024 * 1024 - 10}-${1024 * 1024 + 9}` } }));
      expect(across.status).toBe(206);
      expect(new Uint8Array(await across.arrayBuffer())).toEqual(whole.subarray(1024 * 1024 - 10, 1024 * 1024 + 10));
    });

    test("fm=auto picks from Accept with Vary: Accept; widths outside the list and unknown formats are refused", async () => {
      const avif = await h.app.handle(new Request(`${photo.url}&w=320`, { headers: { accept: "image/avif,image/webp,*/*" } }));
      expect(avif.status).toBe(200);
      expect(avif.headers.get("content-type")).toBe("image/avif");
      expect(avif.headers.get("vary")).toBe("Accept");
      const plain = await h.app.handle(new Request(`${photo.url}&w=320&fm=auto`, { headers: { accept: "*/*" } }));
      expect(plain.headers.get("content-type")).toBe("image/jpeg");
      const odd = await h.app.handle(new Request(`${photo.url}&w=333`));
      expect(odd.status).toBe(400);
      expect((await odd.json()).error.details.field).toBe("w");
      expect((await h.app.handle(new Request(`${photo.url}&w=320&fm=tiff`))).status).toBe(400);
      expect((await h.app.handle(new Request(`${photo.url}&w=320&q=77`))).status).toBe(400);
    });

    test("crops honour the focal point", async () => {
      const up = await uploadForm(h, ref, await twoColourPng(), "split.png", { focal_x: "0.1", focal_y: "0.5" });
      expect(up.status).toBe(201);
      const colourAt = async (url: string): Promise<{ r: number; b: number }> => {
        const res = await h.app.handle(new Request(url));
        expect(res.status).toBe(200);
        const { data } = await sharp(new Uint8Array(await res.arrayBuffer()))
          .raw()
          .toBuffer({ resolveWithObject: true });
        return { r: data[0] ?? 0, b: data[2] ?? 0 };
      };
      const left = await colourAt(`${up.json.data.url}&w=320&h=320&fm=png`);
      expect(left.r).toBeGreaterThan(200);
      expect(left.b).toBeLessThan(50);
      const moved = await h.request("PATCH", `/admin/p/${ref}/media/${up.json.data.id}`, { body: { focal_point: { x: 0.9, y: 0.5 } } });
      expect(moved.status).toBe(200);
      expect(moved.json.data.url).not.toBe(up.json.data.url); // the version tag names the focal point
      const right = await colourAt(`${moved.json.data.url}&w=320&h=320&fm=png`);
      expect(right.b).toBeGreaterThan(200);
      expect(right.r).toBeLessThan(50);
    });

    test("list (search by name and alt, filter by type, paged), get, patch alt per locale", async () => {
      const list = await h.request("GET", `/admin/p/${ref}/media?q=red%20wall`);
      expect(list.status).toBe(200);
      expect(list.json.data.map((m: any) => m.id)).toEqual([photo.id]);
      const byName = await h.request("GET", `/admin/p/${ref}/media?q=holiday`);
      expect(byName.json.data.map((m: any) => m.id)).toEqual([photo.id]);
      const svgs = await h.request("GET", `/admin/p/${ref}/media?type=image/svg%2Bxml`);
      expect(svgs.json.data).toHaveLength(1);
      const images = await h.request("GET", `/admin/p/${ref}/media?type=image&per_page=2`);
      expect(images.json).toMatchObject({ page: 1, per_page: 2 });
      expect(images.json.total).toBeGreaterThanOrEqual(5);
      expect(images.json.data).toHaveLength(2);
      const patched = await h.request("PATCH", `/admin/p/${ref}/media/${photo.id}`, { body: { alt: { fr: "Un mur rouge" }, title: null } });
      expect(patched.status).toBe(200);
      expect(patched.json.data).toMatchObject({ alt: { en: "A red wall", fr: "Un mur rouge" }, title: null });
      const badLocale = await h.request("PATCH", `/admin/p/${ref}/media/${photo.id}`, { body: { alt: { de: "x" } } });
      expect(badLocale.status).toBe(400);
      const got = await h.request("GET", `/admin/p/${ref}/media/${photo.id}`);
      expect(got.json.data.alt).toEqual({ en: "A red wall", fr: "Un mur rouge" });
      expect((await h.request("GET", `/admin/p/${ref}/media/0190a0a0-0000-7000-8000-000000000000`)).status).toBe(404);
    });

    test("scopes: media:write to upload and edit, content:read to read", async () => {
      const reader = await keyWith(h, ["content:read"]);
      expect((await h.request("GET", `/admin/p/${ref}/media`, { key: reader })).status).toBe(200);
      const refused = await uploadForm(h, ref, await twoColourPng(64, 64), "x.png", {}, { key: reader });
      expect(refused.status).toBe(403);
      expect(refused.json.error.code).toBe("insufficient_scope");
      const writer = await keyWith(h, ["media:write"]);
      expect((await uploadForm(h, ref, await twoColourPng(64, 32), "x.png", {}, { key: writer })).status).toBe(201);
    });

    test("quota: media_quota_bytes refuses what would pass it (413); the same bytes again cost nothing", async () => {
      const p = await seedProject(h);
      const small = await twoColourPng(320, 80);
      const q = await h.request("PATCH", `/admin/projects/${p.slug}`, { body: { media_quota_bytes: small.length + 100 } });
      expect(q.status).toBe(200);
      expect(q.json.data.media_quota_bytes).toBe(small.length + 100);
      expect((await uploadForm(h, p.slug, small, "one.png")).status).toBe(201);
      expect((await uploadForm(h, p.slug, small, "again.png")).status).toBe(201);
      const over = await uploadForm(h, p.slug, await twoColourPng(640, 80), "two.png");
      expect(over.status).toBe(413);
      expect(over.json.error.code).toBe("quota_exceeded");
      expect(over.json.error.details).toMatchObject({ quota_bytes: small.length + 100, used_bytes: small.length });
      const rows = await h.request("GET", `/admin/p/${p.slug}/media`);
      expect(rows.json.total).toBe(2);
    });

    test("delete: 409 naming the nodes that reference it, unless forced; the bytes go with the last item", async () => {
      const up = await uploadForm(h, ref, await twoColourPng(400, 100), "hero.png");
      const item = up.json.data;
      const node = await seedNode(h, ref, { slug: `with-hero-${Date.now()}`, fields: { hero: item.id } });
      const refused = await h.request("DELETE", `/admin/p/${ref}/media/${item.id}`);
      expect(refused.status).toBe(409);
      expect(refused.json.error.code).toBe("conflict");
      expect(refused.json.error.details.nodes).toEqual([{ id: node.id, path: node.path, title: node.title }]);
      const refs = await h.request("GET", `/admin/p/${ref}/media/${item.id}/references`);
      expect(refs.json.data.map((n: any) => n.id)).toEqual([node.id]);
      // Warm a variant, so that the prefix holds more than the original.
      expect((await h.app.handle(new Request(`${item.url}&w=320&fm=webp`))).status).toBe(200);
      const forced = await h.request("DELETE", `/admin/p/${ref}/media/${item.id}?force=true`);
      expect(forced.status).toBe(204);
      expect((await h.request("GET", `/admin/p/${ref}/media/${item.id}`)).status).toBe(404);
      expect(await setup.has(`${item.hash.slice(0, 2)}/${item.hash}/original`)).toBe(false);
      expect(await setup.has(`${item.hash.slice(0, 2)}/${item.hash}/v/r320x80-q75.webp`)).toBe(false);
      const gone = await h.app.handle(new Request(`${item.url.replace(/v=[^&]+/, "v=x")}`));
      expect(gone.status).toBe(404);
      const rows = await h.deps.db
        .select({ id: media.id })
        .from(media)
        .where((await import("drizzle-orm")).eq(media.projectId, projectId));
      expect(rows.some((r) => r.id === item.id)).toBe(false);
    });

    test("dry runs store nothing and remove nothing: an upload leaves no bytes behind, a delete keeps the item's bytes", async () => {
      const bytes = await twoColourPng(480, 120);
      const form = new FormData();
      form.set("file", new File([bytes as Uint8Array<ArrayBuffer>], "dry.png"));
      form.set("alt", "Only a try");
      const dry = await h.request("POST", `/admin/p/${ref}/media?dry_run=true`, { raw: form });
      expect(dry.status).toBe(200); // a dry run creates nothing
      expect(dry.json.dry_run).toBe(true);
      expect(dry.json.data).toMatchObject({ width: 480, height: 120, type: "image/png" });
      const key = `${dry.json.data.hash.slice(0, 2)}/${dry.json.data.hash}/original`;
      expect(await setup.has(key)).toBe(false);
      expect(await setup.keys()).not.toContain(key);
      expect(setup.written() ?? []).not.toContain(key);
      const { and, eq } = await import("drizzle-orm");
      expect(
        await h.deps.db
          .select({ id: media.id })
          .from(media)
          .where(and(eq(media.projectId, projectId), eq(media.hash, dry.json.data.hash))),
      ).toEqual([]);
      expect((await h.request("GET", `/admin/p/${ref}/media/${dry.json.data.id}`)).status).toBe(404);
      // A dry run's delete: the row stays (rolled back) and so do its bytes and variants.
      const real = await uploadForm(h, ref, bytes, "kept.png");
      expect(real.status).toBe(201);
      expect(await setup.has(key)).toBe(true);
      expect((await h.app.handle(new Request(`${real.json.data.url}&w=320&fm=webp`))).status).toBe(200);
      const tryDelete = await h.request("DELETE", `/admin/p/${ref}/media/${real.json.data.id}?dry_run=true`);
      expect(tryDelete.status).toBeLessThan(300);
      expect((await h.request("GET", `/admin/p/${ref}/media/${real.json.data.id}`)).status).toBe(200);
      expect(await setup.has(key)).toBe(true);
      expect(await setup.has(`${key.slice(0, -"original".length)}v/r320x80-q75.webp`)).toBe(true);
      const original = await h.app.handle(new Request(real.json.data.url));
      expect(original.status).toBe(200);
      expect(new Uint8Array(await original.arrayBuffer())).toEqual(bytes as Uint8Array<ArrayBuffer>);
    });

    test("from a URL: through the outbound guard, redirects refused, size bounded", async () => {
      const png = await twoColourPng(320, 80);
      const server = Bun.serve({
        port: 0,
        hostname: "127.0.0.1",
        fetch: (r) => {
          const path = new URL(r.url).pathname;
          if (path === "/pic.png") return new Response(png as Uint8Array<ArrayBuffer>, { headers: { "content-type": "image/png" } });
          if (path === "/moved") return Response.redirect("http://127.0.0.1:1/pic.png", 302);
          if (path === "/big") return new Response(new Uint8Array(2 * 1024 * 1024), { headers: { "content-type": "image/png" } });
          return new Response("no", { status: 404 });
        },
      });
      try {
        const base = `http://127.0.0.1:${server.port}`;
        const ok = await h.request("POST", `/admin/p/${ref}/media/from-url`, { body: { url: `${base}/pic.png`, alt: "from afar" } });
        expect(ok.status).toBe(201);
        expect(ok.json.data).toMatchObject({ type: "image/png", filename: "pic.png", width: 320, height: 80, alt: { en: "from afar" } });
        const moved = await h.request("POST", `/admin/p/${ref}/media/from-url`, { body: { url: `${base}/moved` } });
        expect(moved.status).toBe(400);
        expect(moved.json.error.message).toContain("redirect");
        const big = await h.request("POST", `/admin/p/${ref}/media/from-url`, { body: { url: `${base}/big` } });
        expect(big.status).toBe(413);
        // Without MEDIA_ALLOW_PRIVATE_URLS, the guard refuses loopback and metadata addresses as it does for AI vendors.
        const strict = await harness({ ...setup.env(), MEDIA_ALLOW_PRIVATE_URLS: "false" });
        const refused = await strict.request("POST", `/admin/p/${ref}/media/from-url`, { body: { url: `https://127.0.0.1:${server.port}/pic.png` } });
        expect(refused.status).toBe(400);
        expect(refused.json.error.message).toContain("private or loopback");
        const metadata = await strict.request("POST", `/admin/p/${ref}/media/from-url`, { body: { url: "https://169.254.169.254/latest/meta-data" } });
        expect(metadata.status).toBe(400);
      } finally {
        server.stop(true);
      }
    });
  });
}
