// Entries benchmark (issue 24): one collection of 100,000 entries with a date-time and a category
// field (both `index: true`), read filtered by category and sorted by date, newest first, through
// the real service with its answer cache off (DELIVERY_CACHE_ENTRIES=0: every read is a database
// read), on PostgreSQL. The service is pinned to CPU 0, the client (this process) to CPU 1; the
// client sends requests over a few keep-alive connections and records each latency.
// Usage: bun bench/entries/run.ts  (see bench/README.md)
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { openDb } from "../../db/client";
import { runMigrations } from "../../db/migrate";
import { contentModels, projects } from "../../db/schema";
import { mirrorPublishedVersions } from "../../src/content/publish";
import { entriesQuery, entriesStatement } from "../../src/delivery/service";
import { uuidv7 } from "../../src/lib/ids";
import { rows } from "../../src/lib/json";
import { compiledModel } from "../../src/model/cache";
import { syncFieldIndexes } from "../../src/model/indexes";

if (!Bun.which("taskset")) throw new Error("taskset is not installed (util-linux)");

const PG = process.env.BENCH_PG ?? "postgres://postgres@127.0.0.1:5432";
const DB_NAME = process.env.BENCH_DB ?? "cms_bench_entries";
const DATABASE_URL = `${PG}/${DB_NAME}`;
const PORT = 3921;
const ENTRIES = Number(process.env.BENCH_ENTRIES ?? 100_000);
const CATEGORIES = Number(process.env.BENCH_CATEGORIES ?? 10);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 1);
const HERE = new URL(".", import.meta.url).pathname;
const ROOT = join(HERE, "../..");
const work = mkdtempSync(join(tmpdir(), "cms-bench-entries-"));

const log = (msg: string): void => console.log(`[bench] ${msg}`);

const MODEL = {
  strict: false,
  block_types: [],
  node_types: [
    {
      name: "post",
      description: "a blog post",
      fields: { type: "object", properties: { date: { type: "string", format: "date-time", index: true }, category: { type: "string", index: true } } },
      blocks: null,
      children: null,
    },
  ],
};

