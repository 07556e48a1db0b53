import { afterAll, describe, expect, test } from "bun:test";
import { type DbHandle, openDb } from "../db/client";
import { countingDb, deafHandle, get, outageDatabase, patchNode, until } from "./delivery.helpers";
import { harness, seedNode, seedProject, testDb, waitFor } from "./helpers";

const BASE = "https://site.example";
const CC = "public, max-age=5, stale-while-revalidate=7";
/** The configured value, with stale-if-error (DELIVERY_STALE_IF_ERROR, default one day) for CDNs. */
const CC_SENT = `${CC}, stale-if-error=86400`;

/** A second app's database: on PostgreSQL its own pool and LISTEN connection; on PGlite the one in-process database. */
async function secondHandle(): Promise<DbHandle> {
  const url = process.env.DATABASE_URL;
  if (url?.startsWith("postgres")) return openDb({ databaseUrl: url, dataDir: "", poolSize: 2 });
  return testDb();
}

/** The same handle, telling when the app using it has its LISTEN up. */
function listeningHandle(handle: DbHandle): { handle: DbHandle; listening: () => boolean } {
  let up = false;
  const listen: DbHandle["listen"] = async (channel, onPayload) => {
    const stop = await handle.listen(channel, onPayload);
    up = true;
    return stop;
  };
  return { handle: { ...handle, listen }, listening: () => up };
}

