// Search benchmark (issue 40): delivery's search and suggest over BENCH_NODES nodes × 3 locales
// (en base content, de and fr translations), answer cache off, through the real service
// (`src/main.ts`, default configuration otherwise) pinned to CPU 0; this process is the client,
// pinned to CPU 1, with BENCH_CONNECTIONS keep-alive connections, recording each latency. On
// PostgreSQL, then on the embedded PGlite (BENCH_PGLITE=0 skips it; BENCH_POSTGRES=0 skips PostgreSQL), where it also measures how
// many hot delivery reads per second a reader gets alone and beside a search load.
// Usage: bun bench/search/run.ts  (see bench/README.md)
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { type Db, openDb } from "../../db/client";
import { runMigrations } from "../../db/migrate";
import { projects } from "../../db/schema";
import { mirrorPublishedVersions } from "../../src/content/publish";
import { uuidv7 } from "../../src/lib/ids";
import { rows } from "../../src/lib/json";

const PG = process.env.BENCH_PG ?? "postgres://postgres@127.0.0.1:5432";
const DB_NAME = process.env.BENCH_DB ?? "cms_bench_search";
const DATABASE_URL = `${PG}/${DB_NAME}`;
const PORT = Number(process.env.BENCH_PORT ?? 3931);
const NODES = Number(process.env.BENCH_NODES ?? 10_000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const PGLITE = process.env.BENCH_PGLITE !== "0";
/** BENCH_KEEP=1: measure on the PostgreSQL database an earlier run seeded, without seeding it again. */
const KEEP = process.env.BENCH_KEEP === "1";
const POSTGRES = process.env.BENCH_POSTGRES !== "0";
/** BENCH_LITE_DIR=<dir>: PGlite's data directory, kept after the run; a directory an earlier run seeded is measured as it is. */
const LITE_DIR = process.env.BENCH_LITE_DIR ?? "";
const VOCABULARY = 6000;
const HERE = new URL(".", import.meta.url).pathname;
const ROOT = join(HERE, "../..");
const PIN = Bun.which("taskset") !== null;
const work = mkdtempSync(join(tmpdir(), "cms-bench-search-"));
const log = (msg: string): void => console.log(`[bench] ${msg}`);

/** Pronounceable made-up words, one vocabulary per language (the stemmers treat them as they treat words). */
function vocabulary(seed: number): string[] {
  const on = ["b", "c", "d", "f", "g", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "tr", "st", "pl", "ch", "gr"];
  const nuc = ["a", "e", "i", "o", "u", "ou", "ei", "ä", "é", "ö"];
  const coda = ["", "n", "r", "s", "l", "t", "nd", "st", "ng", "x"];
  const out = new Set<string>();
  let x = seed * 2654435761;
  // xorshift32: the same words on every run.
  const next = (n: number): number => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % n;
  };
  while (out.size < VOCABULARY) {
    const syllables = 1 + next(3);
    let w = "";
    for (let s = 0; s < syllables; s++) w += (on[next(on.length)] ?? "") + (nuc[next(nuc.length)] ?? "") + (coda[next(coda.length)] ?? "");
    if (w.length >= 3) out.add(w);
  }
  return [...out];
}
const VOCAB = { en: vocabulary(1), de: vocabulary(2), fr: vocabulary(3) };