async function seed(): Promise<string> {
  const admin = postgres(`${PG}/postgres`, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists ${DB_NAME} with (force)`);
  await admin.unsafe(`create database ${DB_NAME}`);
  await admin.end();
  const handle = await openDb({ databaseUrl: DATABASE_URL, dataDir: "", poolSize: 2 });
  await runMigrations(handle);
  const db = handle.db;
  const id = uuidv7();
  const now = new Date();
  await db.insert(projects).values({ id, slug: "bench", name: "Bench", defaultLocale: "en", locales: ["en"], createdAt: now, updatedAt: now, modelVersion: 1 });
  await db.insert(contentModels).values({ projectId: id, version: 1, definition: MODEL });
  const blog = uuidv7();
  await db.execute(sql`insert into nodes (id, project_id, parent_id, slug, path, type, title, status, published_at)
    values (${blog}, ${id}, null, 'blog', 'blog', 'collection', 'Blog', 'published', now())`);
  const t0 = performance.now();
  // Dates an hour apart, in shuffled order against insertion, with mixed offsets (text order is not time order).
  await db.execute(sql`insert into nodes (id, project_id, parent_id, slug, path, type, title, status, published_at, fields)
    select gen_random_uuid(), ${id}, ${blog}, 'post-' || i, 'blog/post-' || i, 'post', 'Post ' || i, 'published', now(),
      jsonb_build_object(
        'date', case when i % 2 = 0 then to_char(ts at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
                     else to_char((ts + interval '2 hours') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"+02:00"') end,
        'category', 'cat-' || (i % ${CATEGORIES}))
    from (select i, timestamptz '2015-01-01 00:00:00+00' + ((i::bigint * 7919) % ${ENTRIES}) * interval '1 hour' as ts
          from generate_series(1, ${ENTRIES}) i) d`);
  await mirrorPublishedVersions(db, id);
  log(`seeded ${ENTRIES} entries in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const t1 = performance.now();
  const made = await syncFieldIndexes(db, id, await compiledModel(db, id, 1));
  log(`syncFieldIndexes: ${made.created.length} indexes in ${((performance.now() - t1) / 1000).toFixed(1)} s`);
  await db.execute(sql`analyze`);
  await handle.close();
  return id;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN;
}

async function main(): Promise<void> {
  const projectId = await seed();
  const server = Bun.spawn(["taskset", "-c", "0", process.execPath, "src/main.ts"], {
    cwd: ROOT,
    stdout: "ignore",
    stderr: "inherit",
    env: {
      ...process.env,
      PORT: String(PORT),
      HOST: "127.0.0.1",
      PUBLIC_URL: `http://127.0.0.1:${PORT}`,
      SEED_DEMO: "false",
      DATA_DIR: join(work, "data"),
      LOG_LEVEL: "info",
      DB_POOL_SIZE: "4",
      DATABASE_URL,
      DELIVERY_CACHE_ENTRIES: "0",
    },
  });
  // This process is the client: CPU 1.
  Bun.spawnSync(["taskset", "-pc", "1", String(process.pid)], { stdout: "ignore" });
  try {
    const base = `http://127.0.0.1:${PORT}`;
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${base}/healthz`)).ok) break;
      } catch {
        // not up yet
      }
      if (i > 600) throw new Error("the service did not start");
      await Bun.sleep(100);
    }
    const url = (i: number): string => `${base}/api/p/bench/entries?collection=blog&field.category=cat-${i % CATEGORIES}&sort=-field.date&page=${1 + (Math.floor(i / CATEGORIES) % 5)}`;
    const check = await fetch(url(0));
    const body = (await check.json()) as { total: number; data: unknown[] };
    if (check.status !== 200 || body.data.length !== 20) throw new Error(`unexpected answer: ${check.status} ${JSON.stringify(body).slice(0, 300)}`);
    log(`answer: total ${body.total}, ${body.data.length} entries per page`);
    const run = async (n: number): Promise<number[]> => {
      const times: number[] = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < n) {
            const i = next++;
            const t = performance.now();
            const res = await fetch(url(i));
            await res.arrayBuffer();
            if (res.status !== 200) throw new Error(`status ${res.status}`);
            times.push(performance.now() - t);
          }
        }),
      );
      return times.sort((a, b) => a - b);
    };
    await run(Math.min(500, REQUESTS)); // warm-up: prepared statements, JIT
    const t0 = performance.now();
    const times = await run(REQUESTS);
    const elapsed = (performance.now() - t0) / 1000;
    const result = {
      at: new Date().toISOString(),
      entries: ENTRIES,
      categories: CATEGORIES,
      requests: REQUESTS,
      concurrency: CONCURRENCY,
      rps: Math.round(REQUESTS / elapsed),
      p50_ms: +percentile(times, 50).toFixed(2),
      p95_ms: +percentile(times, 95).toFixed(2),
      p99_ms: +percentile(times, 99).toFixed(2),
      max_ms: +(times.at(-1) ?? 0).toFixed(2),
    };
    // The statement the service runs, planned as it plans it, with its own time in the database.
    const handle = await openDb({ databaseUrl: DATABASE_URL, dataDir: "", poolSize: 1 });
    const project = { id: projectId, slug: "bench", name: "Bench", defaultLocale: "en", locales: ["en"], publicBaseUrl: null, siteName: "Bench", version: 0, modelVersion: 1 };
    const input = entriesQuery({
      collection: "blog",
      page: "1",
      per_page: "20",
      q: undefined,
      sort: "-field.date",
      filters: [{ param: "field.category", name: "category", op: "eq", value: "cat-3" }],
    });
    const plan = await handle.db.execute(sql`explain (analyze, costs off) ${await entriesStatement(handle.db, project, input)}`);
    await handle.close();
    const lines = rows<Record<string, string>>(plan).map((r) => Object.values(r)[0] ?? "");
    log(JSON.stringify(result));
    for (const l of lines) log(`  ${l}`);
    writeFileSync(join(HERE, "results.json"), `${JSON.stringify({ ...result, plan: lines }, null, 2)}\n`);
  } finally {
    server.kill("SIGTERM");
    await server.exited;
  }
}

await main();
