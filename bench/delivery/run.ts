// Delivery benchmark: seeds a dedicated PostgreSQL database (and an embedded PGlite data dir with
// the same content), starts the service in its default configuration (`LOG_LEVEL=info`, access
// log on) pinned to CPU 0, drives it with wrk pinned to CPU 1 and compares every case with a
// reference measured back to back: a bare Bun.serve answering the same bytes and headers (hot
// reads), or a Bun.serve doing one trivial postgres.js query per request (cache misses).
// Usage: bun bench/delivery/run.ts  (see bench/README.md)
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql as sqlTag } from "drizzle-orm";
import postgres from "postgres";
import { openDb } from "../../db/client";
import { runMigrations } from "../../db/migrate";
import { seedBigSite, seedSite } from "./seed";

// Without wrk every figure would read NaN: refuse at once, saying what to install.
for (const tool of ["wrk", "taskset"]) if (!Bun.which(tool)) throw new Error(`${tool} is not installed: apt-get install -y wrk (taskset comes with util-linux)`);

const PG = process.env.BENCH_PG ?? "postgres://postgres@127.0.0.1:5432";
const DB_NAME = process.env.BENCH_DB ?? "cms_bench_delivery";
const DATABASE_URL = `${PG}/${DB_NAME}`;
const PORT = 3911;
const REF_PORT = 3912;
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 100);
const WARMUP_S = Number(process.env.BENCH_WARMUP ?? 3);
const DURATION_S = Number(process.env.BENCH_DURATION ?? 8);
const REPS = Number(process.env.BENCH_REPS ?? 3);
const MISS_PAGES = Number(process.env.BENCH_MISS_PAGES ?? 400);
const POOL = 4;
const MEMORY_ROUNDS = 10;
const BIG_NODES = Number(process.env.BENCH_BIG_NODES ?? 100_000);
const WITH_PGLITE = process.env.BENCH_PGLITE !== "0";
// The translated misses: `fr` pages of `bench`, and `fr-CA` pages of `bench-chain` (fr-CA → fr by RFC 4647 lookup).
const TRANSLATED_MISSES = process.env.BENCH_MISS_TRANSLATED !== "0";
/** BENCH_MISSES=0: hot reads only (no miss runs, on PostgreSQL nor embedded). */
const MISSES = process.env.BENCH_MISSES !== "0";
// Other runtimes for the hot reads (the same sources, started as `npm run start:node|deno` would,
// without npm in between): BENCH_RUNTIMES="node deno"; binaries from XRT_NODE / XRT_DENO or PATH.
const OTHER_RUNTIMES = (process.env.BENCH_RUNTIMES ?? "").split(/[\s,]+/).filter((r) => r === "node" || r === "deno");
const RUNTIME_CMD: Record<string, string[]> = {
  node: [process.env.XRT_NODE ?? "node", "--disable-warning=ExperimentalWarning", "--import", "tsx", "src/main.ts"],
  deno: [process.env.XRT_DENO ?? "deno", "run", "--sloppy-imports", "--node-modules-dir=manual", "--allow-all", "src/main.ts"],
};
const HERE = new URL(".", import.meta.url).pathname;
const ROOT = join(HERE, "../..");
const BUN = process.execPath;
const work = mkdtempSync(join(tmpdir(), "cms-bench-"));
// wrk sends no Accept-Encoding; everything here asks for the same identity bytes.
const IDENTITY = { headers: { "accept-encoding": "identity" } };

interface WrkResult {
  rps: number;
  p50: number;
  p99: number;
  errors: string | null;
  /** CPU time (user + system) per request of the measured server, and of its database backends. */
  cpuUs: number;
  dbCpuUs: number;
}
interface Proc {
  pid: number;
  stop: () => Promise<void>;
}

function log(msg: string): void {
  console.log(`[bench] ${msg}`);
}

