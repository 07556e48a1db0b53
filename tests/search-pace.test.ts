// Searches on the embedded database take turns and at most their share of the serving thread
// (src/search/pace.ts): a search that blocks the thread as PGlite's queries do is followed by a
// rest, a hot read (a timer, as a cached answer is) gets its turn between searches, and a queue
// past its bound is 503 with Retry-After at once, never an unbounded wait.
import { describe, expect, test } from "bun:test";
import { isEmbeddedDb } from "../db/client";
import { ownDb } from "../src/lib/commits";
import type { SearchDriver, SearchResult } from "../src/search/driver";
import { pacedDriver } from "../src/search/pace";
import { harness } from "./helpers";

const EMPTY: SearchResult = { hits: [], total: 0, totalExact: true, fuzzy: false, facets: null };

/** A driver whose every search blocks the thread for `ms` (as a query of PGlite does). */
function blocking(ms: number, log: number[]): SearchDriver {
  return {
    async search() {
      const t = performance.now();
      log.push(t);
      while (performance.now() - t < ms);
      return EMPTY;
    },
    async suggest() {
      return [];
    },
  };
}
const request = { projectId: "p", version: "published", locale: "en", isDefault: true, q: "x", collection: null, type: null, page: 1, perPage: 10, facets: [] } as const;

describe("search pacing on the embedded database", () => {
  test("searches take at most their share of the thread; other work runs between them", async () => {
    const starts: number[] = [];
    let ticks = 0;
    // The timer stands for hot reads coming in: each tick is work served beside the searches.
    const paced = pacedDriver(blocking(10, starts), { share: 0.2, demand: () => ticks });
    const timer = setInterval(() => ticks++, 5);
    const t0 = performance.now();
    await Promise.all(Array.from({ length: 10 }, () => paced.search(request)));
    const elapsed = performance.now() - t0;
    clearInterval(timer);
    // 10 searches of 10 ms at a 20 % share: about 10 × 50 ms; unpaced they would take 100 ms.
    expect(elapsed).toBeGreaterThan(400);
    for (let i = 1; i < starts.length; i++) expect((starts[i] ?? 0) - (starts[i - 1] ?? 0)).toBeGreaterThanOrEqual(45);
    // The thread was free most of the time: the timer ran between searches.
    expect(ticks).toBeGreaterThan(30);
  }, 30_000);

  test("with nothing else to serve, searches run back to back", async () => {
    const starts: number[] = [];
    const paced = pacedDriver(blocking(10, starts), { share: 0.2, demand: () => 0 });
    const t0 = performance.now();
    await Promise.all(Array.from({ length: 10 }, () => paced.search(request)));
    // Paced they would take about 500 ms; one after the other, about 100 (a turn of the loop between them).
    expect(performance.now() - t0).toBeLessThan(300);
    expect(starts).toHaveLength(10);
  });

  test("past the queue's bound a search is 503 with Retry-After at once", async () => {
    const paced = pacedDriver(blocking(5, []), { share: 0.2, demand: () => 0 });
    const all = Array.from({ length: 80 }, () =>
      paced.search(request).then(
        () => "ok",
        (e) => e,
      ),
    );
    const out = await Promise.all(all);
    const refused = out.filter((x) => x !== "ok");
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0]).toMatchObject({ code: "service_unavailable", headers: { "retry-after": "1" } });
    expect(out.filter((x) => x === "ok").length).toBeGreaterThanOrEqual(64);
  });

  test("a failed search releases its turn", async () => {
    const paced = pacedDriver({ search: async () => Promise.reject(new Error("boom")), suggest: async () => [] }, { share: 0.5 });
    await expect(paced.search(request)).rejects.toThrow("boom");
    expect(await paced.suggest(request, 8)).toEqual([]);
  });

  test("the app's view of the database is told embedded on PGlite (searches paced there), never on PostgreSQL", async () => {
    const h = await harness();
    const embedded = h.deps.dbHandle.driver === "pglite";
    expect(isEmbeddedDb(h.deps.db)).toBe(embedded);
    // createApp searches through ownDb(db), a Proxy: a check by identity would miss it.
    expect(isEmbeddedDb(ownDb(h.deps.db))).toBe(embedded);
  });
});
