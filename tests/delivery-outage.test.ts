// With the database gone, a delivery answer that cannot be produced is 503 service_unavailable
// without a validator, never a 200 with ETag and Cache-Control followed by a cut body (issue 12 §4).
// The database really goes away: on PostgreSQL the loopback proxy resets every connection and
// refuses new ones (and lets them through again for the recovery checks); the embedded database is
// closed under the app (it does not come back, so the recovery checks are PostgreSQL's).
import { afterAll, describe, expect, test } from "bun:test";
import type { Db, DbHandle } from "../db/client";
import { DeliveryCache } from "../src/delivery/cache";
import { makeAnswer } from "../src/delivery/http";
import { deafHandle, get, type OutageDb, outageDatabase, patchNode, transition, xmlProblem } from "./delivery.helpers";
import { freshDatabase, harness, seedNode, seedProject, type TestHarness, type TestResponse, testDb, waitFor } from "./helpers";

const BASE = "https://site.example";
const STREAMED = ["/nodes", "/sitemap.xml", "/sitemap-1.xml"];

function expectUnavailable(res: TestResponse, path: string): void {
  expect([path, res.status]).toEqual([path, 503]);
  expect(res.json.error.code).toBe("service_unavailable");
  expect(res.headers.get("etag")).toBeNull();
  expect(res.headers.get("cache-control")).toBe("no-store");
  expect(res.headers.get("access-control-allow-origin")).toBe("*");
}