describe("delivery: HTTP caching", async () => {
  const h = await harness({ DELIVERY_CACHE_CONTROL: CC });
  const p = await seedProject(h, { public_base_url: BASE });
  const page = await seedNode(h, p.slug, { slug: "page", title: "Page" }, true);
  const col = await seedNode(h, p.slug, { slug: "col", title: "Col", type: "collection" }, true);
  await seedNode(h, p.slug, { slug: "entry", title: "Entry", parent_id: col.id }, true);
  const paths = ["/nodes/by-path/page", `/nodes/${page.id}`, "/nodes", "/entries?collection=col", "/sitemap.xml", "/sitemap-1.xml", "/robots.txt", "/theme"];

  test("every answer has a strong ETag and the configured Cache-Control; If-None-Match gives 304", async () => {
    for (const path of paths) {
      const url = `/api/p/${p.slug}${path}`;
      const res = await get(h, url);
      expect(res.status).toBe(200);
      const etag = res.headers.get("etag")!;
      expect(etag).toMatch(/^"[A-Za-z0-9_-]{16,}"$/);
      expect(res.headers.get("cache-control")).toBe(CC_SENT);
      const again = await get(h, url);
      expect(again.headers.get("etag")).toBe(etag);
      expect(again.text).toBe(res.text);
      for (const inm of [etag, `W/${etag}`, `"nope", ${etag}`, "*"]) {
        const nm = await get(h, url, { "if-none-match": inm });
        expect(nm.status).toBe(304);
        expect(nm.text).toBe("");
        expect(nm.headers.get("etag")).toBe(etag);
        expect(nm.headers.get("cache-control")).toBe(CC_SENT);
        expect(nm.headers.get("access-control-allow-origin")).toBe("*");
      }
      const other = await get(h, url, { "if-none-match": '"something-else"' });
      expect(other.status).toBe(200);
      expect(other.text).toBe(res.text);
    }
  });

  test("errors carry an ETag too but never turn into 304", async () => {
    const res = await get(h, `/api/p/${p.slug}/nodes/by-path/missing`);
    expect(res.status).toBe(404);
    const etag = res.headers.get("etag")!;
    expect(etag).toMatch(/^"/);
    const again = await get(h, `/api/p/${p.slug}/nodes/by-path/missing`, { "if-none-match": etag });
    expect(again.status).toBe(404);
    expect(again.json.error.code).toBe("not_found");
  });

  test("a write changes the ETag on this instance at once (reads its own writes)", async () => {
    for (const path of paths) {
      const url = `/api/p/${p.slug}${path}`;
      const before = await get(h, url);
      await patchNode(h, p.slug, page.id, { title: `Page ${path}` });
      const after = await get(h, url, { "if-none-match": before.headers.get("etag")! });
      if (path === "/robots.txt" || path === "/theme" || path.startsWith("/entries")) {
        // These bytes do not depend on the page title: same ETag, still 304.
        expect(after.status).toBe(304);
      } else {
        expect(after.status).toBe(200);
        expect(after.headers.get("etag")).not.toBe(before.headers.get("etag"));
      }
    }
    expect((await get(h, `/api/p/${p.slug}/nodes/by-path/page`)).json.data.title).toBe("Page /theme");
  });
});

describe("delivery: gzip negotiation", async () => {
  const h = await harness();
  const p = await seedProject(h, { public_base_url: BASE });
  const long = "lorem ipsum dolor sit amet ".repeat(200);
  await seedNode(h, p.slug, { slug: "big", title: "Big", blocks: [{ type: "text", data: { text: long } }] }, true);
  const raw = async (path: string, headers: Record<string, string>): Promise<{ res: Response; bytes: Uint8Array }> => {
    const res = await h.app.handle(new Request(`http://localhost/api/p/${p.slug}${path}`, { headers }));
    return { res, bytes: new Uint8Array(await res.arrayBuffer()) };
  };

  test("answers of 1 KiB and more are gzip-encoded for clients that take it, with their own ETag and Vary", async () => {
    for (const path of ["/nodes/by-path/big", "/sitemap.xml", "/nodes"]) {
      const plain = await raw(path, {});
      expect(plain.res.headers.get("content-encoding")).toBeNull();
      expect(plain.res.headers.get("vary")).toBe("Accept-Encoding");
      const text = new TextDecoder().decode(plain.bytes);
      const rounds: Uint8Array[] = [];
      const etags: string[] = [];
      // On a fresh instance a streamed answer (sitemap, node list) goes out as is the first time
      // (gzip bytes would depend on how the stream is pulled); once cached it is compressed.
      const fresh = await harness();
      const freshRaw = async (headers: Record<string, string>) => {
        const res = await fresh.app.handle(new Request(`http://localhost/api/p/${p.slug}${path}`, { headers }));
        return { res, bytes: new Uint8Array(await res.arrayBuffer()) };
      };
      if (path !== "/nodes/by-path/big") {
        const first = await freshRaw({ "accept-encoding": "gzip" });
        expect(first.res.headers.get("content-encoding")).toBeNull();
        expect(first.res.headers.get("etag")).toBe(plain.res.headers.get("etag"));
        expect(new TextDecoder().decode(first.bytes)).toBe(text);
      }
      for (let round = 0; round < 3; round++) {
        const gz = await freshRaw({ "accept-encoding": "br, gzip;q=0.8, deflate" });
        rounds.push(gz.bytes);
        etags.push(gz.res.headers.get("etag")!);
        expect(gz.res.status).toBe(200);
        expect(gz.res.headers.get("content-encoding")).toBe("gzip");
        expect(gz.res.headers.get("vary")).toBe("Accept-Encoding");
        const etag = gz.res.headers.get("etag")!;
        expect(etag).not.toBe(plain.res.headers.get("etag"));
        expect(etag).toMatch(/^"[^"]+"$/);
        expect(new TextDecoder().decode(Bun.gunzipSync(gz.bytes))).toBe(text);
        if (path !== "/sitemap.xml" && path !== "/nodes") expect(gz.bytes.length).toBeLessThan(plain.bytes.length / 5);
        const nm = await raw(path, { "accept-encoding": "gzip", "if-none-match": etag });
        expect(nm.res.status).toBe(304);
        expect(nm.res.headers.get("etag")).toBe(etag);
        expect(nm.res.headers.get("vary")).toBe("Accept-Encoding");
        // the identity ETag does not validate the gzip representation
        expect((await raw(path, { "accept-encoding": "gzip", "if-none-match": plain.res.headers.get("etag")! })).res.status).toBe(200);
      }
      // One strong ETag, one byte sequence, on this instance and on the other one.
      expect(new Set(etags).size).toBe(1);
      for (const r of rounds) expect(Buffer.compare(Buffer.from(r), Buffer.from(rounds[0]!))).toBe(0);
      const other = await raw(path, { "accept-encoding": "gzip" });
      expect(other.res.headers.get("etag")).toBe(etags[0]!);
      expect(Buffer.compare(Buffer.from(other.bytes), Buffer.from(rounds[0]!))).toBe(0);
    }
  });

  test("gzip;q=0 or no gzip means identity; small answers are never compressed and do not vary", async () => {
    for (const ae of ["gzip;q=0", "br", "identity", "*;q=0"]) {
      const r = await raw("/nodes/by-path/big", { "accept-encoding": ae });
      expect(r.res.headers.get("content-encoding")).toBeNull();
    }
    expect((await raw("/nodes/by-path/big", { "accept-encoding": "*" })).res.headers.get("content-encoding")).toBe("gzip");
    const theme = await raw("/theme", { "accept-encoding": "gzip" });
    expect(theme.res.headers.get("content-encoding")).toBeNull();
    expect(theme.res.headers.get("vary")).toBeNull();
  });
});

describe("delivery: the cache does no database work on a hit", async () => {
  const base = await harness();
  const counted = countingDb(base.deps.db);
  const h = await harness({ DELIVERY_CACHE_ENTRIES: "2", DELIVERY_VERSION_CHECK_MS: "60000" }, { db: counted.db });
  const p = await seedProject(h, { public_base_url: BASE });
  for (const s of ["a", "b", "c"]) await seedNode(h, p.slug, { slug: s, title: s }, true);
  const read = (s: string) => get(h, `/api/p/${p.slug}/nodes/by-path/${s}`);

  test("a hot read issues no query; the entry bound evicts the least recently used", async () => {
    await read("a");
    const afterMiss = counted.calls();
    for (let i = 0; i < 20; i++) expect((await read("a")).status).toBe(200);
    expect(counted.calls()).toBe(afterMiss);
    await read("b");
    await read("a"); // a is now the most recent
    const beforeC = counted.calls();
    await read("c"); // evicts b
    expect(counted.calls()).toBeGreaterThan(beforeC);
    const afterC = counted.calls();
    await read("a");
    expect(counted.calls()).toBe(afterC);
    await read("b");
    expect(counted.calls()).toBeGreaterThan(afterC);
  });
});

describe("delivery: database outages", async () => {
  test("known projects keep being served from the cache; other reads are 503 with CORS; once the database is back, they are read again", async () => {
    // The database really goes away (the PostgreSQL proxy cut, or the embedded database closed).
    const outage = await outageDatabase();
    try {
      const h = await harness({ DELIVERY_VERSION_CHECK_MS: "50" }, { db: outage.db, dbHandle: outage.handle });
      const p = await seedProject(h);
      await seedNode(h, p.slug, { slug: "cached", title: "Cached" }, true);
      await seedNode(h, p.slug, { slug: "cold", title: "Cold" }, true);
      const url = `/api/p/${p.slug}/nodes/by-path/cached`;
      const before = await get(h, url);
      expect(before.status).toBe(200);
      await outage.cut();
      const cutAt = outage.calls();
      // Read until a version check (every 50 ms here) has met the outage; the cached answer is served throughout.
      await waitFor(
        async () => {
          const during = await get(h, url);
          expect(during.status).toBe(200);
          expect(during.headers.get("etag")).toBe(before.headers.get("etag"));
          return outage.calls() > cutAt;
        },
        { timeout: 5000, what: "a version check against the down database" },
      );
      for (let i = 0; i < 3; i++) {
        const during = await get(h, url);
        expect(during.status).toBe(200);
        expect(during.headers.get("etag")).toBe(before.headers.get("etag"));
      }
      const cold = await get(h, `/api/p/${p.slug}/nodes/by-path/cold`);
      expect(cold.status).toBe(503);
      expect(cold.json.error.code).toBe("service_unavailable");
      expect(cold.headers.get("access-control-allow-origin")).toBe("*");
      expect(cold.headers.get("cache-control")).toBe("no-store");
      if (!outage.restore) return; // a closed embedded database does not come back
      await outage.restore();
      const back = await until(
        () => get(h, `/api/p/${p.slug}/nodes/by-path/cold`),
        (r) => r.status === 200,
        10_000,
      );
      expect(back.value.json.data.title).toBe("Cold");
    } finally {
      await outage.drop();
    }
  });
});

// Apps in this process (their module state shared); separate processes: delivery-stale-outage.test.ts and .ci/binary.ts.
describe("delivery: several apps in one process on one database", async () => {
  const handles: DbHandle[] = [];
  afterAll(async () => {
    for (const hd of handles) if (hd !== (await testDb())) await hd.close();
  });

  test("a write through one app changes the ETag on another within a second (NOTIFY)", async () => {
    const a = await harness();
    const other = await secondHandle();
    handles.push(other);
    const watched = listeningHandle(other);
    const b = await harness({}, { db: other.db, dbHandle: watched.handle });
    const p = await seedProject(a, { public_base_url: BASE });
    const n = await seedNode(a, p.slug, { slug: "shared", title: "v1" }, true);
    const url = `/api/p/${p.slug}/nodes/by-path/shared`;
    const first = await get(b, url);
    expect(first.json.data.title).toBe("v1");
    const etag = first.headers.get("etag")!;
    const sitemapEtag = (await get(b, `/api/p/${p.slug}/sitemap.xml`)).headers.get("etag");
    // B subscribes on first use; the write comes once its LISTEN is up.
    await waitFor(watched.listening, { what: "B's LISTEN" });
    await patchNode(a, p.slug, n.id, { title: "v2" });
    const seen = await until(
      () => get(b, url),
      (r) => r.headers.get("etag") !== etag,
      1000,
    );
    expect(seen.elapsed).toBeLessThan(1000);
    expect(seen.value.json.data.title).toBe("v2");
    expect((await get(b, `/api/p/${p.slug}/sitemap.xml`)).headers.get("etag")).not.toBe(sitemapEtag);
    // And the reverse direction.
    await patchNode(b, p.slug, n.id, { title: "v3" });
    const back = await until(
      () => get(a, url),
      (r) => r.json?.data?.title === "v3",
      1000,
    );
    expect(back.elapsed).toBeLessThan(1000);
  });

  test("without NOTIFY the version check still shows a write within a second; it is the only bound", async () => {
    const a = await harness();
    const shared = await testDb();
    const checked = await harness({ DELIVERY_VERSION_CHECK_MS: "200" }, { dbHandle: deafHandle(shared) });
    const stale = await harness({ DELIVERY_VERSION_CHECK_MS: "60000" }, { dbHandle: deafHandle(shared) });
    const p = await seedProject(a, { public_base_url: BASE });
    const n = await seedNode(a, p.slug, { slug: "page", title: "old" }, true);
    const url = `/api/p/${p.slug}/nodes/by-path/page`;
    const etag = (await get(checked, url)).headers.get("etag");
    expect((await get(stale, url)).headers.get("etag")).toBe(etag);
    await patchNode(a, p.slug, n.id, { title: "new" });
    const seen = await until(
      () => get(checked, url),
      (r) => r.headers.get("etag") !== etag,
      1500,
    );
    expect(seen.value.json.data.title).toBe("new");
    expect(seen.elapsed).toBeLessThan(1000);
    // The deaf app with a one-minute check keeps serving its cached answer: hits do not read the database.
    const still = await get(stale, url);
    expect(still.headers.get("etag")).toBe(etag);
    expect(still.json.data.title).toBe("old");
  });

  test("renaming or deleting a project is seen by every app", async () => {
    const a = await harness();
    const other = await secondHandle();
    handles.push(other);
    const watched = listeningHandle(other);
    const b = await harness({}, { db: other.db, dbHandle: watched.handle });
    const p = await seedProject(a);
    await seedNode(a, p.slug, { slug: "page", title: "x" }, true);
    expect((await get(b, `/api/p/${p.slug}/theme`)).status).toBe(200);
    await waitFor(watched.listening, { what: "B's LISTEN" });
    const renamed = `${p.slug}-new`;
    expect((await a.request("PATCH", `/admin/projects/${p.id}`, { body: { slug: renamed } })).status).toBe(200);
    const gone = await until(
      () => get(b, `/api/p/${p.slug}/theme`),
      (r) => r.status === 404,
      1000,
    );
    expect(gone.value.status).toBe(404);
    expect((await get(b, `/api/p/${renamed}/nodes/by-path/page`)).status).toBe(200);
    expect((await get(a, `/api/p/${p.slug}/theme`)).status).toBe(404);
    expect((await a.request("DELETE", `/admin/projects/${p.id}`)).status).toBe(204);
    const deleted = await until(
      () => get(b, `/api/p/${renamed}/nodes/by-path/page`),
      (r) => r.status === 404,
      1000,
    );
    expect(deleted.value.json.error.code).toBe("not_found");
    expect((await get(a, `/api/p/${p.id}/theme`)).status).toBe(404);
  });
});