/** Seeds the project `bench`: NODES published pages (a tenth under a `blog` collection) of 3 blocks, each translated into de and fr. */
async function seed(db: Db): Promise<string> {
  const id = uuidv7();
  const now = new Date();
  await db.insert(projects).values({ id, slug: "bench", name: "Bench", defaultLocale: "en", locales: ["en", "de", "fr"], createdAt: now, updatedAt: now });
  // Words drawn with a skew (the 1.5th power of a uniform draw): the commonest word is in about a
  // sixth of the pages, most words in a few, as content words are once stop words are left out.
  // `row` ties the subquery to its row: uncorrelated, it would run once and give every row the same text.
  const words = (v: string, n: number, row = "i"): string =>
    `(select string_agg((${v}::text[])[1 + floor(power(random(), 1.5) * ${VOCABULARY})::int], ' ') from generate_series(1, ${n} + 0 * length(${row}::text)))`;
  const t0 = performance.now();
  await db.execute(sql`insert into nodes (id, project_id, parent_id, slug, path, type, title, status, published_at, seo)
    values (gen_random_uuid(), ${id}, null, 'blog', 'blog', 'collection', 'Blog', 'published', now(), '{}')`);
  const en = `{${VOCAB.en.join(",")}}`;
  await db.execute(sql`insert into nodes (id, project_id, parent_id, slug, path, type, title, status, published_at, seo)
    select gen_random_uuid(), ${id}, case when i % 10 = 0 then (select id from nodes where project_id = ${id} and path = 'blog') end,
      'page-' || i, case when i % 10 = 0 then 'blog/page-' || i else 'page-' || i end, case when i % 10 = 0 then 'post' else 'page' end,
      initcap(${sql.raw(words(`'${en}'`, 4))}), 'published', now(),
      jsonb_build_object('description', ${sql.raw(words(`'${en}'`, 14))})
    from generate_series(1, ${NODES}) i`);
  await db.execute(sql`insert into blocks (id, node_id, type, "order", data)
    select gen_random_uuid(), n.id, 'text', b, jsonb_build_object('body', ${sql.raw(words(`'${en}'`, 40, "n.id::text || b::text"))})
    from nodes n cross join generate_series(0, 2) b where n.project_id = ${id} and n.type <> 'collection'`);
  for (const locale of ["de", "fr"] as const) {
    const v = `{${VOCAB[locale].join(",")}}`;
    await db.execute(sql`insert into translations (id, project_id, node_id, locale, meta, blocks, status)
      select gen_random_uuid(), ${id}, n.id, ${locale},
        jsonb_build_object('title', initcap(${sql.raw(words(`'${v}'`, 4, "n.id"))}), 'slug', n.slug || '-${sql.raw(locale)}', 'description', ${sql.raw(words(`'${v}'`, 14, "n.id"))}),
        (select jsonb_object_agg(b.id, jsonb_build_object('body', ${sql.raw(words(`'${v}'`, 40, "b.id"))})) from blocks b where b.node_id = n.id), 'published'
      from nodes n where n.project_id = ${id} and n.type <> 'collection'`);
  }
  await mirrorPublishedVersions(db, id);
  log(`seeded ${NODES} nodes × 3 locales in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  // The index as migration 0016 and search:reindex build it.
  const t1 = performance.now();
  await db.execute(
    sql`insert into search_documents (project_id, node_id, published, locale, type, parent_id, config, title, body, blocks) select r.* from (select array(select n.id from nodes n where n.project_id = ${id}) as a) ids, search_rows(${id}::uuid, ids.a, ids.a) r`,
  );
  await db.execute(sql`insert into search_projects (project_id, model_version, fields_key, default_locale) values (${id}, 0, '', 'en')`);
  // As autovacuum leaves a table at rest: statistics, and the visibility map.
  await db.execute(sql`vacuum analyze`);
  log(`index built in ${((performance.now() - t1) / 1000).toFixed(1)} s`);
  return id;
}

interface Sizes {
  rows: number;
  table_mb: number;
  indexes: Record<string, number>;
}
async function sizes(db: Db): Promise<Sizes> {
  const [r] = rows<{ n: number; t: string }>(await db.execute(sql`select count(*)::int as n, pg_table_size('search_documents')::text as t from search_documents`));
  const idx = rows<{ name: string; b: string }>(
    await db.execute(sql`select indexrelid::regclass::text as name, pg_relation_size(indexrelid)::text as b from pg_index where indrelid = 'search_documents'::regclass`),
  );
  const mb = (b: string | number): number => Math.round(Number(b) / 1e5) / 10;
  return { rows: Number(r?.n), table_mb: mb(r?.t ?? 0), indexes: Object.fromEntries(idx.map((i) => [i.name, mb(i.b)])) };
}

/** The queries: words of several frequencies, two words, a phrase, an exclusion, prefixes, in the three locales. */
function queries(): string[] {
  const out: string[] = [];
  for (let i = 0; i < 60; i++) {
    const locale = (["en", "de", "fr"] as const)[i % 3] ?? "en";
    const v = VOCAB[locale];
    const common = v[i % 20] ?? "";
    const mid = v[100 + ((i * 37) % 900)] ?? "";
    const rare = v[2000 + ((i * 101) % 3000)] ?? "";
    const q = [mid, `${common} ${mid}`, rare, `"${v[i % 50]} ${v[(i * 7) % 50]}"`, `${mid} -${common}`, mid.slice(0, 4), `${common} ${rare.slice(0, 3)}`][i % 7] ?? mid;
    out.push(`q=${encodeURIComponent(q)}${locale === "en" ? "" : `&locale=${locale}`}`);
  }
  return out;
}
const suggestQueries = (): string[] =>
  Array.from({ length: 60 }, (_, i) => {
    const locale = (["en", "de", "fr"] as const)[i % 3] ?? "en";
    const w = VOCAB[locale][(i * 53) % 1500] ?? "";
    return `q=${encodeURIComponent(w.slice(0, 2 + (i % 4)))}${locale === "en" ? "" : `&locale=${locale}`}`;
  });

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN;

function cpuOf(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return ((Number(f[11]) + Number(f[12])) * 1e6) / 100;
}

interface Latencies {
  p50: number;
  p95: number;
  p99: number;
  max: number;
  rps: number;
  cpu_us: number;
  pg_cpu_us: number;
}

/** The CPU time (µs) of every PostgreSQL server process on the machine (its backends, writers and all): 0 where there is none. */
function postgresCpu(): number {
  let sum = 0;
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      if (stat.includes(" (postgres) ")) sum += cpuOf(Number(pid));
    } catch {
      // gone since the listing
    }
  }
  return sum;
}

/** `n` requests over CONNECTIONS connections; latencies sorted (ms), requests/s, and the CPU µs per request of the service and of PostgreSQL (`pg_cpu_us`, 0 on PGlite: it runs in the service). */
async function load(urls: string[], n: number, pid: number, connections = CONNECTIONS): Promise<Latencies> {
  const times: number[] = [];
  let next = 0;
  const cpu0 = cpuOf(pid);
  const pg0 = postgresCpu();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < n) {
        const url = urls[next++ % urls.length] ?? "";
        const t = performance.now();
        const res = await fetch(url);
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
        times.push(performance.now() - t);
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  times.sort((a, b) => a - b);
  const f = (x: number): number => +x.toFixed(2);
  return {
    p50: f(percentile(times, 50)),
    p95: f(percentile(times, 95)),
    p99: f(percentile(times, 99)),
    max: f(times.at(-1) ?? 0),
    rps: Math.round(n / elapsed),
    cpu_us: Math.round((cpuOf(pid) - cpu0) / n),
    pg_cpu_us: Math.round((postgresCpu() - pg0) / n),
  };
}

/** Requests over `connections` for SECONDS: requests/s. */
async function rate(url: (i: number) => string, connections: number, stop: { done: boolean }): Promise<number> {
  let count = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (!stop.done) {
        const res = await fetch(url(count++));
        await res.arrayBuffer();
      }
    }),
  );
  return Math.round(count / ((performance.now() - t0) / 1000));
}

async function startService(env: Record<string, string>): Promise<{ pid: number; stop: () => Promise<void> }> {
  const server = Bun.spawn([...(PIN ? ["taskset", "-c", "0"] : []), process.execPath, "src/main.ts"], {
    cwd: ROOT,
    stdout: "ignore",
    stderr: "inherit",
    env: { ...process.env, PORT: String(PORT), HOST: "127.0.0.1", PUBLIC_URL: `http://127.0.0.1:${PORT}`, SEED_DEMO: "false", LOG_LEVEL: "info", DB_POOL_SIZE: "8", ...env },
  });
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${PORT}/readyz`)).ok) break;
    } catch {
      // not up yet
    }
    if (i > 1200) throw new Error("the service did not start");
    await Bun.sleep(100);
  }
  return {
    pid: server.pid,
    stop: async () => {
      server.kill("SIGTERM");
      await server.exited;
    },
  };
}

async function measure(label: string, env: Record<string, string>, extra?: (pid: number) => Promise<Record<string, unknown>>): Promise<Record<string, unknown>> {
  const service = await startService({ ...env, DELIVERY_CACHE_ENTRIES: "0" });
  try {
    const base = `http://127.0.0.1:${PORT}/api/p/bench`;
    const search = queries().map((q) => `${base}/search?${q}`);
    const suggest = suggestQueries().map((q) => `${base}/search/suggest?${q}`);
    const sample = (await (await fetch(search[0] ?? "")).json()) as { total: number };
    log(`${label}: first answer total ${sample.total}`);
    await load(search, Math.min(300, REQUESTS), service.pid); // warm-up
    const s = await load(search, REQUESTS, service.pid);
    log(`${label} search: ${JSON.stringify(s)}`);
    await load(suggest, 200, service.pid);
    const g = await load(suggest, REQUESTS, service.pid);
    log(`${label} suggest: ${JSON.stringify(g)}`);
    const totals: number[] = [];
    for (const url of search) totals.push(((await (await fetch(url)).json()) as { total: number }).total);
    totals.sort((a, b) => a - b);
    return { search: s, suggest: g, hits_per_query: { p50: percentile(totals, 50), max: totals.at(-1) }, ...(extra ? await extra(service.pid) : {}) };
  } finally {
    await service.stop();
  }
}

