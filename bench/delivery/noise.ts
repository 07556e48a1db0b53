// Hot delivery reads alone, then beside 4 clients sending anonymous requests to a route that does
// not exist (issue 12 §3: a non-GET request used to expire every cached answer). The service is
// pinned to CPU 0, both wrk processes to CPU 1; every configuration runs back to back, REPS times.
// Usage: bun bench/delivery/noise.ts   (see bench/README.md)
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";

// Without wrk every figure would read NaN: refuse at once, saying what to install.
for (const tool of ["wrk", "taskset"]) if (!Bun.which(tool)) throw new Error(`${tool} is not installed: apt-get install -y wrk (taskset comes with util-linux)`);

const PG = process.env.BENCH_PG ?? "postgres://postgres@127.0.0.1:5432";
const DB_NAME = process.env.BENCH_DB ?? "cms_bench_noise";
const DATABASE_URL = `${PG}/${DB_NAME}`;
const HERE = new URL(".", import.meta.url).pathname;
/** The checkout whose src/main.ts is measured (another one to compare, e.g. an older commit). */
const ROOT = process.env.BENCH_SERVICE_ROOT ?? join(HERE, "../..");
const PORT = Number(process.env.BENCH_PORT ?? 3921);
const READERS = Number(process.env.BENCH_READERS ?? 32);
const NOISE_CLIENTS = 4;
const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
const WARMUP_S = Number(process.env.BENCH_WARMUP ?? 2);
const REPS = Number(process.env.BENCH_REPS ?? 3);
const TOKEN = "bench-root-admin-token-0123456789abcdef";
/** BENCH_NICE=-15 (as root) runs the service and wrk ahead of other processes on a shared machine. */
const NICE = ["nice", "-n", process.env.BENCH_NICE ?? "0"];
const BUN = process.execPath;
const work = mkdtempSync(join(tmpdir(), "cms-noise-"));
const log = (msg: string): void => console.log(`[noise] ${msg}`);

interface Noise {
  label: string;
  method?: "POST" | "GET";
  /** Milliseconds each noise connection waits between requests; 0 = as fast as it can. */
  delayMs?: number;
}
const CONFIGS: Noise[] = [
  { label: "hot reads alone" },
  { label: "beside 4 clients POSTing /no-such-route as fast as they can", method: "POST", delayMs: 0 },
  { label: "beside 4 clients GETting /no-such-route as fast as they can (control: same noise, no write semantics)", method: "GET", delayMs: 0 },
  { label: "beside 4 clients POSTing /no-such-route every 4 ms each (~1,000/s)", method: "POST", delayMs: 4 },
];

async function wrk(url: string, seconds: number, connections: number, env: Record<string, string> = {}, script?: string): Promise<{ rps: number; p99: number; requests: number; non2xx: number }> {
  const args = [...NICE, "taskset", "-c", "1", "wrk", "-t1", `-c${connections}`, `-d${seconds}s`, "--latency", "--timeout", "5s"];
  if (script) args.push("-s", script);
  args.push(url);
  const proc = Bun.spawn(args, { stdout: "pipe", stderr: "pipe", env: { ...process.env, ...env } });
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  const p99 = /\n\s+99%\s+([\d.]+)(us|ms|s)/.exec(out);
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN),
    requests: Number(/(\d+) requests in/.exec(out)?.[1] ?? NaN),
    non2xx: Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0),
    p99: p99 ? Number(p99[1]) * (p99[2] === "us" ? 0.001 : p99[2] === "s" ? 1000 : 1) : NaN,
  };
}

/** Busy and total jiffies of CPU 0 and CPU 1 (/proc/stat). */
async function cpuStat(): Promise<{ busy: number; total: number }[]> {
  const text = await Bun.file("/proc/stat").text();
  return [0, 1].map((n) => {
    const f = new RegExp(`^cpu${n} (.*)$`, "m").exec(text)![1]!.trim().split(/\s+/).map(Number);
    const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
    return { busy: total - f[3]! - f[4]!, total };
  });
}

/** CPU seconds used by a process so far (utime + stime, at the usual 100 ticks per second). */
async function procCpuS(pid: number): Promise<number> {
  const fields = (await Bun.file(`/proc/${pid}/stat`).text()).replace(/^.*\) /, "").split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Waits (up to 30 s) for a second in which both cores are at least 85% idle; returns whether it came. */
