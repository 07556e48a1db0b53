// With the database gone, a delivery answer that cannot be produced is 503 service_unavailable
// without a validator, never a 200 with ETag and Cache-Control followed by a cut body (issue 12 §4).
import { describe, expect, test } from "bun:test";
import type { Db } from "../db/client";
import { get, watchedDb, xmlProblem } from "./delivery.helpers";
import { freshDatabase, harness, seedNode, seedProject, type TestResponse, testDb } from "./helpers";

const BASE = "https://site.example";
const STREAMED = ["/nodes", "/sitemap.xml", "/sitemap-1.xml"];

function expectUnavailable(res: TestResponse, path: string): void {
  expect([path, res.status]).toEqual([path, 503]);
  expect(res.json.error.code).toBe("service_unavailable");
  expect(res.headers.get("etag")).toBeNull();
  expect(res.headers.get("cache-control")).toBe("no-store");
  expect(res.headers.get("access-control-allow-origin")).toBe("*");
}

/** The Db with its queries counted; once armed, the queries past the allowance fail as if the server were gone. */
function breakableDb(db: Db): { db: Db; calls: () => number; failAfter: (allowed: number | null) => void } {
  let n = 0;
  let left: number | null = null;
  const watched = watchedDb(db, () => {
    n += 1;
    if (left !== null && left-- <= 0) throw Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
  });
  return { db: watched, calls: () => n, failAfter: (allowed) => void (left = allowed) };
}

describe("delivery: a streamed answer whose first page cannot be read", async () => {
  const broken = breakableDb((await testDb()).db);
  const h = await harness({ DELIVERY_VERSION_CHECK_MS: "60000" }, { db: broken.db });
  const p = await seedProject(h, { public_base_url: BASE });
  await seedNode(h, p.slug, { slug: "page", title: "Page" }, true);

  test("is 503 without ETag even though its planning queries succeeded; the next read after recovery is whole", async () => {
    expect((await get(h, `/api/p/${p.slug}/robots.txt`)).status).toBe(200); // the project is known
    for (const path of STREAMED) {
      const url = `/api/p/${p.slug}${path}`;
      // A 304 runs the planning queries and reads no page: that tells how many precede the first page.
      // The second one counts: a sitemap's sizing pass is remembered for the content version.
      expect((await get(h, url, { "if-none-match": "*" })).status).toBe(304);
      const c0 = broken.calls();
      expect((await get(h, url, { "if-none-match": "*" })).status).toBe(304);
      const planning = broken.calls() - c0;
      broken.failAfter(planning);
      const c1 = broken.calls();
      const res = await get(h, url);
      // Planning ran again and the first page was attempted (and failed): the case named above.
      expect([path, broken.calls() - c1]).toEqual([path, planning + 1]);
      expectUnavailable(res, path);
      broken.failAfter(null);
      const ok = await get(h, url);
      expect(ok.status).toBe(200);
      expect(ok.headers.get("etag")).toMatch(/^"/);
      if (path === "/nodes") expect(ok.json.data.map((n: { slug: string }) => n.slug)).toEqual(["page"]);
      else expect(xmlProblem(ok.text)).toBeNull();
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