/** Hot delivery reads (by path, answers cached) alone, then beside a search load (distinct queries, so misses). */
async function readsBesideSearch(env: Record<string, string>): Promise<Record<string, unknown>> {
  const service = await startService(env);
  try {
    const base = `http://127.0.0.1:${PORT}/api/p/bench`;
    const pages = Array.from({ length: 200 }, (_, i) => `${base}/nodes/by-path/page-${1 + i * 3}`);
    for (const p of pages) await (await fetch(p)).arrayBuffer();
    const alone = async (): Promise<number> => {
      const stop = { done: false };
      const r = rate((i) => pages[i % pages.length] ?? "", 8, stop);
      await Bun.sleep(SECONDS * 1000);
      stop.done = true;
      return r;
    };
    const beside = async (): Promise<{ reads: number; searches: number }> => {
      const stop = { done: false };
      // Every search a different query (a query and a page number): none is answered from the cache.
      const distinct = (k: number): string => `${base}/search?${queries()[k % 60]}&page=${1 + (Math.floor(k / 60) % 100)}`;
      const searches = rate(distinct, 2, stop);
      const reads = rate((i) => pages[i % pages.length] ?? "", 8, stop);
      await Bun.sleep(SECONDS * 1000);
      stop.done = true;
      return { reads: await reads, searches: await searches };
    };
    await alone(); // warm-up
    const a1 = await alone();
    const b1 = await beside();
    const a2 = await alone();
    const b2 = await beside();
    const a = Math.max(a1, a2);
    const b = Math.max(b1.reads, b2.reads);
    const out = { reads_alone_rps: a, reads_beside_search_rps: b, searches_rps: Math.max(b1.searches, b2.searches), loss: +(1 - b / a).toFixed(3), runs: { a1, b1, a2, b2 } };
    log(`reads beside search: ${JSON.stringify(out)}`);
    return out;
  } finally {
    await service.stop();
  }
}