async function recreateDatabase(): Promise<void> {
  const admin = postgres(`${PG}/postgres`, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists ${DB_NAME} with (force)`);
  await admin.unsafe(`create database ${DB_NAME}`);
  await admin.end();
}

function spawn(cmd: string[], env: Record<string, string | undefined> = process.env): Proc {
  const proc = Bun.spawn(["taskset", "-c", "0", ...cmd], { cwd: ROOT, env, stdout: "ignore", stderr: "inherit" });
  return {
    pid: proc.pid,
    stop: async () => {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}

/** The real service, default configuration unless `env` says otherwise; `db: "pglite"` = embedded. */
function startServer(env: Record<string, string>, db: { pglite: string } | "postgres" = "postgres", cmd: string[] = [BUN, "src/main.ts"]): Proc {
  const full: Record<string, string | undefined> = {
    ...process.env,
    PORT: String(PORT),
    HOST: "127.0.0.1",
    PUBLIC_URL: `http://127.0.0.1:${PORT}`,
    SEED_DEMO: "false",
    DATA_DIR: db === "postgres" ? join(work, "data") : db.pglite,
    LOG_LEVEL: "info",
    DB_POOL_SIZE: String(POOL),
    ADMIN_TOKEN: "bench-root-admin-token-0123456789abcdef",
    ...env,
  };
  if (db === "postgres") full.DATABASE_URL = DATABASE_URL;
  else delete full.DATABASE_URL;
  return spawn(cmd, full);
}

async function waitFor(url: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not up yet
    }
    await Bun.sleep(100);
  }
  throw new Error(`${url} did not come up`);
}

function ms(value: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(value.trim());
  if (!m) return NaN;
  const n = Number(m[1]);
  return m[2] === "us" ? n / 1000 : m[2] === "ms" ? n : m[2] === "s" ? n * 1000 : n * 60_000;
}

/** utime + stime of a process, in microseconds (0 when it is gone). */
function cpuOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(f[11]) + Number(f[12])) * 1e6) / 100; // USER_HZ = 100
  } catch {
    return 0;
  }
}

const monitor = postgres(`${PG}/postgres`, { max: 1, onnotice: () => {} });
async function dbBackends(): Promise<number[]> {
  const rows = await monitor`select pid from pg_stat_activity where datname = ${DB_NAME} and pid <> pg_backend_pid()`;
  return rows.map((r) => Number(r.pid));
}

async function wrk(url: string, seconds: number, opts: { script?: { file: string; paths: string }; pid?: number; connections?: number } = {}): Promise<WrkResult> {
  const args = ["taskset", "-c", "1", "wrk", "-t1", `-c${opts.connections ?? CONNECTIONS}`, `-d${seconds}s`, "--latency", "--timeout", "5s"];
  if (opts.script) args.push("-s", opts.script.file);
  args.push(url);
  const backends = opts.pid ? await dbBackends() : [];
  const cpu0 = opts.pid ? cpuOf(opts.pid) : 0;
  const db0 = backends.reduce((a, p) => a + cpuOf(p), 0);
  const proc = Bun.spawn(args, { stdout: "pipe", stderr: "pipe", env: { ...process.env, ...(opts.script ? { PATHS_FILE: opts.script.paths } : {}) } });
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  const cpu = opts.pid ? cpuOf(opts.pid) - cpu0 : 0;
  const db = backends.reduce((a, p) => a + cpuOf(p), 0) - db0;
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? NaN);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  const p50 = ms(/\n\s+50%\s+(\S+)/.exec(out)?.[1] ?? "");
  const p99 = ms(/\n\s+99%\s+(\S+)/.exec(out)?.[1] ?? "");
  const errs = /Socket errors:[^\n]*|Non-2xx or 3xx responses:[^\n]*/g;
  const errors = out.match(errs)?.join("; ") ?? null;
  return { rps, p50, p99, errors, cpuUs: cpu / requests, dbCpuUs: db / requests };
}

async function rssKb(pid: number): Promise<number> {
  const status = await Bun.file(`/proc/${pid}/status`).text();
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
}