describe("delivery: a streamed answer whose first page cannot be read", () => {
  test.each(STREAMED)("%s is 503 without ETag even though its planning queries succeeded; after recovery the next read is whole", async (path) => {
    const db = await outageDatabase();
    try {
      const h = await harness({ DELIVERY_VERSION_CHECK_MS: "60000" }, { db: db.db, dbHandle: db.handle });
      const p = await seedProject(h, { public_base_url: BASE });
      await seedNode(h, p.slug, { slug: "page", title: "Page" }, true);
      expect((await get(h, `/api/p/${p.slug}/robots.txt`)).status).toBe(200); // the project is known
      const url = `/api/p/${p.slug}${path}`;
      // A 304 runs the planning queries and reads no page: that tells how many precede the first page.
      // The second one counts: a sitemap's sizing pass is remembered for the content version.
      expect((await get(h, url, { "if-none-match": "*" })).status).toBe(304);
      const c0 = db.calls();
      expect((await get(h, url, { "if-none-match": "*" })).status).toBe(304);
      const planning = db.calls() - c0;
      db.cutAfter(planning);
      const c1 = db.calls();
      const res = await get(h, url);
      // Planning ran again and the first page was attempted (and failed): the case named above.
      expect([path, db.calls() - c1]).toEqual([path, planning + 1]);
      expectUnavailable(res, path);
      // Recovery: PostgreSQL's connections come back (a closed embedded database does not).
      if (!db.restore) return;
      await db.restore();
      const ok = await waitFor(
        async () => {
          const r = await get(h, url);
          return r.status === 200 ? r : null;
        },
        { timeout: 10_000, what: "the database back" },
      );
      expect(ok.headers.get("etag")).toMatch(/^"/);
      if (path === "/nodes") expect(ok.json.data.map((n: { slug: string }) => n.slug)).toEqual(["page"]);
      else expect(xmlProblem(ok.text)).toBeNull();
    } finally {
      await db.drop();
    }
  });
});

describe("delivery: the database closed under a running instance", () => {
  test("streamed and uncached answers are 503 without a validator; cached answers are still served", async () => {
    const fresh = await freshDatabase();
    try {
      const h = await harness({ DELIVERY_VERSION_CHECK_MS: "60000" }, { db: fresh.handle.db, dbHandle: fresh.handle });
      const p = await seedProject(h, { public_base_url: BASE });
      await seedNode(h, p.slug, { slug: "page", title: "Page" }, true);
      await seedNode(h, p.slug, { slug: "other", title: "Other" }, true);
      const cached = await get(h, `/api/p/${p.slug}/nodes/by-path/page`);
      expect(cached.status).toBe(200);
      await fresh.handle.close();
      for (const path of [...STREAMED, "/nodes/by-path/other", "/theme"]) expectUnavailable(await get(h, `/api/p/${p.slug}${path}`), path);
      const again = await get(h, `/api/p/${p.slug}/nodes/by-path/page`);
      expect(again.status).toBe(200);
      expect(again.headers.get("etag")).toBe(cached.headers.get("etag"));
    } finally {
      await fresh.drop();
    }
  });
});

// Issue 22 §1: while the database is away, a route answered 200 before is answered with its last
// good answer, marked stale; a page whose removal this instance was told of never comes back.
const STALE_CC = "public, max-age=5, stale-if-error=86400";

/**
 * A harness over a database of its own that really goes away (`outage.cut()`). Set `afterCommit`,
 * and it runs once the next transaction has committed, before the writer carries on (so before the
 * write's announcement); set `held`, and the result of the next select waits for it (the query
 * itself runs at once). `on` builds more instances over the same database (two instances in one
 * process share module state; what this file checks is each instance's own cache).
 */
async function flakyHarness(env: Record<string, string> = {}, handle: (h: DbHandle) => DbHandle = (x) => x) {
  const outage = await outageDatabase();
  outages.push(outage);
  const state = { afterCommit: null as (() => Promise<unknown>) | null, held: null as Promise<unknown> | null };
  const timed = timedDb(outage.db, state);
  const on = (more: Record<string, string> = {}, other: (h: DbHandle) => DbHandle = handle): Promise<TestHarness> =>
    harness({ DELIVERY_VERSION_CHECK_MS: "60000", ...env, ...more }, { db: timed, dbHandle: other(outage.handle) });
  /** An instance that writes without going through the database's outage (PostgreSQL: past the proxy). */
  const writer = (): Promise<TestHarness> => harness({}, { db: outage.direct.db, dbHandle: outage.direct });
  return { h: await on(), state, outage, on, writer };
}

/** Every outage database this file made, dropped at its end. */
const outages: OutageDb[] = [];
afterAll(async () => {
  for (const o of outages.splice(0)) await o.drop();
});

/** The Db with the timing hooks of flakyHarness: a callback after the next commit, a gate on the next select's result. */
function timedDb(base: Db, state: { afterCommit: (() => Promise<unknown>) | null; held: Promise<unknown> | null }): Db {
  const late = (builder: object, gate: Promise<unknown>): object =>
    new Proxy(builder, {
      get(target, prop) {
        const v = Reflect.get(target, prop, target);
        if (typeof v !== "function") return v;
        if (prop === "then") return (ok: (x: unknown) => unknown, ko: (e: unknown) => unknown) => v.call(target, (x: unknown) => gate.then(() => x)).then(ok, ko);
        return (...args: unknown[]) => {
          const out = v.apply(target, args);
          return out !== null && typeof out === "object" ? late(out, gate) : out;
        };
      },
    });
  return new Proxy(base, {
    get(target, prop) {
      const v = Reflect.get(target, prop);
      if (prop === "transaction")
        return async (...args: unknown[]) => {
          const out = await v.apply(target, args);
          const after = state.afterCommit;
          state.afterCommit = null;
          if (after) await after();
          return out;
        };
      if (prop === "select")
        return (...args: unknown[]) => {
          const gate = state.held;
          state.held = null;
          const builder = v.apply(target, args);
          return gate === null ? builder : late(builder, gate);
        };
      return v;
    },
  }) as Db;
}

/**
 * Waits until `told` hears `writer`'s NOTIFYs (its LISTEN starts with its first read, and a notice
 * sent before it took effect is not heard): edits page `nodeId` until an edit reaches `told`'s
 * answer. Answers the page's title then.
 */
async function listening(writer: TestHarness, told: TestHarness, ref: string, nodeId: string): Promise<string> {
  const path = (await writer.request("GET", `/admin/p/${ref}/nodes/${nodeId}`)).json.data.path;
  for (let tries = 1; ; tries++) {
    edits += 1;
    const title = `Edited ${edits}`;
    await patchNode(writer, ref, nodeId, { title });
    const heard = await waitFor(async () => (await get(told, `/api/p/${ref}/nodes/by-path/${path}`)).json.data.title === title, { timeout: 1000, what: "the edit" }).then(
      () => true,
      () => tries >= 10 && Promise.reject(new Error("the instance never heard a NOTIFY")),
    );
    if (heard) return title;
  }
}
let edits = 0;

/** After the database is back (PostgreSQL), the next read that reaches it: an answer not marked stale. */
async function fresh(h: TestHarness, path: string): Promise<TestResponse> {
  return waitFor(
    async () => {
      const r = await get(h, path);
      return r.headers.get("x-cache") === null && r.status !== 503 ? r : null;
    },
    { timeout: 10_000, what: `a fresh answer of ${path}` },
  );
}

function expectStale(res: TestResponse, what: string): void {
  expect([what, res.status, res.headers.get("x-cache")]).toEqual([what, 200, "stale"]);
  expect(res.headers.get("age")).toMatch(/^\d+$/);
  expect(res.headers.get("cache-control")).toBe(STALE_CC);
  expect(res.headers.get("access-control-allow-origin")).toBe("*");
  expect(res.headers.get("access-control-expose-headers")).toContain("X-Cache");
}

describe("delivery: the last good answer while the database is away", () => {
  test("an answer superseded by a write is served marked stale (bytes and ETag as served); a route never answered is 503", async () => {
    const { h, outage } = await flakyHarness();
    const p = await seedProject(h, { public_base_url: BASE });
    const a = await seedNode(h, p.slug, { slug: "a", title: "A1" }, true);
    await seedNode(h, p.slug, { slug: "b", title: "B" }, true);
    await seedNode(h, p.slug, { slug: "never", title: "Never read" }, true);
    const routes = ["/nodes/by-path/a", `/nodes/${a.id}`, "/nodes", "/sitemap.xml", "/robots.txt", "/theme"];
    const before = new Map<string, TestResponse>();
    for (const r of routes) {
      const res = await get(h, `/api/p/${p.slug}${r}`);
      expect([r, res.status, res.headers.get("x-cache")]).toEqual([r, 200, null]);
      expect(res.headers.get("cache-control")).toBe("public, max-age=60, stale-while-revalidate=300, stale-if-error=86400");
      before.set(r, res);
    }
    // An edit of page a (not a removal): every cached answer of the project is superseded.
    await patchNode(h, p.slug, a.id, { title: "A2" });
    const b = await get(h, `/api/p/${p.slug}/nodes/by-path/b`); // read once after the write: current
    expect(b.status).toBe(200);
    await outage.cut();
    const cutAt = outage.calls();
    for (const r of routes) {
      const res = await get(h, `/api/p/${p.slug}${r}`);
      expectStale(res, r);
      expect(res.text).toBe(before.get(r)!.text);
      expect(res.headers.get("etag")).toBe(before.get(r)!.headers.get("etag"));
    }
    expect((await get(h, `/api/p/${p.slug}/nodes/by-path/a`)).json.data.title).toBe("A1");
    const bStale = await get(h, `/api/p/${p.slug}/nodes/by-path/b`);
    expectStale(bStale, "b");
    expect(bStale.text).toBe(b.text);
    // A client holding the bytes gets 304, still marked.
    const nm = await get(h, `/api/p/${p.slug}/nodes/by-path/b`, { "if-none-match": b.headers.get("etag")! });
    expect([nm.status, nm.headers.get("x-cache")]).toEqual([304, "stale"]);
    // Nothing is invented: never read here, other locale of a read page, another query.
    for (const r of ["/nodes/by-path/never", "/nodes/by-path/a?locale=xx", "/entries?collection=col", "/sitemap-1.xml"]) {
      const res = await get(h, `/api/p/${p.slug}${r}`);
      expect([r, res.status]).toEqual([r, r.includes("locale=xx") ? 400 : 503]);
      expect(res.headers.get("x-cache")).toBeNull();
    }
    expect(outage.calls()).toBeGreaterThan(cutAt); // the database was asked, and was not there
    if (!outage.restore) return; // a closed embedded database does not come back
    await outage.restore();
    const back = await fresh(h, `/api/p/${p.slug}/nodes/by-path/a`);
    expect([back.status, back.json.data.title]).toEqual([200, "A2"]);
  });

  test("a translation written before the outage leaves its page unknown (503), never taken for removed (404)", async () => {
    const { h, outage } = await flakyHarness();
    const p = await seedProject(h, { locales: ["en", "fr"] });
    const n = await seedNode(h, p.slug, { slug: "t", title: "T" }, true);
    expect((await get(h, `/api/p/${p.slug}/nodes/by-path/t`)).status).toBe(200);
    // A translation write names the page both gone and added (its localised path may have moved).
    expect((await h.request("PUT", `/admin/p/${p.slug}/nodes/${n.id}/translations/fr`, { body: { meta: { title: "T fr" } } })).status).toBe(200);
    await outage.cut();
    const res = await get(h, `/api/p/${p.slug}/nodes/by-path/t`);
    expect([res.status, res.json?.error?.code]).toEqual([503, "service_unavailable"]);
  });

  test("a page deleted, unpublished or moved before the outage answers 404, never its stale copy; lists that showed it are dropped", async () => {
    const { h, outage } = await flakyHarness();
    const p = await seedProject(h, { public_base_url: BASE });
    const del = await seedNode(h, p.slug, { slug: "deleted", title: "Deleted" }, true);
    const unp = await seedNode(h, p.slug, { slug: "unpublished", title: "Unpublished" }, true);
    await seedNode(h, p.slug, { slug: "child", title: "Child", parent_id: unp.id }, true);
    const moved = await seedNode(h, p.slug, { slug: "moved", title: "Moved" }, true);
    const kept = await seedNode(h, p.slug, { slug: "kept", title: "Kept" }, true);
    const gone = ["/nodes/by-path/deleted", `/nodes/${del.id}`, "/nodes/by-path/unpublished", `/nodes/${unp.id}`, "/nodes/by-path/unpublished/child", "/nodes/by-path/moved"];
    for (const r of [...gone, "/nodes/by-path/kept", `/nodes/${kept.id}`, "/nodes", "/sitemap.xml"]) expect([r, (await get(h, `/api/p/${p.slug}${r}`)).status]).toEqual([r, 200]);
    // The removals are seen (this instance's own commit announcements); the pages are not read again.
    expect((await h.request("DELETE", `/admin/p/${p.slug}/nodes/${del.id}`)).status).toBe(204);
    await transition(h, p.slug, unp.id, "unpublish");
    await patchNode(h, p.slug, moved.id, { slug: "moved-away" });
    await outage.cut();
    for (const r of gone) {
      const res = await get(h, `/api/p/${p.slug}${r}`);
      expect([r, res.status, res.json.error?.code]).toEqual([r, 404, "not_found"]);
    }
    // Lists showed the removed pages: not served stale (503); untouched pages are.
    for (const r of ["/nodes", "/sitemap.xml"]) expect([r, (await get(h, `/api/p/${p.slug}${r}`)).status]).toEqual([r, 503]);
    for (const r of ["/nodes/by-path/kept", `/nodes/${kept.id}`]) expectStale(await get(h, `/api/p/${p.slug}${r}`), r);
    if (!outage.restore) return; // a closed embedded database does not come back
    await outage.restore();
    expect((await fresh(h, `/api/p/${p.slug}/nodes/by-path/moved-away`)).status).toBe(200);
    for (const r of gone) expect([r, (await get(h, `/api/p/${p.slug}${r}`)).status]).toEqual([r, 404]);
  });

  test("a page published again after its removal is not answered 404 from memory", async () => {
    const { h, outage } = await flakyHarness();
    const p = await seedProject(h);
    const n = await seedNode(h, p.slug, { slug: "back", title: "Back" }, true);
    expect((await get(h, `/api/p/${p.slug}/nodes/by-path/back`)).status).toBe(200);
    await transition(h, p.slug, n.id, "unpublish");
    await transition(h, p.slug, n.id, "publish");
    await outage.cut();
    // Its last good answer went with the unpublish; what it is now is unknown: 503, not 404.
    expect((await get(h, `/api/p/${p.slug}/nodes/by-path/back`)).status).toBe(503);
  });

  test("a removal on another instance arrives by NOTIFY; a bump no notification explains drops the project's stale answers", async () => {
    const { h: told, outage, on, writer: direct } = await flakyHarness();
    const writer = await direct();
    const deaf = await on({ DELIVERY_VERSION_CHECK_MS: "100" }, deafHandle);
    const p = await seedProject(writer);
    const del = await seedNode(writer, p.slug, { slug: "del", title: "Del" }, true);
    const other = await seedNode(writer, p.slug, { slug: "other", title: "Other" }, true);
    for (const h of [told, deaf]) for (const r of ["del", "other"]) expect((await get(h, `/api/p/${p.slug}/nodes/by-path/${r}`)).status).toBe(200);
    // Wait for the told instance's LISTEN: an edit it sees changes its answer.
    await listening(writer, told, p.slug, other.id);
    expect((await writer.request("DELETE", `/admin/p/${p.slug}/nodes/${del.id}`)).status).toBe(204);
    // An edit after the deletion: once the told instance shows it, it has handled the deletion's
    // NOTIFY (they arrive in commit order) and dropped the page; the deaf one sees only the version
    // move, at its next check (a read past the check interval starts it in the background).
    const title = await listening(writer, told, p.slug, other.id);
    await waitFor(async () => (await get(deaf, `/api/p/${p.slug}/nodes/by-path/other`)).json.data.title === title, { what: "the deaf instance's version check" });
    await outage.cut();
    const toldDel = await get(told, `/api/p/${p.slug}/nodes/by-path/del`);
    expect([toldDel.status, toldDel.json.error?.code]).toEqual([404, "not_found"]);
    expectStale(await get(told, `/api/p/${p.slug}/nodes/by-path/other`), "other on the told instance");
    // It cannot know what the bump removed: its superseded answers are dropped (503, not 404 either).
    expect((await get(deaf, `/api/p/${p.slug}/nodes/by-path/del`)).status).toBe(503);
    expectStale(await get(deaf, `/api/p/${p.slug}/nodes/by-path/other`), "other, read after the bump, on the deaf instance");
  });

  // A read may see a write's version before the write's announcement reaches its instance: that is
  // news on its way, not a lost NOTIFY, and must not cost the removal it announces (issue 22 §1).
  test("a read between a write's commit and its announcement on the writer's instance: the removal still answers 404 in the outage", async () => {
    const { h, state, outage } = await flakyHarness();
    const p = await seedProject(h);
    const del = await seedNode(h, p.slug, { slug: "del", title: "Del" }, true);
    await seedNode(h, p.slug, { slug: "other", title: "Other" }, true);
    for (const r of ["del", "other"]) expect((await get(h, `/api/p/${p.slug}/nodes/by-path/${r}`)).status).toBe(200);
    // A reader through the project id (a ref not read yet, so its row is read now) sees the
    // deletion's version after the commit and before this instance announces the deletion.
    let between: TestResponse | null = null;
    state.afterCommit = async () => void (between = await get(h, `/api/p/${p.id}/nodes/by-path/other`));
    expect((await h.request("DELETE", `/admin/p/${p.slug}/nodes/${del.id}`)).status).toBe(204);
    expect([between!.status, between!.headers.get("x-cache")]).toEqual([200, null]);
    expect((await get(h, `/api/p/${p.id}/nodes/by-path/del`)).status).toBe(404);
    await outage.cut();
    for (const ref of [p.slug, p.id]) {
      const res = await get(h, `/api/p/${ref}/nodes/by-path/del`);
      expect([res.status, res.json.error?.code, res.headers.get("x-cache")]).toEqual([404, "not_found", "stale"]);
      expectStale(await get(h, `/api/p/${ref}/nodes/by-path/other`), `other through ${ref}`);
    }
  });

  test("a read on another instance before the NOTIFY arrives: the version is owed until the NOTIFY explains it; the removal answers 404 in the outage", async () => {
    const notices = { held: false, queue: [] as (() => void)[] };
    const slow = (shared: DbHandle): DbHandle => ({
      ...shared,
      listen: (channel, onPayload) => shared.listen(channel, (payload) => void (notices.held ? notices.queue.push(() => onPayload(payload)) : onPayload(payload))),
    });
    const { h: told, outage, writer: direct } = await flakyHarness({}, slow);
    const writer = await direct();
    const p = await seedProject(writer);
    const del = await seedNode(writer, p.slug, { slug: "del", title: "Del" }, true);
    const other = await seedNode(writer, p.slug, { slug: "other", title: "Other" }, true);
    for (const r of ["del", "other"]) expect((await get(told, `/api/p/${p.slug}/nodes/by-path/${r}`)).status).toBe(200);
    const title = await listening(writer, told, p.slug, other.id);
    notices.held = true;
    expect((await writer.request("DELETE", `/admin/p/${p.slug}/nodes/${del.id}`)).status).toBe(204);
    // The told instance reads the project's row (through its id, a ref not read yet): the
    // deletion's version, whose NOTIFY has not come.
    expect((await get(told, `/api/p/${p.id}/nodes/by-path/other`)).json.data.title).toBe(title);
    // The deletion's NOTIFY reaches the instance (held back from it) on its own time.
    await waitFor(() => notices.queue.length > 0, { what: "the deletion's NOTIFY, held" });
    notices.held = false;
    for (const deliver of notices.queue.splice(0)) deliver();
    await outage.cut();
    const res = await get(told, `/api/p/${p.slug}/nodes/by-path/del`);
    expect([res.status, res.json.error?.code, res.headers.get("x-cache")]).toEqual([404, "not_found", "stale"]);
    expectStale(await get(told, `/api/p/${p.slug}/nodes/by-path/other`), "other on the told instance");
  });

  test("a project read begun before the outage and answered after it is not trusted: later reads are marked stale", async () => {
    const { h, state, outage } = await flakyHarness({ DELIVERY_VERSION_CHECK_MS: "50" });
    const p = await seedProject(h);
    await seedNode(h, p.slug, { slug: "a", title: "A" }, true);
    await seedNode(h, p.slug, { slug: "b", title: "B" }, true);
    expect((await get(h, `/api/p/${p.slug}/nodes/by-path/a`)).status).toBe(200);
    let release = (): void => {};
    state.held = new Promise((r) => (release = () => r(undefined)));
    // Once past the check interval, a read is answered from the cache at once and the row is read
    // again in the background (the query runs then; its answer is held): the held gate is taken.
    const hit = await waitFor(
      async () => {
        const r = await get(h, `/api/p/${p.slug}/nodes/by-path/a`);
        return state.held === null ? r : null;
      },
      { what: "a read past the check interval" },
    );
    expect([hit.status, hit.headers.get("x-cache")]).toEqual([200, null]);
    await outage.cut();
    expect((await get(h, `/api/p/${p.slug}/nodes/by-path/b`)).status).toBe(503); // the outage is met
    release();
    // The late answer is not trusted: the next reads are marked stale (a trusted one would keep them fresh).
    await waitFor(async () => (await get(h, `/api/p/${p.slug}/nodes/by-path/a`)).headers.get("x-cache") === "stale", { what: "the late project read distrusted" });
    expectStale(await get(h, `/api/p/${p.slug}/nodes/by-path/a`), "a after a read begun before the outage");
  });

  test("stale-if-error is configurable (0: not sent); stale answers then carry the error Cache-Control as is", async () => {
    const { h, outage } = await flakyHarness({ DELIVERY_STALE_IF_ERROR: "0" });
    const p = await seedProject(h);
    const n = await seedNode(h, p.slug, { slug: "one", title: "One" }, true);
    const one = await get(h, `/api/p/${p.slug}/nodes/by-path/one`);
    expect(one.headers.get("cache-control")).toBe("public, max-age=60, stale-while-revalidate=300");
    expect((await get(h, `/api/p/${p.slug}/nodes/by-path/nope`)).headers.get("cache-control")).toBe("public, max-age=5");
    await patchNode(h, p.slug, n.id, { title: "One 2" });
    await outage.cut();
    const stale = await get(h, `/api/p/${p.slug}/nodes/by-path/one`);
    expect([stale.status, stale.headers.get("x-cache"), stale.headers.get("cache-control"), stale.json.data.title]).toEqual([200, "stale", "public, max-age=5", "One"]);
  });

  test("the stale store holds superseded answers as they were (same object), within DELIVERY_STALE_ENTRIES and _MAX_BYTES", async () => {
    const db = (await testDb()).db;
    const cache = new DeliveryCache(db, { maxEntries: 100, maxBytes: 1 << 20, checkIntervalMs: 60_000, staleEntries: 2, staleMaxBytes: 250 });
    const v1 = { id: "00000000-0000-7000-8000-000000000001", slug: "s", name: "s", defaultLocale: "en", locales: ["en"], publicBaseUrl: null, siteName: "s", version: 1 };
    const v2 = { ...v1, version: 2 };
    const answers = await Promise.all(["a", "b", "c"].map(async (r) => ({ ...(await makeAnswer(1, 200, r.repeat(100), "text/plain", "public")), scope: r })));
    answers.forEach((a, i) => void cache.put(v1, ["a", "b", "c"][i]!, a));
    // Read at version 2: each answer is superseded, moved (not copied) into the stale store.
    expect(cache.get(v2, "a")).toBeNull();
    expect(cache.stats()).toMatchObject({ entries: 2, staleEntries: 1, staleBytes: 100 });
    expect(cache.get(v2, "b")).toBeNull();
    expect(cache.stats()).toMatchObject({ staleEntries: 2, staleBytes: 200 });
    const a = cache.lastGood(v2, "a");
    expect(a !== null && a !== "gone" && a.answer === answers[0]).toBe(true);
    // A third passes the byte bound: the least recently used ("b"; "a" was just served) goes.
    expect(cache.get(v2, "c")).toBeNull();
    expect(cache.stats()).toMatchObject({ entries: 0, bytes: 0, staleEntries: 2, staleBytes: 200 });
    expect(cache.lastGood(v2, "b")).toBeNull();
    // A good answer of the new version replaces the stale one.
    cache.put(v2, "a", await makeAnswer(2, 200, "new", "text/plain", "public"));
    expect(cache.stats()).toMatchObject({ entries: 1, staleEntries: 1, staleBytes: 100 });
    // A removal drops the page's stale answer and remembers its route as gone.
    cache.invalidate(v1.id, { gone: ["c"], added: [] });
    expect(cache.lastGood(v2, "c")).toBe("gone");
    expect(cache.stats()).toMatchObject({ staleEntries: 0, staleBytes: 0 });
    cache.invalidate(v1.id, { gone: [], added: ["c"] });
    expect(cache.lastGood(v2, "c")).toBeNull();
  });
});
