// What a render of a page with references costs on PostgreSQL: BENCH_RENDER_PAGES (400) published
// posts whose `related` field references the next one (a reference field makes the page's
// statement look up its references: the statement PostgreSQL's JIT compiled on every execution
// until db/client.ts turned JIT off). The real service (src/main.ts) pinned to CPU 0, with its
// in-memory answer cache and stored answers off (DELIVERY_CACHE_ENTRIES=0,
// DELIVERY_STORED_ANSWERS=false: every read is a render, as the first read after a write is);
// this process on CPU 1 reads the pages by path in turn over BENCH_CONNECTIONS (8) connections
// for BENCH_SECONDS (10) after 2 s of warm-up, and reports renders/s and latencies.
// Usage: bun bench/delivery/renders.ts
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { openDb } from "../../db/client";
import { runMigrations } from "../../db/migrate";
import { contentModels, nodes, projects } from "../../db/schema";
import { mirrorPublishedVersions } from "../../src/content/publish";
import { uuidv7 } from "../../src/lib/ids";

const PG = process.env.BENCH_PG ?? "postgres://postgres@127.0.0.1:5432";
const DB_NAME = process.env.BENCH_DB ?? "cms_bench_renders";
const PORT = Number(process.env.BENCH_PORT ?? 3932);
const PAGES = Number(process.env.BENCH_RENDER_PAGES ?? 400);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROOT = join(new URL(".", import.meta.url).pathname, "../..");
const BASE = `http://127.0.0.1:${PORT}`;
const PIN = Bun.which("taskset") !== null;
const MODEL = {
  strict: false,
  block_types: [],
  node_types: [{ name: "post", description: "", fields: { type: "object", properties: { related: { type: "string", format: "node" } } }, blocks: null, children: null }],
};

const admin = postgres(`${PG}/postgres`, { max: 1, onnotice: () => {} });
await admin.unsafe(`drop database if exists ${DB_NAME} with (force)`);
await admin.unsafe(`create database ${DB_NAME}`);
await admin.end();
const url = `${PG}/${DB_NAME}`;
const dir = mkdtempSync(join(tmpdir(), "bench-renders-"));
{
  const handle = await openDb({ databaseUrl: url, dataDir: dir, poolSize: 2 });
  await runMigrations(handle);
  const db = handle.db;
  const projectId = uuidv7();
  const at = new Date();
  await db
    .insert(projects)
    .values({ id: projectId, slug: "bench", name: "Bench", defaultLocale: "en", locales: ["en"], publicBaseUrl: "https://bench.example", createdAt: at, updatedAt: at, modelVersion: 1 });
  await db.insert(contentModels).values({ projectId, version: 1, definition: MODEL });
  const ids = Array.from({ length: PAGES + 1 }, () => uuidv7());
  const row = (i: number) => ({
    id: ids[i + 1],
    projectId,
    parentId: ids[0],
    slug: `p-${i}`,
    path: `docs/p-${i}`,
    type: "post",
    title: `Post ${i}`,
    status: "published",
    position: i,
    seo: {},
    fields: { related: ids[((i + 1) % PAGES) + 1] },
    publishedAt: at,
    createdAt: at,
    updatedAt: at,
  });
  const docs = {
    id: ids[0],
    projectId,
    parentId: null,
    slug: "docs",
    path: "docs",
    type: "page",
    title: "Docs",
    status: "published",
    position: 0,
    seo: {},
    publishedAt: at,
    createdAt: at,
    updatedAt: at,
  };
  await db.insert(nodes).values([docs, ...Array.from({ length: PAGES }, (_, i) => row(i))] as never);
  await mirrorPublishedVersions(db, projectId);
  await handle.close();
}

const server = Bun.spawn([...(PIN ? ["taskset", "-c", "0"] : []), process.execPath, "src/main.ts"], {
  cwd: ROOT,
  env: {
    ...process.env,
    PORT: String(PORT),
    HOST: "127.0.0.1",
    SEED_DEMO: "false",
    LOG_LEVEL: "warn",
    DATA_DIR: dir,
    DATABASE_URL: url,
    DELIVERY_CACHE_ENTRIES: "0",
    DELIVERY_STORED_ANSWERS: "false",
  },
  stdout: "ignore",
  stderr: "inherit",
});
for (
  let i = 0;
  !(await fetch(`${BASE}/readyz`).then(
    (r) => r.ok,
    () => false,
  ));
  i++
) {
  if (i > 600) throw new Error("the service did not come up");
  await Bun.sleep(100);
}
const first = (await (await fetch(`${BASE}/api/p/bench/nodes/by-path/docs/p-0`)).json()) as { data?: { fields?: { related?: { title?: string } } } };
if (first.data?.fields?.related?.title !== "Post 1") throw new Error(`the reference is not rendered: ${JSON.stringify(first).slice(0, 300)}`);

async function load(ms: number): Promise<number[]> {
  const took: number[] = [];
  const end = performance.now() + ms;
  let next = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < end) {
        const i = next++ % PAGES;
        const t = performance.now();
        const res = await fetch(`${BASE}/api/p/bench/nodes/by-path/docs/p-${i}`);
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`page ${i}: ${res.status}`);
        took.push(performance.now() - t);
      }
    }),
  );
  return took;
}
await load(2000);
const took = (await load(SECONDS * 1000)).sort((a, b) => a - b);
const at = (q: number): string => (took[Math.min(took.length - 1, Math.floor(q * took.length))] ?? Number.NaN).toFixed(1);
console.log(`renders of a page with a reference, ${CONNECTIONS} connections: ${(took.length / SECONDS).toFixed(0)}/s, p50 ${at(0.5)} ms, p95 ${at(0.95)} ms, p99 ${at(0.99)} ms`);
server.kill();
await server.exited;
rmSync(dir, { recursive: true, force: true });