const best = (a: WrkResult | undefined, b: WrkResult): WrkResult => (a && a.rps >= b.rps ? a : b);
/** A case not run (BENCH_MISSES=0). */
const NO_RUN: WrkResult = { rps: Number.NaN, p50: Number.NaN, p99: Number.NaN, errors: null, cpuUs: Number.NaN, dbCpuUs: Number.NaN };

/** Service and reference back to back (drift hits both alike), REPS times; the best run of each is kept. */
async function compare(
  label: string,
  service: { url: string; pid: number },
  reference: { url: string; pid: number },
  script?: { file: string; paths: string },
  connections?: number,
): Promise<{ service: WrkResult; reference: WrkResult }> {
  let s: WrkResult | undefined;
  let r: WrkResult | undefined;
  for (let rep = 0; rep < REPS; rep++) {
    log(`${label} (run ${rep + 1}/${REPS})`);
    await wrk(service.url, WARMUP_S, { script, connections });
    s = best(s, await wrk(service.url, DURATION_S, { script, pid: service.pid, connections }));
    await wrk(reference.url, WARMUP_S, { script, connections });
    r = best(r, await wrk(reference.url, DURATION_S, { script, pid: reference.pid, connections }));
  }
  return { service: s!, reference: r! };
}

/** Captures the service's exact answers (bytes and headers, request id included) for the bare server. */
async function captureAnswers(base: string, paths: string[], file: string): Promise<Record<string, number>> {
  const answers: Record<string, { body: string; headers: Record<string, string> }> = {};
  const sizes: Record<string, number> = {};
  for (const path of paths) {
    const res = await fetch(base + path, IDENTITY);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    const body = new Uint8Array(await res.arrayBuffer());
    const headers: Record<string, string> = {};
    res.headers.forEach((v, k) => {
      if (k !== "content-length" && k !== "date") headers[k] = v;
    });
    answers[path] = { body: Buffer.from(body).toString("base64"), headers };
    sizes[path] = body.length;
  }
  writeFileSync(file, JSON.stringify(answers));
  return sizes;
}

