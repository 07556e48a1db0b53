import { afterAll, describe, expect, test } from "bun:test";
import { DeliveryCache } from "../src/delivery/cache";
import { makeAnswer } from "../src/delivery/http";
import { bumpContentVersion } from "../src/write/unit";
import { countingDb, get, outageDatabase, patchNode } from "./delivery.helpers";
import { harness, seedNode, seedProject, testDb, waitFor } from "./helpers";

// Rules of src/delivery/cache.ts that mutation testing (tests/MUTATION.md) found unguarded.

const STALE_WARNING = "delivery: the database is not answering; serving the last good answers marked stale";

describe("delivery cache: a database that stops answering", async () => {
  // A database of its own that really goes away (the proxy cut on PostgreSQL, the PGlite closed).
  const broken = await outageDatabase();
  afterAll(() => broken.drop());
  const h = await harness({ DELIVERY_VERSION_CHECK_MS: "60000" }, { db: broken.db, dbHandle: broken.handle });
  const p = await seedProject(h);
  const page = await seedNode(h, p.slug, { slug: "page", title: "Before" }, true);

  test("the first failed project read is logged once and held for a second: the next read asks nothing and is served stale", async () => {
    const url = `/api/p/${p.slug}/nodes/by-path/page`;
    expect((await get(h, url)).json.data.title).toBe("Before");
    // A write by this instance: the project is read again before the next answer.
    await patchNode(h, p.slug, page.id, { title: "After" });
    await broken.cut();
    const first = await get(h, url);
    expect([first.status, first.headers.get("x-cache"), first.json.data.title]).toEqual([200, "stale", "Before"]);
    const asked = broken.calls();
    // Within the second after a failed read: answered from memory without a query.
    const second = await get(h, url);
    expect([second.status, second.headers.get("x-cache")]).toEqual([200, "stale"]);
    expect(broken.calls()).toBe(asked);
    expect(h.logs.filter((l) => l.includes(STALE_WARNING))).toHaveLength(1);
  });
});

describe("delivery cache: an announcement without its version (a script's NOTIFY, an older writer)", async () => {
  // A database of its own that really goes away (the proxy cut on PostgreSQL, the PGlite closed).
  const broken = await outageDatabase();
  afterAll(() => broken.drop());
  const h = await harness({ DELIVERY_VERSION_CHECK_MS: "60000" }, { db: broken.db, dbHandle: broken.handle });
  const p = await seedProject(h);
  await seedNode(h, p.slug, { slug: "a", title: "A" }, true);
  await seedNode(h, p.slug, { slug: "b", title: "B" }, true);

  test("explains the next version read: the answers rendered before it stay the last good ones in an outage", async () => {
    const a = `/api/p/${p.slug}/nodes/by-path/a`;
    const b = `/api/p/${p.slug}/nodes/by-path/b`;
    expect((await get(h, a)).status).toBe(200);
    const before = await get(h, b);
    expect(before.status).toBe(200);
    // The version moves with a NOTIFY naming the project only, as a script's would; sent again
    // while unheard, since the app's LISTEN may still be starting (a NOTIFY before it is lost).
    // Heard: the next read of page a asks the database again (the project row, then the page).
    await waitFor(
      async () => {
        await bumpContentVersion(h.deps.db, p.id);
        const c = broken.calls();
        expect((await get(h, a)).status).toBe(200);
        return broken.calls() > c;
      },
      { what: "the version-less NOTIFY heard" },
    );
    await broken.cut();
    const stale = await get(h, b);
    expect([stale.status, stale.headers.get("x-cache"), stale.json?.data?.title]).toEqual([200, "stale", "B"]);
    expect(stale.headers.get("etag")).toBe(before.headers.get("etag"));
  });
});

describe("delivery cache: the largest answer kept is an eighth of DELIVERY_CACHE_MAX_BYTES", async () => {
  const first = await harness();
  const p = await seedProject(first);
  await seedNode(first, p.slug, { slug: "sized", title: "Sized" }, true);
  const url = `/api/p/${p.slug}/nodes/by-path/sized`;
  const bytes = Buffer.byteLength((await get(first, url)).text);

  test("an answer of exactly that size is kept (the next read asks the database nothing); one byte more is not", async () => {
    for (const [maxBytes, kept] of [
      [8 * bytes, true],
      [8 * (bytes - 1), false],
    ] as const) {
      const counted = countingDb((await testDb()).db);
      const h = await harness({ DELIVERY_CACHE_MAX_BYTES: String(maxBytes) }, { db: counted.db });
      const res = await get(h, url);
      expect([res.status, Buffer.byteLength(res.text)]).toEqual([200, bytes]);
      const before = counted.calls();
      expect((await get(h, url)).text).toBe(res.text);
      expect({ maxBytes, kept: counted.calls() === before }).toEqual({ maxBytes, kept });
    }
  });
});

describe("delivery cache: a gzip representation made after its answer was replaced", async () => {
  const h = await harness();
  const p = await seedProject(h);

  test("counts nowhere: the replaced answer is in neither store, and is not put in the stale one", async () => {
    // The engine's cache is private to the routes: the same class over the same database (as tests/delivery-inputs.test.ts).
    const cache = new DeliveryCache(h.deps.db, { maxEntries: 10, maxBytes: 1 << 20, checkIntervalMs: 60_000, staleEntries: 10, staleMaxBytes: 1 << 20 });
    const project = (await cache.project(p.slug))!;
    const old = await makeAnswer(project.version, 200, JSON.stringify({ n: "old" }), "application/json", "public");
    const replacement = await makeAnswer(project.version, 200, JSON.stringify({ n: "new" }), "application/json", "public");
    cache.put(project, "k", old);
    cache.put(project, "k", replacement);
    const before = cache.stats();
    expect(before).toMatchObject({ entries: 1, bytes: replacement.body.length, staleEntries: 0, staleBytes: 0 });
    // The old answer's gzip representation, finished late (a response still streaming it).
    cache.grow(old, 1000);
    expect(cache.stats()).toEqual(before);
    expect(cache.get(project, "k")).toBe(replacement);
  });
});

describe("delivery cache: DELIVERY_STALE_ENTRIES=0 keeps no superseded answers", async () => {
  const h = await harness({ DELIVERY_STALE_ENTRIES: "0" });
  const p = await seedProject(h);
  const page = await seedNode(h, p.slug, { slug: "page", title: "One" }, true);

  test("a page read, edited and read again is answered fresh each time", async () => {
    const url = `/api/p/${p.slug}/nodes/by-path/page`;
    expect((await get(h, url)).json.data.title).toBe("One");
    await patchNode(h, p.slug, page.id, { title: "Two" });
    const again = await get(h, url);
    expect([again.status, again.headers.get("x-cache"), again.json.data.title]).toEqual([200, null, "Two"]);
  });
});