/** The PostgreSQL runs: a database of its own, seeded, then the service on it. */
async function onPostgres(results: Record<string, unknown>): Promise<void> {
  if (KEEP) {
    log(`reusing ${DB_NAME} as an earlier run left it (BENCH_KEEP=1)`);
    results.postgres = await measure("postgres", { DATABASE_URL });
    return;
  }
  const admin = postgres(`${PG}/postgres`, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists ${DB_NAME} with (force)`);
  await admin.unsafe(`create database ${DB_NAME}`);
  await admin.end();
  const pg = await openDb({ databaseUrl: DATABASE_URL, dataDir: "", poolSize: 2 });
  await runMigrations(pg);
  await seed(pg.db);
  results.postgres_index = await sizes(pg.db);
  log(`index: ${JSON.stringify(results.postgres_index)}`);
  await pg.close();
  results.postgres = await measure("postgres", { DATABASE_URL });
}

async function main(): Promise<void> {
  if (PIN) Bun.spawnSync(["taskset", "-pc", "1", String(process.pid)], { stdout: "ignore" });
  const results: Record<string, unknown> = { at: new Date().toISOString(), nodes: NODES, locales: 3, connections: CONNECTIONS, requests: REQUESTS };
  if (POSTGRES) await onPostgres(results);
  if (PGLITE) {
    const dataDir = LITE_DIR || join(work, "data");
    if (LITE_DIR !== "" && existsSync(join(LITE_DIR, "PG_VERSION"))) log(`reusing ${LITE_DIR} as an earlier run left it (BENCH_LITE_DIR)`);
    else {
      const lite = await openDb({ databaseUrl: null, dataDir });
      await runMigrations(lite);
      await seed(lite.db);
      results.pglite_index = await sizes(lite.db);
      await lite.close();
    }
    const env = { DATA_DIR: dataDir, DATABASE_URL: "" };
    results.pglite = await measure("pglite", env);
    results.pglite_reads_beside_search = await readsBesideSearch(env);
  }
  const file = join(HERE, NODES === 10_000 ? (POSTGRES && PGLITE ? "results.json" : POSTGRES ? "results-postgres.json" : "results-pglite.json") : `results-${NODES}.json`);
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  log(`written ${file}`);
  rmSync(work, { recursive: true, force: true });
}

await main();
