// Write-cost benchmark (issue 24): what checking every content write against the content model
// costs. Starts the real service (`src/main.ts`, default configuration) on a PostgreSQL database of
// its own, pinned to CPU 0 when taskset is there, and drives it from this process (a second one)
// with admin writes over HTTP: PATCH a node's fields and blocks, sequentially and with a few
// concurrent writers, into a project without a model and into one whose model covers the written
// node and block types. Rounds alternate between the two projects; the best round of each is kept.
// BENCH_EMBEDDED=1 runs it on the embedded database (PGlite in a DATA_DIR of its own) instead.
// --tenants N: the same writes into one project of N, each project's model indexing the same 3
// fields (3 field indexes on nodes, shared by the projects); --tenants 1,500,100 --runs 2 interleaves the counts.
// Usage: bun bench/write/run.ts [--tenants N[,N…] [--runs R]]  (see bench/README.md)
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";

const PG = process.env.BENCH_PG ?? "postgres://postgres@127.0.0.1:5432";
const DB_NAME = process.env.BENCH_DB ?? "cms_bench_write";
const PORT = Number(process.env.BENCH_PORT ?? 3921);
const WRITES = Number(process.env.BENCH_WRITES ?? 400);
const WRITERS = Number(process.env.BENCH_WRITERS ?? 4);
const REPS = Number(process.env.BENCH_REPS ?? 3);
const NODES = 20;
const BLOCKS = 6;
const TOKEN = "bench-root-admin-token-0123456789abcdef";
const ROOT = join(new URL(".", import.meta.url).pathname, "../..");
const BASE = `http://127.0.0.1:${PORT}`;
const PIN = Bun.which("taskset") !== null;
/** BENCH_EMBEDDED=1: the embedded database (PGlite in DATA_DIR, the default configuration) instead of PostgreSQL. */
const EMBEDDED = process.env.BENCH_EMBEDDED === "1";
const argOf = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
};
/** --tenants: the project counts to measure (null: the model/no-model comparison). */
const TENANTS = argOf("--tenants")?.split(",").map(Number) ?? null;
if (TENANTS?.some((n) => !Number.isInteger(n) || n < 1)) throw new Error("--tenants: project counts of 1 or more, comma-separated");
const RUNS = Number(argOf("--runs") ?? 1);

const MODEL = {
  strict: false,
  block_types: [
    {
      name: "hero",
      description: "",
      schema: {
        type: "object",
        properties: { heading: { type: "string", maxLength: 200, translatable: true }, image: { type: "string", format: "uri" } },
        required: ["heading"],
        additionalProperties: false,
      },
    },
    { name: "text", description: "", schema: { type: "object", properties: { body: { type: "string", format: "markdown", translatable: true } }, required: ["body"] } },
  ],
  node_types: [
    {
      name: "post",
      description: "",
      fields: {
        type: "object",
        properties: {
          author: { type: "string", minLength: 1 },
          date: { type: "string", format: "date-time" },
          category: { type: "string", enum: ["news", "tech", "life"] },
          summary: { type: "string", maxLength: 300, translatable: true },
          tags: { type: "array", items: { type: "string" }, maxItems: 10 },
        },
        required: ["author", "date"],
        additionalProperties: false,
      },
      blocks: [{ type: "hero", max: 1 }, { type: "text" }],
      children: null,
    },
  ],
};

/** MODEL with author, date and category marked `index: true` (text, date-time, text): 3 field indexes, shared by the projects. */
const INDEXED_MODEL = structuredClone(MODEL);
for (const name of ["author", "date", "category"]) (INDEXED_MODEL.node_types[0]!.fields.properties as Record<string, Record<string, unknown>>)[name]!.index = true;

const log = (msg: string): void => console.log(`[bench] ${msg}`);

