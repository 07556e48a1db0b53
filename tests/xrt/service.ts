// The real service as a child process, started from these sources on the runtime the run asks for:
//   XRT_RUNTIME=bun   → bun src/main.ts                (XRT_BUN, else the Bun running the tests)
//   XRT_RUNTIME=node  → npm run start:node             (the node of XRT_NODE, else the one on PATH)
//   XRT_RUNTIME=deno  → npm run start:deno             (the deno of XRT_DENO, else the one on PATH)
//   XRT_DB=pglite     → embedded PGlite in a temporary DATA_DIR (the default)
//   XRT_DB=postgres   → a fresh database on XRT_POSTGRES_URL's server, dropped after the run
// Each start gets its own port, DATA_DIR and database, so several runs can go side by side.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import postgres from "postgres";

export type Runtime = "bun" | "node" | "deno";
export type DbKind = "pglite" | "postgres";

const ROOT = join(import.meta.dir, "..", "..");

function pick<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
  const v = process.env[name] ?? fallback;
  if (!(allowed as readonly string[]).includes(v)) throw new Error(`${name} must be one of ${allowed.join(", ")} (got ${v})`);
  return v as T;
}

export const RUNTIME: Runtime = pick("XRT_RUNTIME", ["bun", "node", "deno"], "bun");
export const DB: DbKind = pick("XRT_DB", ["pglite", "postgres"], "pglite");
const POSTGRES_URL = process.env.XRT_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

export const ADMIN_TOKEN = `xrt-root-token-${crypto.randomUUID()}`;
export const ADMIN_EMAIL = "owner@xrt.example";
export const ADMIN_PASSWORD = `xrt-pw-${crypto.randomUUID()}`;

/** The command line and PATH that start the service on the chosen runtime. */
function command(): { argv: string[]; path: string } {
  const path = process.env.PATH ?? "";
  if (RUNTIME === "bun") return { argv: [process.env.XRT_BUN ?? process.execPath, "src/main.ts"], path };
  const bin = RUNTIME === "node" ? process.env.XRT_NODE : process.env.XRT_DENO;
  // The chosen binary goes first on PATH, so `node`/`deno` in the npm script (and npm itself) find it.
  const first = bin ? dirname(bin) : null;
  return { argv: ["npm", "run", `start:${RUNTIME}`], path: first ? `${first}${delimiter}${path}` : path };
}

export interface Service {
  readonly base: string;
  readonly port: number;
  readonly dataDir: string;
  /** The process this suite spawned (npm for node and deno, the service itself for bun). */
  readonly proc: ChildProcess;
  /** Resolves with the exit code (a signal's name if killed by one) of `proc`. */
  readonly exited: Promise<number | string>;
  output(): string;
  /** The service's own pid: the deepest process under `proc` (npm → sh → node, or bun itself). */
  servicePid(): number;
  /** Admin API call with the root token; JSON body in, parsed JSON out. */
  admin(method: string, path: string, body?: unknown): Promise<Reply>;
  /** SIGTERM to the service, then waits for every process of the start to end. */
  stop(): Promise<void>;
}

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

