// Write-cost benchmark (issue 24): what checking every content write against the content model
// costs. Starts the real service (`src/main.ts`, default configuration) on a PostgreSQL database of
// its own, pinned to CPU 0 when taskset is there, and drives it from this process (a second one)
// with admin writes over HTTP: PATCH a node's fields and blocks, sequentially and with a few
// concurrent writers, into a project without a model and into one whose model covers the written
// node and block types. Rounds alternate between the two projects; the best round of each is kept.
// BENCH_EMBEDDED=1 runs it on the embedded database (PGlite in a DATA_DIR of its own) instead.
// Usage: bun bench/write/run.ts  (see bench/README.md)
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
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
}

async function round(project: { id: string; nodes: { id: string; blocks: string[] }[] }, writers: number, pid: number): Promise<Round> {
  const latencies: number[] = [];
  let next = 0;
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
  return { writes_per_s: Math.round(WRITES / seconds), p50: at(0.5), p99: at(0.99), cpu_us_per_write: Math.round((cpuOf(pid) - cpu0) / WRITES) };
}

async function main(): Promise<void> {
  if (!EMBEDDED) {
    const admin = postgres(`${PG}/postgres`, { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop database if exists ${DB_NAME} with (force)`);
    await admin.unsafe(`create database ${DB_NAME}`);
    await admin.end();
  }
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: String(PORT),
    HOST: "127.0.0.1",
    PUBLIC_URL: BASE,
    SEED_DEMO: "false",
    LOG_LEVEL: "info",
    DB_POOL_SIZE: "4",
    ADMIN_TOKEN: TOKEN,
    DATA_DIR: mkdtempSync(join(tmpdir(), "cms-bench-write-")),
  };
  if (EMBEDDED) delete env.DATABASE_URL;
  else env.DATABASE_URL = `${PG}/${DB_NAME}`;
  const server = Bun.spawn([...(PIN ? ["taskset", "-c", "0"] : []), process.execPath, "src/main.ts"], { cwd: ROOT, env, stdout: "ignore", stderr: "inherit" });
  try {
    for (let i = 0; ; i++) {
      if (i > 600) throw new Error("the service did not come up");
      if (
        await fetch(`${BASE}/readyz`)
          .then((r) => r.ok)
          .catch(() => false)
      )
        break;
      await Bun.sleep(100);
    }
    const projects: Record<"free" | "model", { id: string; nodes: { id: string; blocks: string[] }[] }> = { free: { id: "", nodes: [] }, model: { id: "", nodes: [] } };
    for (const name of ["free", "model"] as const) {
      const p = (await api("POST", "/admin/projects", { slug: `bench-${name}`, name, default_locale: "en", locales: ["en", "fr"] })).data;
      if (name === "model") await api("PUT", `/admin/p/${p.id}/model`, MODEL);
      const blocks = Array.from({ length: BLOCKS }, (_, j) => (j === 0 ? { type: "hero", data: { heading: "h" } } : { type: "text", data: { body: "b" } }));
      for (let n = 0; n < NODES; n++) {
        const node = (await api("POST", `/admin/p/${p.id}/nodes`, { slug: `post-${n}`, title: `Post ${n}`, type: "post", fields: { author: "a", date: "2026-01-01T00:00:00Z" }, blocks })).data;
        projects[name].nodes.push({ id: node.id, blocks: node.blocks.map((b: { id: string }) => b.id) });
      }
      projects[name].id = p.id;
    }
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
    server.kill("SIGTERM");
    await server.exited;
  }
}

await main();