async function api(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(BASE + path, { method, headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

function cpuOf(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return ((Number(f[11]) + Number(f[12])) * 1e6) / 100; // µs, USER_HZ = 100
}

/** The body of write number `i`: new field values and the node's blocks with new text (ids kept). */
function write(i: number, blockIds: string[]): Record<string, unknown> {
  return {
    fields: {
      author: `Author ${i % 7}`,
      date: new Date(1_700_000_000_000 + i * 1000).toISOString(),
      category: ["news", "tech", "life"][i % 3],
      summary: `Summary of write ${i}`,
      tags: ["a", `t${i % 5}`],
    },
    blocks: blockIds.map((id, j) =>
      j === 0
        ? { id, type: "hero", data: { heading: `Heading ${i}`, image: "https://cdn.example.com/h.png" } }
        : { id, type: "text", data: { body: `## Part ${j}\n\nText of write ${i}, part ${j}.` } },
    ),
  };
}

interface Round {
  writes_per_s: number;
  p50: number;
  p99: number;
  cpu_us_per_write: number;
  /** PostgreSQL only, when measured: the CPU time of the service's database backends per write. */
  db_cpu_us_per_write?: number;
}

/** The CPU time (µs) of each backend connected to database `name`, by pid (the server is on this machine). */
async function backendsCpu(admin: postgres.Sql, name: string): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for (const { pid } of await admin<{ pid: number }[]>`select pid from pg_stat_activity where datname = ${name} and backend_type = 'client backend'`) {
    try {
      out.set(pid, cpuOf(pid));
    } catch {
      // Gone since the query.
    }
  }
  return out;
}

async function round(project: { id: string; nodes: { id: string; blocks: string[] }[] }, writers: number, pid: number, dbCpu?: () => Promise<Map<number, number>>): Promise<Round> {
  const latencies: number[] = [];
  let next = 0;
  const db0 = await dbCpu?.();
  const cpu0 = cpuOf(pid);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      for (let i = next++; i < WRITES; i = next++) {
        const node = project.nodes[(i * writers + w) % project.nodes.length]!;
        const t = performance.now();
        await api("PATCH", `/admin/p/${project.id}/nodes/${node.id}`, write(i, node.blocks));
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number): number => Number(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!.toFixed(2));
  const out: Round = { writes_per_s: Math.round(WRITES / seconds), p50: at(0.5), p99: at(0.99), cpu_us_per_write: Math.round((cpuOf(pid) - cpu0) / WRITES) };
  if (dbCpu && db0) {
    // A backend opened during the round counts from 0; one closed during it is missed (none are: the pool's idle timeout is 60 s).
    let used = 0;
    for (const [p, us] of await dbCpu()) used += us - (db0.get(p) ?? 0);
    out.db_cpu_us_per_write = Math.round(used / WRITES);
  }
  return out;
}

interface BenchProject {
  id: string;
  nodes: { id: string; blocks: string[] }[];
}

/** Starts the service (pinned to CPU 0 when taskset is there) on `database` (a PostgreSQL URL) or, embedded, on `dataDir`; resolves once it is ready. */
async function startService(database: string | null, dataDir: string): Promise<Bun.Subprocess> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: String(PORT),
    HOST: "127.0.0.1",
    PUBLIC_URL: BASE,
    SEED_DEMO: "false",
    LOG_LEVEL: "info",
    DB_POOL_SIZE: "4",
    ADMIN_TOKEN: TOKEN,
    DATA_DIR: dataDir,
  };
  if (database === null) delete env.DATABASE_URL;
  else env.DATABASE_URL = database;
  const server = Bun.spawn([...(PIN ? ["taskset", "-c", "0"] : []), process.execPath, "src/main.ts"], { cwd: ROOT, env, stdout: "ignore", stderr: "inherit" });
  for (let i = 0; ; i++) {
    if (i > 600) {
      await stopService(server);
      throw new Error("the service did not come up");
    }
    if (
      await fetch(`${BASE}/readyz`)
        .then((r) => r.ok)
        .catch(() => false)
    )
      break;
    await Bun.sleep(100);
  }
  return server;
}

async function stopService(server: Bun.Subprocess): Promise<void> {
  server.kill("SIGTERM");
  await server.exited;
}

/** A project over the admin API, with `model` if given (its field indexes built by the model write) and `nodes` post nodes of 6 blocks. */
async function createProject(slug: string, model: unknown, nodes: number): Promise<BenchProject> {
  const p = (await api("POST", "/admin/projects", { slug, name: slug, default_locale: "en", locales: ["en", "fr"] })).data;
  if (model) await api("PUT", `/admin/p/${p.id}/model`, model);
  const out: BenchProject = { id: p.id, nodes: [] };
  const blocks = Array.from({ length: BLOCKS }, (_, j) => (j === 0 ? { type: "hero", data: { heading: "h" } } : { type: "text", data: { body: "b" } }));
  for (let n = 0; n < nodes; n++) {
    const node = (await api("POST", `/admin/p/${p.id}/nodes`, { slug: `post-${n}`, title: `Post ${n}`, type: "post", fields: { author: "a", date: "2026-01-01T00:00:00Z" }, blocks })).data;
    out.nodes.push({ id: node.id, blocks: node.blocks.map((b: { id: string }) => b.id) });
  }
  return out;
}

