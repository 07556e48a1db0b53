// Webhook lag benchmark (issue 28): how long from a write's commit to the first attempt of its
// event at the receiver. Starts the real service (`src/main.ts`, default webhook configuration:
// the dispatcher is woken by the NOTIFY each write with events sends at commit, the poll stays at
// 1 s) on a PostgreSQL database of its own, and on an embedded PGlite data directory; a receiver
// (Bun.serve, this process) records when each event arrives. Writes (node creations) go one at a
// time, then in bursts from several writers. The commit lies between the request's start and its
// answer, so the lag is bounded: arrival − answer (≤ lag) and arrival − request start (≥ lag).
// Then writes at steady rates (BENCH_RATES, default 10 and 25 a second), started on time whether
// or not the previous one has answered.
// Usage: bun bench/webhooks/run.ts  (see bench/README.md)
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";

const PG = process.env.BENCH_PG ?? "postgres://postgres@127.0.0.1:5432";
const DB_NAME = process.env.BENCH_DB ?? "cms_bench_webhooks";
const PORT = Number(process.env.BENCH_PORT ?? 3931);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 300);
const WRITERS = Number(process.env.BENCH_WRITERS ?? 4);
// Paced phases: writes started at a steady rate (an editorial team, an import), not as fast as the service takes them.
const RATES = (process.env.BENCH_RATES ?? "10,25").split(",").filter(Boolean).map(Number);
const PACED = Number(process.env.BENCH_PACED_EVENTS ?? 100);
const TOKEN = "bench-root-admin-token-0123456789abcdef";
const ROOT = join(new URL(".", import.meta.url).pathname, "../..");
const BASE = `http://127.0.0.1:${PORT}`;
const PIN = Bun.which("taskset") !== null;

const log = (msg: string): void => console.log(`[bench] ${msg}`);
const arrivals = new Map<string, number>();
const receiver = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    const at = performance.now();
    const body = JSON.parse(await req.text());
    const id = body.data?.node?.id;
    if (typeof id === "string" && !arrivals.has(id)) arrivals.set(id, at);
    return new Response("ok");
  },
});

async function api(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(BASE + path, { method, headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round((s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0) * 10) / 10;
};

async function run(label: string, env: Record<string, string>): Promise<Record<string, unknown>> {
  const server = Bun.spawn([...(PIN ? ["taskset", "-c", "0"] : []), process.execPath, "src/main.ts"], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(PORT), HOST: "127.0.0.1", ADMIN_TOKEN: TOKEN, SEED_DEMO: "false", LOG_LEVEL: "warn", WEBHOOKS_ALLOW_PRIVATE_URLS: "true", ...env },
    stdout: "ignore",
    stderr: "inherit",
  });
  try {
    for (
      let i = 0;
      !(await fetch(`${BASE}/readyz`).then(
        (r) => r.ok,
        () => false,
      ));
      i++
    ) {
      if (i > 600) throw new Error("the service did not start");
      await Bun.sleep(100);
    }
    const slug = `wh-${Date.now().toString(36)}`;
    await api("POST", "/admin/projects", { slug, name: slug, default_locale: "en", locales: ["en"] });
    await api("POST", `/admin/p/${slug}/webhooks`, { url: `http://127.0.0.1:${receiver.port}/hook`, events: ["node.created"] });
    const sent = new Map<string, { start: number; ack: number }>();
    const one = async (i: number): Promise<void> => {
      const start = performance.now();
      const node = await api("POST", `/admin/p/${slug}/nodes`, { slug: `n${i}`, title: `n${i}` });
      sent.set(node.data.id, { start, ack: performance.now() });
    };
    // Warm-up, not measured.
    for (let i = 0; i < 20; i++) await one(-1 - i);
    await Bun.sleep(1500);
    sent.clear();
    const t0 = performance.now();
    const sequential = Math.floor(EVENTS / 2);
    for (let i = 0; i < sequential; i++) await one(i);
    const seqIds = [...sent.keys()];
    let next = sequential;
    await Promise.all(
      Array.from({ length: WRITERS }, async () => {
        while (next < EVENTS) await one(next++);
      }),
    );
    const writeSeconds = (performance.now() - t0) / 1000;
    const concIds = [...sent.keys()].filter((id) => !seqIds.includes(id));
    const paced: Record<string, string[]> = {};
    for (const rate of RATES) {
      const before = new Set(sent.keys());
      const start = performance.now();
      const pending: Promise<void>[] = [];
      for (let i = 0; i < PACED; i++) {
        const due = start + (i * 1000) / rate;
        const wait = due - performance.now();
        if (wait > 0) await Bun.sleep(wait);
        pending.push(one(next++));
      }
      await Promise.all(pending);
      paced[`paced_${rate}_per_s`] = [...sent.keys()].filter((id) => !before.has(id));
    }
    const deadline = performance.now() + 60_000;
    while ([...sent.keys()].some((id) => !arrivals.has(id)) && performance.now() < deadline) await Bun.sleep(50);
    const figures = (ids: string[]) => {
      const upper = ids.map((id) => (arrivals.get(id) ?? Number.NaN) - (sent.get(id)?.start ?? 0));
      const lower = ids.map((id) => (arrivals.get(id) ?? Number.NaN) - (sent.get(id)?.ack ?? 0));
      return {
        events: ids.length,
        arrived: ids.filter((id) => arrivals.has(id)).length,
        lag_ms_upper: { p50: pct(upper, 50), p99: pct(upper, 99), max: pct(upper, 100) },
        lag_ms_lower: { p50: pct(lower, 50), p99: pct(lower, 99), max: pct(lower, 100) },
      };
    };
    const out = {
      label,
      writes_per_second: Math.round(EVENTS / writeSeconds),
      sequential: figures(seqIds),
      concurrent: figures(concIds),
      ...Object.fromEntries(Object.entries(paced).map(([k, ids]) => [k, figures(ids)])),
    };
    log(JSON.stringify(out));
    return out;
  } finally {
    server.kill("SIGTERM");
    await server.exited;
  }
}

const results: Record<string, unknown>[] = [];
const admin = postgres(`${PG}/postgres`, { max: 1, onnotice: () => {} });
try {
  await admin.unsafe(`drop database if exists ${DB_NAME} with (force)`);
  await admin.unsafe(`create database ${DB_NAME}`);
  results.push(await run("postgresql", { DATABASE_URL: `${PG}/${DB_NAME}`, DATA_DIR: mkdtempSync(join(tmpdir(), "wh-bench-")) }));
  await admin.unsafe(`drop database if exists ${DB_NAME} with (force)`);
} finally {
  await admin.end();
}
if (process.env.BENCH_PGLITE !== "0") {
  const dir = mkdtempSync(join(tmpdir(), "wh-bench-pglite-"));
  try {
    results.push(await run("pglite", { DATA_DIR: dir }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
receiver.stop(true);
writeFileSync(join(ROOT, "bench/webhooks/results.json"), `${JSON.stringify({ date: new Date().toISOString(), events: EVENTS, writers: WRITERS, results }, null, 2)}\n`);