export async function reply(res: Response): Promise<Reply> {
  const text = await res.text();
  let json: any = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** A port nothing listens on now. */
function freePort(): number {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port ?? 0;
  s.stop(true);
  return port;
}

/** Polls until `condition` is truthy; throws after `timeout` ms naming `what`. */
export async function waitFor<T>(condition: () => T | Promise<T>, what: string, timeout = 10_000): Promise<T> {
  const deadline = performance.now() + timeout;
  for (;;) {
    const v = await condition();
    if (v) return v;
    if (performance.now() > deadline) throw new Error(`timed out after ${timeout} ms waiting for ${what}`);
    await Bun.sleep(50); // fixed wait: the poll interval of the one wait for a condition
  }
}

const databases: string[] = [];
let pgAdmin: ReturnType<typeof postgres> | null = null;

/** A new empty database on the PostgreSQL server; dropped by `cleanupDatabases`. */
async function freshDatabase(): Promise<string> {
  pgAdmin ??= postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
  const name = `xrt_${RUNTIME}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  await pgAdmin.unsafe(`create database ${name}`);
  databases.push(name);
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

async function cleanupDatabases(): Promise<void> {
  if (!pgAdmin) return;
  for (const name of databases.splice(0)) await pgAdmin.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
  await pgAdmin.end();
  pgAdmin = null;
}

export interface StartOptions {
  /** Extra environment (wins over the defaults below). */
  env?: Record<string, string>;
  /** Reuse a DATA_DIR (the lock tests); a new temporary one otherwise. */
  dataDir?: string;
  /** Wait for /readyz (default true). */
  ready?: boolean;
  /** The database URL to use (postgres runs); a fresh database otherwise. */
  databaseUrl?: string;
}

const started: Service[] = [];

/**
 * Starts the service; with `ready` (the default) resolves once /readyz answers 200 and the admin
 * API takes this run's root token (so the answer is this service's, not another run's that took
 * the same port between freePort and the bind: runs go side by side). A start that lost its port
 * that way (exit 2, "port") is tried again on another.
 */
export async function startService(opts: StartOptions = {}): Promise<Service & { databaseUrl: string | null }> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(opts);
    } catch (err) {
      if (attempt >= 3 || !(err instanceof PortTaken)) throw err;
    }
  }
}

class PortTaken extends Error {}

async function startOnce(opts: StartOptions): Promise<Service & { databaseUrl: string | null }> {
  const port = freePort();
  const base = `http://127.0.0.1:${port}`;
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), `xrt-${RUNTIME}-`));
  const databaseUrl = DB === "postgres" ? (opts.databaseUrl ?? (await freshDatabase())) : null;
  const { argv, path } = command();
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    PATH: path,
    PORT: String(port),
    HOST: "127.0.0.1",
    PUBLIC_URL: base,
    DATA_DIR: dataDir,
    ADMIN_TOKEN,
    ADMIN_EMAIL,
    ADMIN_PASSWORD,
    SEED_DEMO: "false",
    LOG_LEVEL: "info",
    OAUTH_REGISTER_RATE_LIMIT: "1000000",
    OAUTH_TOKEN_RATE_LIMIT: "1000000",
    OAUTH_SIGNIN_RATE_LIMIT: "1000000",
    ...opts.env,
  };
  delete env.DATABASE_URL;
  if (databaseUrl) env.DATABASE_URL = databaseUrl;
  // A process group of its own: cleanup can end npm, sh and the service together.
  const proc = spawn(argv[0]!, argv.slice(1), { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let out = "";
  proc.stdout!.on("data", (c: Buffer) => (out += c.toString()));
  proc.stderr!.on("data", (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | string>((resolve) => proc.on("exit", (code, signal) => resolve(code ?? signal ?? "unknown")));
  let exitCode: number | string | null = null;
  void exited.then((c) => (exitCode = c));

  const svc: Service & { databaseUrl: string | null } = {
    base,
    port,
    dataDir,
    databaseUrl,
    proc,
    exited,
    output: () => out,
    servicePid: () => deepestChild(proc.pid!),
    async admin(method, p, body) {
      const headers: Record<string, string> = { authorization: `Bearer ${ADMIN_TOKEN}` };
      if (body !== undefined) headers["content-type"] = "application/json";
      return reply(await fetch(base + p, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }));
    },
    async stop() {
      if (exitCode !== null) return;
      signal(svc.servicePid(), "SIGTERM");
      const done = await Promise.race([exited.then(() => true), /* fixed wait: a deadline */ Bun.sleep(15_000).then(() => false)]);
      if (!done) signal(-proc.pid!, "SIGKILL");
      await exited;
    },
  };
  started.push(svc);
  if (opts.ready === false) return svc;
  const deadline = performance.now() + 90_000;
  for (;;) {
    const ready = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2000) }).then(
      (r) => r.status === 200,
      () => false,
    );
    // Ours: the admin API takes this run's token (another run's service on the port would not).
    const ours =
      ready &&
      exitCode === null &&
      (await fetch(`${base}/admin/projects`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, signal: AbortSignal.timeout(2000) }).then(
        (r) => r.status === 200,
        () => false,
      ));
    if (ours) return svc;
    const failure = exitCode !== null ? `exited ${exitCode}` : performance.now() > deadline ? "was not ready within 90 s" : null;
    if (failure) {
      const lostPort = exitCode === 2 && /PORT \d+ is in use/.test(out);
      // A start that fails in a describe's body leaves no afterAll to clean up after it: do it here.
      if (lostPort) {
        started.splice(started.indexOf(svc), 1);
        if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
        throw new PortTaken(`port ${port} was taken`);
      }
      await stopAll();
      throw new Error(`the service (${RUNTIME}, ${argv.join(" ")}) ${failure}:\n${out}`);
    }
    await Bun.sleep(100); // fixed wait: the poll interval of this wait for /readyz (with a deadline)
  }
}

/** Ends every service this run started (their whole process groups) and removes their data. */
export async function stopAll(): Promise<void> {
  for (const s of started.splice(0)) {
    await s.stop().catch(() => signal(-s.proc.pid!, "SIGKILL"));
    signal(-s.proc.pid!, "SIGKILL"); // anything left in the group (npm does not pass SIGTERM on to its script)
    rmSync(s.dataDir, { recursive: true, force: true });
  }
  await cleanupDatabases();
}

export function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

function deepestChild(pid: number): number {
  let current = pid;
  for (;;) {
    let children: string[] = [];
    try {
      children = readFileSync(`/proc/${current}/task/${current}/children`, "utf8").trim().split(/\s+/).filter(Boolean);
    } catch {
      return current;
    }
    if (children.length === 0) return current;
    current = Number(children[0]);
  }
}

/**
 * Whether `pid` runs the binary this run asked for: the same file as XRT_BUN/XRT_NODE/XRT_DENO (or
 * the Bun running the tests), else one named after the runtime. A start script that quietly ran
 * another runtime would otherwise pass every check.
 */
export function runsRequestedRuntime(pid: number): { ok: boolean; exe: string } {
  const exe = realpathSync(`/proc/${pid}/exe`);
  const bin = RUNTIME === "bun" ? (process.env.XRT_BUN ?? process.execPath) : RUNTIME === "node" ? process.env.XRT_NODE : process.env.XRT_DENO;
  const ok = bin ? exe === realpathSync(bin) : new RegExp(`(^|/)${RUNTIME}(\\.exe)?$`).test(exe);
  return { ok, exe };
}

/** The runtime actually serving (for the report line at the top of a run). */
export function describeRun(): string {
  const bin = RUNTIME === "bun" ? (process.env.XRT_BUN ?? process.execPath) : RUNTIME === "node" ? process.env.XRT_NODE : process.env.XRT_DENO;
  return `${RUNTIME} (${bin ? realpathSync(bin) : "from PATH"}) on ${DB}`;
}
