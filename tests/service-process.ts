// A real service process (`bun src/main.ts`) on a PostgreSQL database, for the tests that take the
// database away from it (faults, stale serving): started, waited for until ready, killed.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { freePort, waitFor } from "./helpers";

export interface Served {
  url: string;
  pid: number;
  output: () => string;
  alive: () => boolean;
  kill: () => Promise<void>;
}

export interface Spawned {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  /** http://127.0.0.1:<port> */
  url: string;
  port: number;
  /** stdout and stderr so far. */
  output: () => string;
}

/**
 * `bun src/main.ts` on 127.0.0.1 at `port` (default: a free one), SEED_DEMO off and LOG_LEVEL warn
 * unless `env` says otherwise; `env` adds to the test's environment (a key set to undefined is
 * removed). Its stdout and stderr are collected. Not waited for: see untilReady.
 */
export function spawnService(env: Record<string, string | undefined>, port = freePort()): Spawned {
  const full: Record<string, string | undefined> = { ...process.env, PORT: String(port), HOST: "127.0.0.1", SEED_DEMO: "false", LOG_LEVEL: "warn", ...env };
  for (const [k, v] of Object.entries(full)) if (v === undefined) delete full[k];
  const proc = Bun.spawn([process.execPath, "src/main.ts"], { cwd: join(import.meta.dir, ".."), env: full, stdout: "pipe", stderr: "pipe" });
  let out = "";
  for (const stream of [proc.stdout, proc.stderr]) {
    void (async () => {
      const decoder = new TextDecoder();
      for await (const c of stream) out += decoder.decode(c);
    })();
  }
  return { proc, url: `http://127.0.0.1:${port}`, port, output: () => out };
}

/** Waits until the service answers /readyz 200; throws, with its output, when it exits or `timeoutMs` passes first. */
export async function untilReady(s: Spawned, timeoutMs = 30_000, interval = 100): Promise<void> {
  const ready = async (): Promise<boolean> => {
    if (s.proc.exitCode !== null) throw new Error(`service exited ${s.proc.exitCode}`);
    return fetch(`${s.url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
  };
  await waitFor(ready, { timeout: timeoutMs, interval, what: "/readyz 200" }).catch((err: Error) => {
    throw new Error(`${err.message}:\n${s.output()}`);
  });
}

/**
 * A service on `databaseUrl` with `token` as ADMIN_TOKEN, ready. `opts.env` adds to the service's
 * environment; `opts.dataDir` is a DATA_DIR the caller owns (kept after kill: an embedded database
 * restarted over it, when databaseUrl is "").
 */
export async function serve(databaseUrl: string, token: string, poolSize = 5, opts: { env?: Record<string, string>; dataDir?: string; startTimeoutMs?: number } = {}): Promise<Served> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), "cms-svc-")); // the local secret key file, nothing else
  const s = spawnService({ DATABASE_URL: databaseUrl, DATA_DIR: dataDir, ADMIN_TOKEN: token, DB_POOL_SIZE: String(poolSize), ...opts.env });
  const { proc } = s;
  const kill = async (): Promise<void> => {
    proc.kill("SIGKILL");
    await proc.exited;
    if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
  };
  await untilReady(s, opts.startTimeoutMs ?? 30_000).catch(async (err: Error) => {
    await kill();
    throw new Error(`service did not start: ${err.message}`);
  });
  return { url: s.url, pid: proc.pid, output: s.output, alive: () => proc.exitCode === null && proc.signalCode === null, kill };
}
