// The answer cache alone, no server: ns per DeliveryCache.get() of a cached answer (one page over
// and over, or 1,000 in turn) and per put() into a full cache. Pass another source tree to measure
// its cache the same way (a worktree of an older commit, with node_modules linked).
// Usage: taskset -c 1 bun bench/delivery/cache-hits.ts [tree] [case] [cached answers]
//   case: hot-1 (default), hot-1000, put-evict; cached answers: 1000 (default) … 5000 (the default bound)
import { join, resolve } from "node:path";

const tree = resolve(process.argv[2] ?? join(import.meta.dir, "../.."));
const which = process.argv[3] ?? "hot-1";
const cached = Number(process.argv[4] ?? 1000);
const { DeliveryCache } = await import(join(tree, "src/delivery/cache.ts"));
const { makeAnswer } = await import(join(tree, "src/delivery/http.ts"));

const project = { id: "0190aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee", slug: "bench", name: "b", defaultLocale: "en", locales: ["en", "fr"], publicBaseUrl: null, siteName: "b", version: 7 };
const routes = Array.from({ length: cached }, (_, i) => `path en section-${i % 10}/page-${i}`);
const answers = await Promise.all(routes.map(() => makeAnswer(project.version, 200, "x".repeat(7400), "application/json", "public")));
// get() and put() never touch the database. put-evict: a cache bounded at twice `cached` answers taking new ones.
const bound = which === "put-evict" ? 2 * cached : 10_000;
const cache = new DeliveryCache({} as never, { maxEntries: bound, maxBytes: 256 * 1024 * 1024, checkIntervalMs: 1000, staleEntries: 5000, staleMaxBytes: 64 * 1024 * 1024 });
for (const [i, r] of routes.entries()) cache.put(project, r, answers[i]);

let hits = 0;
const cases: Record<string, (n: number) => void> = {
  "hot-1": (n) => {
    const route = routes[0]!;
    for (let i = 0; i < n; i++) if (cache.get(project, route) !== null) hits++;
  },
  "hot-1000": (n) => {
    for (let i = 0; i < n; i++) if (cache.get(project, routes[(i % 1000) % cached]!) !== null) hits++;
  },
  "put-evict": (n) => {
    for (let i = 0; i < n; i++) cache.put(project, routes[i % cached]! + (i % 3), answers[i % cached]!);
  },
};
const run = cases[which];
if (!run) throw new Error(`unknown case ${which}`);

// Warm-up while finding a batch of at least 50 ms, then 15 batches four times that long.
let n = 1000;
for (;;) {
  const t0 = Bun.nanoseconds();
  run(n);
  if (Bun.nanoseconds() - t0 > 50e6) break;
  n *= 2;
}
n *= 4;
const ns: number[] = [];
for (let b = 0; b < 15; b++) {
  const t0 = Bun.nanoseconds();
  run(n);
  ns.push((Bun.nanoseconds() - t0) / n);
}
ns.sort((a, b) => a - b);
if (which !== "put-evict" && hits === 0) throw new Error("no hit: the cache kept nothing");
console.log(JSON.stringify({ tree, case: which, cached, nsMedian: +ns[7]!.toFixed(1), nsMin: +ns[0]!.toFixed(1), nsMax: +ns[14]!.toFixed(1) }));
