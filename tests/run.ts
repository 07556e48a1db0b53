// The whole suite as `npm test` and CI run it (tests/README.md): the test files in parallel worker
// processes, then the few that must run alone, one after another. On PostgreSQL (DATABASE_URL)
// the files that never touch a database are left out: the PGlite run already ran them.
// Usage: bun tests/run.ts [bun test flags, e.g. --update-timings]
// TEST_PARALLEL=N sets the number of workers (default 2; 1 runs every file in one process).
import { existsSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";

/**
 * Files that cannot run beside others: they measure time or take a database server's connections
 * away, and a busy neighbour makes them fail for the wrong reason. Keep this list short.
 */
export const SERIAL: readonly string[] = [
  "tests/faults.test.ts", // PostgreSQL: terminates backends for 6 s under 10 writers, then asserts the recovery time
  "tests/delivery-stale-outage.test.ts", // PostgreSQL: two services through an 8 s outage, >= 99 % of reads answered
  "tests/write-outage.test.ts", // PostgreSQL: 8 writers through 4 cuts, each write settled within 2 s of the restore
  "tests/postgres-driver.test.ts", // PostgreSQL: terminates every backend every 100 ms, then 20 queries within 2 s
];

/**
 * Files that never read DATABASE_URL, directly or through a helper: pure functions, the docs, or
 * services started on their own embedded database (DATABASE_URL removed). They run in the PGlite
 * run only. tests/suite.test.ts checks that none of them mentions the database the suite runs on.
 */
export const NO_DATABASE: readonly string[] = [
  "tests/ai-ssrf.test.ts", // the SSRF guard's parsing and resolution
  "tests/data-dir-lock.test.ts", // services and CLI on embedded DATA_DIRs (DATABASE_URL removed)
  "tests/dockerfile.test.ts", // the Dockerfile's text
  "tests/error-cause.test.ts", // error values
  "tests/log-sink.test.ts", // the log writer
  "tests/model-types-generator.test.ts", // the model's TypeScript generator and tsc
  "tests/pinned-fetch.test.ts", // outbound fetch on Bun, Node and Deno
  "tests/readme.test.ts", // the README and the guides
  "tests/runtimes-lock.test.ts", // the DATA_DIR lock across runtimes (DATABASE_URL removed)
  "tests/runtimes-password.test.ts", // argon2 across runtimes
  "tests/shutdown.test.ts", // a service on an embedded DATA_DIR (DATABASE_URL emptied)
];

const root = join(import.meta.dir, "..");
const TIMINGS = "tests/timings.json";

/** The files each step runs, in the order `bun test` would find them. */
export function plan(onPostgres: boolean): { parallel: string[]; serial: string[] } {
  const all = [...new Bun.Glob("tests/*.test.ts").scanSync({ cwd: root })].sort();
  const files = onPostgres ? all.filter((f) => !NO_DATABASE.includes(f)) : all;
  return { parallel: files.filter((f) => !SERIAL.includes(f)), serial: files.filter((f) => SERIAL.includes(f)) };
}

async function bunTest(files: string[], flags: string[]): Promise<number> {
  if (files.length === 0) return 0;
  const args = ["test", "--timeout", "60000", ...(existsSync(join(root, TIMINGS)) ? [`--timings=${TIMINGS}`] : []), ...flags, ...process.argv.slice(2), ...files.map((f) => `./${f}`)];
  console.log(`\n$ bun ${args.filter((a) => !a.startsWith("./tests/")).join(" ")} <${files.length} files>`);
  const proc = Bun.spawn([process.execPath, ...args], { cwd: root, stdio: ["inherit", "inherit", "inherit"] });
  return proc.exited;
}

/** Drops the per-worker databases tests/setup.ts made beside DATABASE_URL's. */
async function dropWorkerDatabases(base: string): Promise<void> {
  const prefix = `${decodeURIComponent(new URL(base).pathname.slice(1))}_w`;
  const admin = postgres(base, { max: 1, onnotice: () => {} });
  try {
    for (const { datname } of await admin<{ datname: string }[]>`select datname from pg_database where starts_with(datname, ${prefix})`) {
      await admin.unsafe(`drop database if exists "${datname}" with (force)`);
    }
  } finally {
    await admin.end();
  }
}

/** Node 22 or later, which the browser suite runs under: XRT_NODE (CI), .ci/.runtimes, else `node` when recent enough. */
function node22(): string | null {
  const candidates = [process.env.XRT_NODE, join(root, ".ci/.runtimes/node_modules/.bin/node"), "node"];
  for (const c of candidates) {
    if (!c || (c !== "node" && !existsSync(c))) continue;
    const out = Bun.spawnSync([c, "--version"]).stdout.toString().trim();
    if (/^v(2[2-9]|[3-9]\d)\./.test(out)) return c;
  }
  return null;
}

/**
 * The studio's browser suite (tests/studio/run.ts) on the database this run uses: a fresh
 * PostgreSQL database beside DATABASE_URL's, else an embedded PGlite.
 */
async function browserSuite(pgUrl: string | null): Promise<number> {
  const node = node22();
  if (!node) {
    console.error("browser suite: needs Node 22 or later (bash .ci/install-runtimes.sh installs it into .ci/.runtimes)");
    return 1;
  }
  const env: Record<string, string | undefined> = { ...process.env, BUN_PATH: process.execPath };
  let drop: (() => Promise<void>) | null = null;
  if (pgUrl) {
    const name = `${decodeURIComponent(new URL(pgUrl).pathname.slice(1))}_wstudio`;
    const admin = postgres(pgUrl, { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
    await admin.unsafe(`create database "${name}"`);
    await admin.end();
    const url = new URL(pgUrl);
    url.pathname = `/${name}`;
    env.STUDIO_DATABASE_URL = url.toString();
    drop = () => dropWorkerDatabases(pgUrl);
  }
  console.log(`\n$ ${node} tests/studio/run.ts`);
  const proc = Bun.spawn([node, "--experimental-strip-types", "--no-warnings", "tests/studio/run.ts"], { cwd: root, env, stdio: ["inherit", "inherit", "inherit"] });
  const code = await proc.exited;
  await drop?.();
  return code;
}

if (import.meta.main) {
  const pgUrl = process.env.DATABASE_URL?.startsWith("postgres") ? process.env.DATABASE_URL : null;
  const workers = Number(process.env.TEST_PARALLEL ?? 2);
  const { parallel, serial } = plan(pgUrl !== null);
  const started = performance.now();
  // The studio the suite serves (tests/studio-serving.test.ts, the browser suite): built when missing or stale.
  let code = Bun.spawnSync(["node", "studio/build.mjs"], { cwd: root, stdio: ["inherit", "inherit", "inherit"] }).exitCode;
  try {
    if (workers > 1) {
      code = (await bunTest(parallel, [`--parallel=${workers}`, "--no-isolate"])) || code;
      code = (await bunTest(serial, [])) || code;
    } else {
      code = (await bunTest([...parallel, ...serial], [])) || code;
    }
    code = (await browserSuite(pgUrl)) || code;
  } finally {
    if (pgUrl) await dropWorkerDatabases(pgUrl);
  }
  const skipped = pgUrl ? `; ${NO_DATABASE.length} files without a database ran on PGlite only` : "";
  console.log(`\n${parallel.length} files on ${workers} workers, ${serial.length} alone, ${((performance.now() - started) / 1000).toFixed(1)} s${skipped}`);
  process.exit(code);
}
