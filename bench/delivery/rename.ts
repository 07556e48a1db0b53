// What a write that touches many stored answers costs (issue 42): a parent with BENCH_RENAME_PAGES
// (10,000) published pages below it is renamed (PATCH its slug, then publish it) while every page's
// answer is stored, against the same rename with stored answers off (DELIVERY_STORED_ANSWERS=false:
// no row to mark). The real service (src/main.ts, default configuration otherwise) on a PostgreSQL
// database of its own, pinned to CPU 0; this process on CPU 1 reads every page by path (so each
// answer is stored) before each rename, then times the two requests of the rename.
// Usage: bun bench/delivery/rename.ts   (BENCH_EMBEDDED=1: on the embedded database instead)
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { openDb } from "../../db/client";
import { runMigrations } from "../../db/migrate";
import { nodes, projects } from "../../db/schema";
import { mirrorPublishedVersions } from "../../src/content/publish";
import { uuidv7 } from "../../src/lib/ids";

const PG = process.env.BENCH_PG ?? "postgres://postgres@127.0.0.1:5432";
const DB_NAME = process.env.BENCH_DB ?? "cms_bench_rename";
const PORT = Number(process.env.BENCH_PORT ?? 3931);
const PAGES = Number(process.env.BENCH_RENAME_PAGES ?? 10_000);
const REPS = Number(process.env.BENCH_REPS ?? 3);
const EMBEDDED = process.env.BENCH_EMBEDDED === "1";
const TOKEN = "bench-root-admin-token-0123456789abcdef";
const ROOT = join(new URL(".", import.meta.url).pathname, "../..");
const BASE = `http://127.0.0.1:${PORT}`;
const PIN = Bun.which("taskset") !== null;
const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };

async function seed(url: string | null, dataDir: string): Promise<{ parent: string }> {
  const handle = await openDb({ databaseUrl: url, dataDir, poolSize: 2 });
  await runMigrations(handle);
  const db = handle.db;
  const projectId = uuidv7();
  const at = new Date();
  await db.insert(projects).values({ id: projectId, slug: "bench", name: "Bench", defaultLocale: "en", locales: ["en"], publicBaseUrl: "https://bench.example", createdAt: at, updatedAt: at });
  const row = (slug: string, path: string, parentId: string | null, position: number) => ({
    id: uuidv7(),
    projectId,
    parentId,
    slug,
    path,
    type: "page",
    title: `${slug} title`,
    status: "published",
    position,
    seo: {},
    publishedAt: at,
    createdAt: at,
    updatedAt: at,
  });
  const site = row("site", "site", null, 0);
  const docs = row("docs", "site/docs", site.id, 0);
  const pages = Array.from({ length: PAGES }, (_, i) => row(`p-${i}`, `site/docs/p-${i}`, docs.id, i));
  const all = [site, docs, ...pages];
  for (let i = 0; i < all.length; i += 1000) await db.insert(nodes).values(all.slice(i, i + 1000) as never);
  await mirrorPublishedVersions(db, projectId);
  await handle.close();
  return { parent: docs.id };
}

async function start(env: Record<string, string>, url: string | null, dataDir: string): Promise<Bun.Subprocess> {
  const all: Record<string, string | undefined> = {
    ...process.env,
    PORT: String(PORT),
    HOST: "127.0.0.1",
    PUBLIC_URL: BASE,
    SEED_DEMO: "false",
    LOG_LEVEL: "warn",
    ADMIN_TOKEN: TOKEN,
    DATA_DIR: dataDir,
    ...env,
  };
  if (url === null) delete all.DATABASE_URL;
  else all.DATABASE_URL = url;
  const server = Bun.spawn([...(PIN ? ["taskset", "-c", "0"] : []), process.execPath, "src/main.ts"], { cwd: ROOT, env: all, stdout: "ignore", stderr: "inherit" });
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
  return server;
}

/** Every page read by path, 16 at a time (each answer rendered and stored, or read). */
async function readAll(prefix: string): Promise<number> {
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < PAGES) {
        const i = next++;
        const res = await fetch(`${BASE}/api/p/bench/nodes/by-path/site/${prefix}/p-${i}`);
        if (res.status !== 200) throw new Error(`page ${i}: ${res.status}`);
        await res.arrayBuffer();
      }
    }),
  );
  return performance.now() - t0;
}

async function rename(parent: string, slug: string): Promise<{ patch: number; publish: number }> {
  let t = performance.now();
  const patched = await fetch(`${BASE}/admin/p/bench/nodes/${parent}`, { method: "PATCH", headers: auth, body: JSON.stringify({ slug }) });
  if (patched.status !== 200) throw new Error(`rename: ${patched.status} ${await patched.text()}`);
  const patch = performance.now() - t;
  t = performance.now();
  const published = await fetch(`${BASE}/admin/p/bench/nodes/${parent}/publish`, { method: "POST", headers: auth });
  if (published.status !== 200) throw new Error(`publish: ${published.status} ${await published.text()}`);
  return { patch, publish: performance.now() - t };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

const results: Record<string, { read_ms: number[]; patch_ms: number[]; publish_ms: number[]; rows: number }> = {};
for (const [label, env] of [
  ["stored answers on (default)", {}],
  ["stored answers off", { DELIVERY_STORED_ANSWERS: "false" }],
] as const) {
  const dir = mkdtempSync(join(tmpdir(), "bench-rename-"));
  let url: string | null = null;
  if (!EMBEDDED) {
    const admin = postgres(`${PG}/postgres`, { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop database if exists ${DB_NAME} with (force)`);
    await admin.unsafe(`create database ${DB_NAME}`);
    await admin.end();
    url = `${PG}/${DB_NAME}`;
  }
  const { parent } = await seed(url, dir);
  const server = await start(env, url, dir);
  const r = { read_ms: [] as number[], patch_ms: [] as number[], publish_ms: [] as number[], rows: 0 };
  let prefix = "docs";
  for (let rep = 0; rep < REPS; rep++) {
    r.read_ms.push(await readAll(prefix));
    prefix = prefix === "docs" ? "manual" : "docs";
    const t = await rename(parent, prefix);
    r.patch_ms.push(t.patch);
    r.publish_ms.push(t.publish);
    console.log(`${label}, rename ${rep + 1}: PATCH ${t.patch.toFixed(1)} ms, publish ${t.publish.toFixed(1)} ms (pages read before: ${r.read_ms.at(-1)?.toFixed(0)} ms)`);
  }
  if (url !== null) {
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    r.rows = Number((await sql`select count(*)::int as n from delivery_answers`)[0]?.n ?? 0);
    await sql.end();
  }
  server.kill();
  await server.exited;
  rmSync(dir, { recursive: true, force: true });
  results[label] = r;
}
console.log(
  `\n| ${PAGES.toLocaleString("en")} pages under the renamed parent (${EMBEDDED ? "embedded PGlite" : "PostgreSQL"}) | PATCH ms (median) | publish ms (median) | all pages read before, ms (median) |`,
);
console.log("|---|---:|---:|---:|");
for (const [label, r] of Object.entries(results)) console.log(`| ${label} | ${median(r.patch_ms).toFixed(1)} | ${median(r.publish_ms).toFixed(1)} | ${median(r.read_ms).toFixed(0)} |`);