async function quietMoment(): Promise<boolean> {
  for (let i = 0; i < 30; i++) {
    const a = await cpuStat();
    await Bun.sleep(1000);
    const b = await cpuStat();
    if (b.every((x, n) => (x.busy - a[n]!.busy) / (x.total - a[n]!.total) < 0.15)) return true;
  }
  return false;
}

async function main(): Promise<void> {
  const admin = postgres(`${PG}/postgres`, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists ${DB_NAME} with (force)`);
  await admin.unsafe(`create database ${DB_NAME}`);
  const commit = Bun.spawnSync(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]).stdout.toString().trim();
  log(`service from ${ROOT} (${commit}), database ${DATABASE_URL}`);
  const server = Bun.spawn([...NICE, "taskset", "-c", "0", BUN, "src/main.ts"], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL,
      PORT: String(PORT),
      HOST: "127.0.0.1",
      PUBLIC_URL: `http://127.0.0.1:${PORT}`,
      SEED_DEMO: "false",
      DATA_DIR: join(work, "data"),
      LOG_LEVEL: "warn",
      DB_POOL_SIZE: "4",
      ADMIN_TOKEN: TOKEN,
    },
    stdout: "ignore",
    stderr: "inherit",
  });
  const base = `http://127.0.0.1:${PORT}`;
  try {
    for (let i = 0; ; i++) {
      if (
        await fetch(`${base}/healthz`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      if (i > 300) throw new Error("service did not come up");
      await Bun.sleep(100);
    }
    const api = async (method: string, path: string, body: unknown): Promise<any> => {
      const res = await fetch(base + path, { method, headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: JSON.stringify(body) });
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return res.json();
    };
    await api("POST", "/admin/projects", { slug: "bench", name: "Bench", default_locale: "en", locales: ["en"] });
    const text = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(4);
    const node = await api("POST", "/admin/p/bench/nodes", { slug: "page", title: "Page", blocks: Array.from({ length: 6 }, (_, i) => ({ type: "text", data: { text: `${i} ${text}` } })) });
    await api("POST", `/admin/p/bench/nodes/${node.data.id}/publish`, {});
    const readUrl = `${base}/api/p/bench/nodes/by-path/page`;
    const first = await fetch(readUrl);
    const bytes = (await first.arrayBuffer()).byteLength;
    if (first.status !== 200) throw new Error(`read: ${first.status}`);
    const db = postgres(DATABASE_URL, { max: 1, onnotice: () => {} });
    const xacts = async (): Promise<number> => {
      await Bun.sleep(1200); // backends report their counts to the statistics about once a second
      const [r] = await db`select xact_commit + xact_rollback as n from pg_stat_database where datname = ${DB_NAME}`;
      return Number(r!.n);
    };

    log(`JIT warm-up: ${READERS} readers, 10 s`);
    await wrk(readUrl, 10, READERS);
    const runs: Record<string, { rps: number[]; p99: number[]; noiseRps: number[]; xactsPerS: number[]; serverCpu: number[]; othersCpu0: number[]; quiet: boolean[] }> = {};
    // Each round ends with reads alone again: a configuration's ratio is to the mean of the reads
    // alone that bracket the round, so drift from other load on the machine cancels out better.
    const round = [...CONFIGS, CONFIGS[0]];
    const aloneEnd: number[] = [];
    const aloneEndCpu: number[] = [];
    for (let rep = 1; rep <= REPS; rep++) {
      for (const [i, c] of round.entries()) {
        log(`${c!.label} (run ${rep}/${REPS})`);
        const quiet = await quietMoment();
        await wrk(readUrl, WARMUP_S, READERS);
        const x0 = await xacts();
        const [s0, p0, t0] = [await cpuStat(), await procCpuS(server.pid), performance.now()];
        const noise = c!.method ? wrk(`${base}/no-such-route`, DURATION_S, NOISE_CLIENTS, { NOISE_METHOD: c!.method, NOISE_DELAY_MS: String(c!.delayMs ?? 0) }, join(HERE, "noise.lua")) : null;
        const reads = await wrk(readUrl, DURATION_S, READERS);
        const [s1, p1, t1] = [await cpuStat(), await procCpuS(server.pid), performance.now()];
        const n = noise ? await noise : null;
        const x1 = await xacts();
        // The service's share of CPU 0 and what the rest of the machine took of it meanwhile.
        const serverCpu = (p1 - p0) / ((t1 - t0) / 1000);
        const othersCpu0 = Math.max(0, (s1[0]!.busy - s0[0]!.busy) / (s1[0]!.total - s0[0]!.total) - serverCpu);
        if (reads.non2xx > 0) throw new Error(`hot reads answered ${reads.non2xx} non-2xx`);
        if (i === round.length - 1) {
          aloneEnd.push(reads.rps);
          aloneEndCpu.push(serverCpu);
          log(`  reads ${Math.round(reads.rps)}/s p99 ${reads.p99} ms (end of round); service ${(serverCpu * 100).toFixed(0)}% of CPU 0, others ${(othersCpu0 * 100).toFixed(0)}%`);
          continue;
        }
        const r = (runs[c!.label] ??= { rps: [], p99: [], noiseRps: [], xactsPerS: [], serverCpu: [], othersCpu0: [], quiet: [] });
        r.serverCpu.push(serverCpu);
        r.othersCpu0.push(othersCpu0);
        r.quiet.push(quiet);
        r.rps.push(reads.rps);
        r.p99.push(reads.p99);
        r.noiseRps.push(n ? n.rps : 0);
        // minus the one statistics query per sample
        r.xactsPerS.push(Math.max(0, x1 - x0 - 1) / DURATION_S);
        log(
          `  reads ${Math.round(reads.rps)}/s p99 ${reads.p99} ms; noise ${n ? Math.round(n.rps) : 0}/s; PostgreSQL ${Math.round(r.xactsPerS.at(-1)!)} transactions/s; service ${(serverCpu * 100).toFixed(0)}% of CPU 0, others ${(othersCpu0 * 100).toFixed(0)}%${quiet ? "" : " (no quiet moment before)"}`,
        );
      }
    }
    await db.end();
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
    const alone = runs[CONFIGS[0]!.label];
    const out = {
      date: new Date().toISOString(),
      service: { root: ROOT, commit },
      nice: NICE[2],
      readers: READERS,
      noise_clients: NOISE_CLIENTS,
      duration_s: DURATION_S,
      reps: REPS,
      body_bytes: bytes,
      runs,
      alone_at_round_end: aloneEnd,
      alone_at_round_end_server_cpu: aloneEndCpu,
      // Reads per CPU-second of the service: what is left of its capacity for reads, whatever share
      // of CPU 0 other processes took during the run (on a shared machine the stable figure).
      reads_per_cpu_s: Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, v.rps.map((x, i) => x / v.serverCpu[i]!)])),
      ratio_per_cpu_s: Object.fromEntries(
        Object.entries(runs).map(([k, v]) => [k, v.rps.map((x, i) => x / v.serverCpu[i]! / ((alone!.rps[i]! / alone!.serverCpu[i]! + aloneEnd[i]! / aloneEndCpu[i]!) / 2))]),
      ),
      ratio_to_alone: Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, v.rps.map((x, i) => x / ((alone!.rps[i]! + aloneEnd[i]!) / 2))])),
    };
    const file = process.env.BENCH_OUT ?? join(HERE, "noise-results.json");
    writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
    const f = (n: number): string => Math.round(n).toLocaleString("en");
    console.log(
      `\n| configuration (${READERS} readers of one cached ${bytes}-byte page) | reads/s (median of ${REPS}) | ratio to reads alone, each round | reads per CPU-second of the service (median) | ratio per CPU-second, each round | noise req/s | PostgreSQL transactions/s | service's share of CPU 0 | others' share of CPU 0 |`,
    );
    console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (const c of CONFIGS) {
      const r = runs[c.label];
      const ratios = out.ratio_to_alone[c.label]!.map((x) => x.toFixed(2)).join(" / ");
      const perCpu = out.ratio_per_cpu_s[c.label]!.map((x) => x.toFixed(2)).join(" / ");
      console.log(
        `| ${c.label} | ${f(median(r!.rps))} | ${ratios} | ${f(median(out.reads_per_cpu_s[c.label]!))} | ${perCpu} | ${f(median(r!.noiseRps))} | ${f(median(r!.xactsPerS))} | ${r!.serverCpu.map((x) => `${(x * 100).toFixed(0)}%`).join(" / ")} | ${r!.othersCpu0.map((x) => `${(x * 100).toFixed(0)}%`).join(" / ")} |`,
      );
    }
    log(`results in ${file}`);
  } finally {
    server.kill("SIGTERM");
    await server.exited;
    await admin.unsafe(`drop database if exists ${DB_NAME} with (force)`).catch(() => {});
    await admin.end();
  }
}

await main();