async function main(): Promise<void> {
  const started = performance.now();
  log(`database ${DATABASE_URL}; ${REPS} × ${DURATION_S} s per side and case`);
  await recreateDatabase();
  const handle = await openDb({ databaseUrl: DATABASE_URL, dataDir: "", poolSize: POOL });
  await runMigrations(handle);
  let t = performance.now();
  const site = await seedSite(handle.db, "bench");
  log(`seeded 1,000 pages × 20 blocks (+ fr), 10,000 entries in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  const chained = TRANSLATED_MISSES ? await seedSite(handle.db, "bench-chain", "fr-CA") : null;
  if (BIG_NODES > 0) {
    t = performance.now();
    await seedBigSite(handle.db, "bench-big", BIG_NODES);
    log(`seeded ${BIG_NODES.toLocaleString("en")} nodes for the sitemap run in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  }
  await handle.db.execute(sqlTag`analyze`);
  const pgliteSeed = join(work, "pglite-seed");
  if (WITH_PGLITE) {
    t = performance.now();
    const embedded = await openDb({ databaseUrl: null, dataDir: pgliteSeed });
    await runMigrations(embedded);
    await seedSite(embedded.db, "bench");
    await embedded.db.execute(sqlTag`analyze`);
    await embedded.db.execute(sqlTag`checkpoint`);
    await embedded.close();
    log(`seeded the same site into an embedded PGlite data dir in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  }

  const base = `http://127.0.0.1:${PORT}`;
  const refBase = `http://127.0.0.1:${REF_PORT}`;
  const cases: { name: string; path: string; rotate?: string[] }[] = [
    { name: "by-path, default locale", path: "/api/p/bench/nodes/by-path/section-3/page-42" },
    { name: "by-path, translated (fr)", path: "/api/p/bench/nodes/by-path/section-3-fr/page-42-fr?locale=fr" },
    { name: "by-path, 1,000 pages in turn", path: "/api/p/bench/nodes/by-path/section-0", rotate: site.pagePaths.map((p) => `/api/p/bench/nodes/by-path/${p}`) },
    { name: "entries page 1, sort -updated_at", path: "/api/p/bench/entries?collection=blog&sort=-updated_at" },
    { name: "entries page 50, sort title", path: "/api/p/bench/entries?collection=blog&page=50&sort=title" },
    { name: "sitemap shard (sitemap-1.xml)", path: "/api/p/bench/sitemap-1.xml" },
  ];
  const scripts = new Map<string, { file: string; paths: string }>();
  const rotation = (name: string, paths: string[]): { file: string; paths: string } => {
    const file = join(work, `paths-${scripts.size}.txt`);
    writeFileSync(file, `${paths.join("\n")}\n`);
    const s = { file: join(HERE, "rotate.lua"), paths: file };
    scripts.set(name, s);
    return s;
  };
  for (const c of cases) if (c.rotate) rotation(c.name, c.rotate);

  // ---- hot reads, default configuration, PostgreSQL ----
  let server = startServer({});
  await waitFor(`${base}/healthz`);
  const answersFile = join(work, "answers.json");
  const captured = await captureAnswers(
    base,
    cases.flatMap((c) => c.rotate ?? [c.path]),
    answersFile,
  );
  const sizes = Object.fromEntries(cases.map((c) => [c.name, captured[c.rotate?.[0] ?? c.path]!]));

  // Cold renders: each read right after a content write (the version moves, the cache misses).
  const sql = postgres(DATABASE_URL, { max: 1, onnotice: () => {} });
  const cold: Record<string, { p50: number; max: number }> = {};
  for (const c of cases) {
    const times: number[] = [];
    for (let i = 0; i < 15; i++) {
      await sql`update projects set content_version = content_version + 1 where id = ${site.projectId}`;
      await sql`select pg_notify('cms_content', ${site.projectId})`;
      await Bun.sleep(30);
      const t0 = performance.now();
      const res = await fetch(base + c.path, IDENTITY);
      await res.arrayBuffer();
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    cold[c.name] = { p50: times[Math.floor(times.length / 2)]!, max: times[times.length - 1]! };
  }
  for (const c of cases) for (const path of c.rotate ?? [c.path]) await fetch(base + path, IDENTITY).then((r) => r.arrayBuffer()); // hot again

  const bare = spawn([BUN, join(HERE, "bare.ts"), answersFile, String(REF_PORT)]);
  await waitFor(refBase + cases[0]!.path);
  await wrk(base + cases[0]!.path, 10); // JIT warm-up of both servers
  await wrk(refBase + cases[0]!.path, 3);
  const hot: Record<string, { service: WrkResult; reference: WrkResult }> = {};
  for (const c of cases) hot[c.name] = await compare(c.name, { url: base + c.path, pid: server.pid }, { url: refBase + c.path, pid: bare.pid }, scripts.get(c.name));
  await server.stop();

  // The first case again with the access log off (LOG_LEVEL=warn), for comparison.
  server = startServer({ LOG_LEVEL: "warn" });
  await waitFor(`${base}/healthz`);
  await fetch(base + cases[0]!.path, IDENTITY).then((r) => r.arrayBuffer());
  await wrk(base + cases[0]!.path, 10);
  const quiet = await compare("by-path, default locale, LOG_LEVEL=warn", { url: base + cases[0]!.path, pid: server.pid }, { url: refBase + cases[0]!.path, pid: bare.pid });
  await server.stop();

  // The hot cases on the other runtimes asked for, against the same bare Bun reference.
  const runtimes: Record<string, Record<string, { service: WrkResult; reference: WrkResult }>> = {};
  for (const rt of OTHER_RUNTIMES) {
    server = startServer({}, "postgres", RUNTIME_CMD[rt]!);
    await waitFor(`${base}/healthz`);
    for (const c of cases) for (const path of c.rotate ?? [c.path]) await fetch(base + path, IDENTITY).then((r) => r.arrayBuffer());
    await wrk(base + cases[0]!.path, 10);
    runtimes[rt] = {};
    for (const c of cases) runtimes[rt][c.name] = await compare(`${rt}: ${c.name}`, { url: base + c.path, pid: server.pid }, { url: refBase + c.path, pid: bare.pid }, scripts.get(c.name));
    await server.stop();
  }

  // ---- cache misses, PostgreSQL: answer cache off, MISS_PAGES distinct pages in turn ----
  const missScript = rotation(
    "miss",
    site.pagePaths.slice(0, MISS_PAGES).map((p) => `/api/p/bench/nodes/by-path/${p}`),
  );
  let miss: { service: WrkResult; reference: WrkResult } = { service: NO_RUN, reference: NO_RUN };
  const translatedMisses: Record<string, { service: WrkResult; reference: WrkResult }> = {};
  if (MISSES) {
    server = startServer({ DELIVERY_CACHE_ENTRIES: "0" });
    await waitFor(`${base}/healthz`);
    const oneQuery = spawn([BUN, join(HERE, "onequery.ts"), DATABASE_URL, String(REF_PORT + 1), String(POOL)]);
    await waitFor(`http://127.0.0.1:${REF_PORT + 1}/`);
    miss = await compare("miss, PostgreSQL", { url: `${base}/`, pid: server.pid }, { url: `http://127.0.0.1:${REF_PORT + 1}/`, pid: oneQuery.pid }, missScript, 64);
    if (chained) {
      // The chain first: a statement's first executions decide whether PostgreSQL keeps a generic plan.
      const missCases = {
        "miss, PostgreSQL, chain (fr-CA → fr)": chained.pagePaths.slice(0, MISS_PAGES).map((p) => `/api/p/bench-chain/nodes/by-path/${p}?locale=fr-CA`),
        "miss, PostgreSQL, translated (fr)": site.frPaths.slice(0, MISS_PAGES).map((p) => `/api/p/bench/nodes/by-path/${p}?locale=fr`),
      };
      for (const [name, paths] of Object.entries(missCases)) {
        const script = rotation(name, paths);
        translatedMisses[name] = await compare(name, { url: `${base}/`, pid: server.pid }, { url: `http://127.0.0.1:${REF_PORT + 1}/`, pid: oneQuery.pid }, script, 64);
      }
    }
    await server.stop();
    await oneQuery.stop();
  }

  // ---- embedded PGlite (the default without DATABASE_URL): hot read, misses, memory at rest ----
  let pglite: { hot: { service: WrkResult; reference: WrkResult }; miss: WrkResult; rssStartMb: number; rssRestMb: number; rssAfterLoadMb: number } | null = null;
  if (WITH_PGLITE) {
    const dir = join(work, "pglite-run");
    cpSync(pgliteSeed, dir, { recursive: true });
    server = startServer({}, { pglite: dir });
    await waitFor(`${base}/readyz`);
    await Bun.sleep(3000);
    const rssStartMb = (await rssKb(server.pid)) / 1024;
    await fetch(base + cases[0]!.path, IDENTITY).then((r) => r.arrayBuffer());
    await wrk(base + cases[0]!.path, 10);
    const pgHot = await compare("PGlite: by-path, default locale", { url: base + cases[0]!.path, pid: server.pid }, { url: refBase + cases[0]!.path, pid: bare.pid });
    await Bun.sleep(5000);
    const rssRestMb = (await rssKb(server.pid)) / 1024;
    await server.stop();
    let pgMiss: WrkResult | undefined = MISSES ? undefined : NO_RUN;
    if (MISSES) {
      server = startServer({ DELIVERY_CACHE_ENTRIES: "0" }, { pglite: dir });
      await waitFor(`${base}/readyz`);
      await wrk(`${base}/`, 10, { script: missScript, connections: 16 }); // PGlite warms up slowly
      for (let rep = 0; rep < REPS; rep++) {
        log(`PGlite: miss (run ${rep + 1}/${REPS})`);
        pgMiss = best(pgMiss, await wrk(`${base}/`, DURATION_S, { script: missScript, pid: server.pid, connections: 16 }));
      }
      await Bun.sleep(5000);
    }
    const rssAfterLoadMb = MISSES ? (await rssKb(server.pid)) / 1024 : Number.NaN;
    if (MISSES) await server.stop();
    pglite = { hot: pgHot, miss: pgMiss!, rssStartMb, rssRestMb, rssAfterLoadMb };
  }
  await bare.stop();

  // ---- sitemap memory: every shard of the big site, streamed with the cache off, then with it on ----
  const memory: Record<string, { shards: number; bytes: number; rssStartMb: number; rssPeakMb: number; rssEndMb: number; rssAfterMb: number[]; ms: number }> = {};
  if (BIG_NODES > 0) {
    for (const [label, env] of [
      ["cache off (DELIVERY_CACHE_ENTRIES=0)", { DELIVERY_CACHE_ENTRIES: "0" }],
      ["cache on (defaults: 5000 entries, 64 MiB)", {}],
    ] as const) {
      server = startServer({ LOG_LEVEL: "warn", ...env });
      await waitFor(`${base}/healthz`);
      const pid = server.pid;
      await fetch(`${base}/api/p/bench-big/theme`).then((r) => r.arrayBuffer());
      const rssStart = await rssKb(pid);
      let peak = rssStart;
      const sampler = setInterval(async () => {
        peak = Math.max(peak, await rssKb(pid).catch(() => 0));
      }, 50);
      const t0 = performance.now();
      const index = await (await fetch(`${base}/api/p/bench-big/sitemap.xml`, IDENTITY)).text();
      // The index names shards on the public site (which proxies them here): read them from the API.
      const shards = [...index.matchAll(/<loc>([^<]+)<\/loc>/g)].map((m) => `${base}/api/p/bench-big/${m[1]!.slice(m[1]!.lastIndexOf("/") + 1)}`);
      let bytes = 0;
      const after: number[] = [];
      for (let round = 0; round < MEMORY_ROUNDS; round++) {
        for (const shard of shards) {
          const res = await fetch(shard, IDENTITY);
          if (res.status !== 200) throw new Error(`${shard}: ${res.status}`);
          const reader = res.body!.getReader();
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            bytes += value.length;
          }
        }
        after.push((await rssKb(pid)) / 1024);
      }
      const elapsed = performance.now() - t0;
      clearInterval(sampler);
      await Bun.sleep(100);
      memory[label] = { shards: shards.length, bytes, rssStartMb: rssStart / 1024, rssPeakMb: peak / 1024, rssEndMb: (await rssKb(pid)) / 1024, rssAfterMb: after, ms: elapsed };
      await server.stop();
    }
  }
  await sql.end();
  await monitor.end();
  await handle.close();

  const out = {
    date: new Date().toISOString(),
    connections: CONNECTIONS,
    duration_s: DURATION_S,
    warmup_s: WARMUP_S,
    reps: REPS,
    missPages: MISS_PAGES,
    sizes,
    hot,
    quiet,
    runtimes,
    cold,
    miss,
    translatedMisses,
    pglite,
    memory,
  };
  writeFileSync(join(HERE, "results.json"), `${JSON.stringify(out, null, 2)}\n`);

  const f = (n: number, d = 0): string => n.toLocaleString("en", { minimumFractionDigits: d, maximumFractionDigits: d });
  const row = (name: string, bytes: string, r: { service: WrkResult; reference: WrkResult }, extra = ""): string =>
    `| ${name} | ${bytes} | ${f(r.service.rps)} | ${f(r.service.p50, 2)} | ${f(r.service.p99, 2)} | ${f(r.reference.rps)} | **${f(r.service.rps / r.reference.rps, 2)}** | ${f(r.service.cpuUs, 1)} / ${f(r.reference.cpuUs, 1)} |${extra}`;
  console.log(`\nHot reads, default configuration (LOG_LEVEL=info, access log on), PostgreSQL; reference: bare Bun.serve, same bytes and headers`);
  console.log(`| case | bytes | req/s | p50 ms | p99 ms | bare req/s | ratio | CPU µs/req service / bare | cold ms (p50) |`);
  console.log(`|---|---:|---:|---:|---:|---:|---:|---:|---:|`);
  for (const c of cases) {
    console.log(row(c.name, f(sizes[c.name]!), hot[c.name]!, ` ${f(cold[c.name]!.p50, 1)} |`));
    if (hot[c.name]!.service.errors) console.log(`  (service: ${hot[c.name]!.service.errors})`);
  }
  console.log(row("by-path, default locale, LOG_LEVEL=warn", "", quiet, " |"));
  if (pglite) console.log(row("PGlite: by-path, default locale", "", pglite.hot, " |"));
  for (const [rt, results] of Object.entries(runtimes)) for (const c of cases) console.log(row(`${rt}: ${c.name}`, "", results[c.name]!, " |"));
  console.log(`\nCache misses (answer cache off, ${MISS_PAGES} pages in turn, 64 connections); reference: one trivial postgres.js query per request`);
  console.log(`| case | req/s | p50 ms | p99 ms | reference req/s | ratio | CPU µs/req service / reference | PostgreSQL CPU µs/req service / reference |`);
  console.log(`|---|---:|---:|---:|---:|---:|---:|---:|`);
  console.log(
    `| miss, PostgreSQL | ${f(miss.service.rps)} | ${f(miss.service.p50, 2)} | ${f(miss.service.p99, 2)} | ${f(miss.reference.rps)} | **${f(miss.service.rps / miss.reference.rps, 2)}** | ${f(miss.service.cpuUs)} / ${f(miss.reference.cpuUs)} | ${f(miss.service.dbCpuUs)} / ${f(miss.reference.dbCpuUs)} |`,
  );
  for (const [name, m] of Object.entries(translatedMisses))
    console.log(
      `| ${name} | ${f(m.service.rps)} | ${f(m.service.p50, 2)} | ${f(m.service.p99, 2)} | ${f(m.reference.rps)} | **${f(m.service.rps / m.reference.rps, 2)}** | ${f(m.service.cpuUs)} / ${f(m.reference.cpuUs)} | ${f(m.service.dbCpuUs)} / ${f(m.reference.dbCpuUs)} |`,
    );
  if (pglite) {
    console.log(`| miss, embedded PGlite (16 connections) | ${f(pglite.miss.rps)} | ${f(pglite.miss.p50, 2)} | ${f(pglite.miss.p99, 2)} | | | ${f(pglite.miss.cpuUs)} | (in process) |`);
    console.log(`\nEmbedded PGlite, RSS MiB: after start ${f(pglite.rssStartMb)}, at rest after the hot run ${f(pglite.rssRestMb)}, at rest after the miss run ${f(pglite.rssAfterLoadMb)}`);
  }
  if (BIG_NODES > 0) {
    const at = (m: { rssAfterMb: number[] }, i: number): string => f(m.rssAfterMb[i - 1]!);
    console.log(
      `\n| sitemap: every shard of ${f(BIG_NODES)} nodes read ${MEMORY_ROUNDS} times; RSS MB | shards | MB sent | start | after round 1 | round 2 | round 5 | round 10 | rounds 2-10 min-max | peak | seconds |`,
    );
    console.log(`|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|`);
    for (const [label, m] of Object.entries(memory)) {
      const later = m.rssAfterMb.slice(1);
      console.log(
        `| ${label} | ${m.shards} | ${f(m.bytes / 1e6, 1)} | ${f(m.rssStartMb)} | ${at(m, 1)} | ${at(m, 2)} | ${at(m, 5)} | ${at(m, 10)} | ${f(Math.min(...later))}-${f(Math.max(...later))} | ${f(m.rssPeakMb)} | ${f(m.ms / 1000, 1)} |`,
      );
    }
  }
  log(`done in ${((performance.now() - started) / 1000).toFixed(0)} s; results in bench/delivery/results.json`);
}

await main();