async function main(): Promise<void> {
  if (TENANTS) return tenantsMain(TENANTS);
  if (!EMBEDDED) {
    const admin = postgres(`${PG}/postgres`, { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop database if exists ${DB_NAME} with (force)`);
    await admin.unsafe(`create database ${DB_NAME}`);
    await admin.end();
  }
  const server = await startService(EMBEDDED ? null : `${PG}/${DB_NAME}`, mkdtempSync(join(tmpdir(), "cms-bench-write-")));
  try {
    const projects: Record<"free" | "model", BenchProject> = {
      free: await createProject("bench-free", null, NODES),
      model: await createProject("bench-model", MODEL, NODES),
    };
    // Writes the model refuses are not measured: make sure these are valid.
    await api("PATCH", `/admin/p/${projects.model.id}/nodes/${projects.model.nodes[0]!.id}`, write(0, projects.model.nodes[0]!.blocks));
    const results: Record<string, Record<string, Round>> = {};
    for (const writers of [1, WRITERS]) {
      const label = writers === 1 ? "sequential" : `${writers} writers`;
      const best: Record<string, Round> = {};
      for (const name of ["free", "model"] as const) await round(projects[name], writers, server.pid); // warm-up
      for (let rep = 0; rep < REPS; rep++) {
        for (const name of rep % 2 === 0 ? (["free", "model"] as const) : (["model", "free"] as const)) {
          const r = await round(projects[name], writers, server.pid);
          log(`${label}, ${name === "model" ? "with a model" : "no model"}, run ${rep + 1}/${REPS}: ${r.writes_per_s} writes/s, p50 ${r.p50} ms, p99 ${r.p99} ms, ${r.cpu_us_per_write} µs CPU/write`);
          if (!best[name] || r.writes_per_s > best[name].writes_per_s) best[name] = r;
        }
      }
      results[label] = best;
      const [free, model] = [best.free!, best.model!];
      log(
        `${label}: with a model ${((free.writes_per_s / model.writes_per_s - 1) * 100).toFixed(1)} % more time per write, ${((model.cpu_us_per_write / free.cpu_us_per_write - 1) * 100).toFixed(1)} % more service CPU per write`,
      );
    }
    const out = { at: new Date().toISOString(), database: EMBEDDED ? "embedded PGlite" : "PostgreSQL", writes_per_round: WRITES, reps: REPS, nodes: NODES, blocks_per_node: BLOCKS, results };
    writeFileSync(join(ROOT, EMBEDDED ? "bench/write/results-embedded.json" : "bench/write/results.json"), `${JSON.stringify(out, null, 2)}\n`);
    console.log(JSON.stringify(out, null, 2));
  } finally {
    await stopService(server);
  }
}

// --tenants: a database per project count is set up once over the admin API and kept as a template
// (PostgreSQL: a template database; embedded: a DATA_DIR copied for each run), so that every run
// starts from the same state and the counts can be interleaved cheaply.

const TEMPLATES = join(tmpdir(), "cms-bench-write-tenants");

interface Template {
  /** The template database (PostgreSQL) or DATA_DIR (embedded). */
  source: string;
  tenants: number;
  field_indexes: number;
  project: BenchProject;
}

/** How many field indexes (nodes_fx_…) the database holds. */
async function countFieldIndexes(source: string): Promise<number> {
  const q = "select count(*)::int as n from pg_class where relkind = 'i' and relname like 'nodes\\_fx\\_%'";
  if (EMBEDDED) {
    const { PGlite } = await import("@electric-sql/pglite");
    const db = new PGlite({ dataDir: source });
    try {
      return (await db.query<{ n: number }>(q)).rows[0]!.n;
    } finally {
      await db.close();
    }
  }
  const db = postgres(`${PG}/${source}`, { max: 1, onnotice: () => {} });
  try {
    return (await db.unsafe<{ n: number }[]>(q))[0]!.n;
  } finally {
    await db.end();
  }
}

/** The set-up database of `tenants` projects: the measured one (bench-model, NODES nodes) and tenants-1 others, each model indexing 3 fields. */
async function template(tenants: number): Promise<Template> {
  mkdirSync(TEMPLATES, { recursive: true });
  const key = EMBEDDED ? `pglite_t${tenants}` : `${DB_NAME}_t${tenants}`;
  const meta = join(TEMPLATES, `${key}.json`);
  const admin = postgres(`${PG}/postgres`, { max: 1, onnotice: () => {} });
  try {
    if (existsSync(meta) && process.env.BENCH_FRESH !== "1") {
      const kept = JSON.parse(readFileSync(meta, "utf8")) as Template;
      const there = EMBEDDED ? existsSync(kept.source) : (await admin`select 1 from pg_database where datname = ${key}`).length > 0;
      if (there) return kept;
    }
    const building = `${key}_building`;
    let source: string;
    if (EMBEDDED) {
      source = join(TEMPLATES, key);
      rmSync(source, { recursive: true, force: true });
      rmSync(join(TEMPLATES, building), { recursive: true, force: true });
      mkdirSync(join(TEMPLATES, building));
    } else {
      source = key;
      await admin.unsafe(`drop database if exists ${key} with (force)`);
      await admin.unsafe(`drop database if exists ${building} with (force)`);
      await admin.unsafe(`create database ${building}`);
    }
    const t0 = performance.now();
    const dataDir = EMBEDDED ? join(TEMPLATES, building) : mkdtempSync(join(tmpdir(), "cms-bench-write-"));
    const server = await startService(EMBEDDED ? null : `${PG}/${building}`, dataDir);
    let project: BenchProject;
    try {
      project = await createProject("bench-model", INDEXED_MODEL, NODES);
      await api("PATCH", `/admin/p/${project.id}/nodes/${project.nodes[0]!.id}`, write(0, project.nodes[0]!.blocks));
      for (let i = 1; i < tenants; i++) {
        await createProject(`tenant-${i}`, INDEXED_MODEL, 0);
        if (i % 50 === 0) log(`set-up of ${tenants} projects: ${i + 1} made, ${((performance.now() - t0) / 1000).toFixed(0)} s`);
      }
    } finally {
      await stopService(server);
      if (!EMBEDDED) rmSync(dataDir, { recursive: true, force: true });
    }
    if (EMBEDDED) renameSync(join(TEMPLATES, building), source);
    else await admin.unsafe(`alter database ${building} rename to ${key}`);
    const fieldIndexes = await countFieldIndexes(source);
    if (fieldIndexes !== 3) throw new Error(`${tenants} projects: ${fieldIndexes} field indexes, not 3 (shared by the projects)`);
    log(`set-up of ${tenants} projects (${fieldIndexes} field indexes) in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    const made: Template = { source, tenants, field_indexes: fieldIndexes, project };
    writeFileSync(meta, JSON.stringify(made));
    return made;
  } finally {
    await admin.end();
  }
}

/** One run on a fresh copy of the template: a warm-up round, then REPS rounds, one writer then WRITERS; the best round of each. */
async function tenantsRun(t: Template): Promise<Record<string, Round>> {
  const dataDir = mkdtempSync(join(tmpdir(), "cms-bench-write-"));
  let database: string | null = null;
  if (EMBEDDED) cpSync(t.source, dataDir, { recursive: true });
  else {
    const admin = postgres(`${PG}/postgres`, { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop database if exists ${DB_NAME} with (force)`);
    await admin.unsafe(`create database ${DB_NAME} template ${t.source}`);
    await admin.end();
    database = `${PG}/${DB_NAME}`;
  }
  const server = await startService(database, dataDir);
  const monitor = EMBEDDED ? null : postgres(`${PG}/postgres`, { max: 1, onnotice: () => {} });
  const dbCpu = monitor ? () => backendsCpu(monitor, DB_NAME) : undefined;
  const best: Record<string, Round> = {};
  try {
    for (const writers of [1, WRITERS]) {
      const label = writers === 1 ? "sequential" : `${writers} writers`;
      await round(t.project, writers, server.pid, dbCpu); // warm-up
      for (let rep = 0; rep < REPS; rep++) {
        const r = await round(t.project, writers, server.pid, dbCpu);
        if (!best[label] || r.writes_per_s > best[label].writes_per_s) best[label] = r;
      }
      const b = best[label]!;
      const db = b.db_cpu_us_per_write === undefined ? "" : `, ${b.db_cpu_us_per_write} µs database CPU/write`;
      log(
        `${t.tenants} projects (${t.field_indexes} field indexes), ${label}: best of ${REPS}: ${b.writes_per_s} writes/s, p50 ${b.p50} ms, p99 ${b.p99} ms, ${b.cpu_us_per_write} µs service CPU/write${db}`,
      );
    }
  } finally {
    await monitor?.end();
    await stopService(server);
    rmSync(dataDir, { recursive: true, force: true });
    if (!EMBEDDED) {
      const admin = postgres(`${PG}/postgres`, { max: 1, onnotice: () => {} });
      await admin.unsafe(`drop database if exists ${DB_NAME} with (force)`);
      await admin.end();
    }
  }
  return best;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m]! : Number(((s[m - 1]! + s[m]!) / 2).toFixed(2));
};

async function tenantsMain(counts: number[]): Promise<void> {
  const templates = new Map<number, Template>();
  for (const n of counts) if (!templates.has(n)) templates.set(n, await template(n));
  if (RUNS < 1) return; // --runs 0: set up only
  const runs: { tenants: number; run: number; at: string; load: number; results: Record<string, Round> }[] = [];
  for (let run = 1; run <= RUNS; run++) {
    for (const n of counts) {
      const load = Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0]);
      runs.push({ tenants: n, run, at: new Date().toISOString(), load, results: await tenantsRun(templates.get(n)!) });
    }
  }
  // Per count and case: the median over the runs of each run's best round.
  const summary: Record<string, Record<string, Round & { runs: number; writes_per_s_each: number[] }>> = {};
  const base = Math.min(...counts);
  for (const n of [...new Set(counts)].sort((a, b) => a - b)) {
    summary[n] = {};
    for (const label of ["sequential", `${WRITERS} writers`]) {
      const rs = runs.filter((r) => r.tenants === n).map((r) => r.results[label]!);
      summary[n]![label] = {
        runs: rs.length,
        writes_per_s: median(rs.map((r) => r.writes_per_s)),
        p50: median(rs.map((r) => r.p50)),
        p99: median(rs.map((r) => r.p99)),
        cpu_us_per_write: median(rs.map((r) => r.cpu_us_per_write)),
        ...(EMBEDDED ? {} : { db_cpu_us_per_write: median(rs.map((r) => r.db_cpu_us_per_write ?? 0)) }),
        writes_per_s_each: rs.map((r) => r.writes_per_s),
      };
    }
  }
  for (const [n, cases] of Object.entries(summary)) {
    for (const [label, r] of Object.entries(cases)) {
      const b = summary[base]![label]!;
      const db = r.db_cpu_us_per_write === undefined ? "" : `, ${r.db_cpu_us_per_write} µs database CPU/write (${((r.db_cpu_us_per_write / b.db_cpu_us_per_write! - 1) * 100).toFixed(1)} %)`;
      log(
        `${n} projects, ${label}: ${r.writes_per_s} writes/s (runs: ${r.writes_per_s_each.join(", ")}), p50 ${r.p50} ms, p99 ${r.p99} ms; against ${base}: ${((b.writes_per_s / r.writes_per_s - 1) * 100).toFixed(1)} % more time per write; ${r.cpu_us_per_write} µs service CPU/write (${((r.cpu_us_per_write / b.cpu_us_per_write - 1) * 100).toFixed(1)} %)${db}`,
      );
    }
  }
  const out = {
    at: new Date().toISOString(),
    database: EMBEDDED ? "embedded PGlite" : "PostgreSQL",
    writes_per_round: WRITES,
    reps: REPS,
    writers: WRITERS,
    nodes: NODES,
    blocks_per_node: BLOCKS,
    indexed_fields_per_project: 3,
    order: counts,
    summary,
    runs,
  };
  writeFileSync(join(ROOT, EMBEDDED ? "bench/write/results-tenants-embedded.json" : "bench/write/results-tenants.json"), `${JSON.stringify(out, null, 2)}\n`);
}

await main();
