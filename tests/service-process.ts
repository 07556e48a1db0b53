// A real service process (`bun src/main.ts`) on a PostgreSQL database, for the tests that take the
// database away from it (faults, stale serving): started, waited for until ready, killed.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./helpers";

export interface Served {
  url: string;
  pid: number;
  output: () => string;
  alive: () => boolean;
  kill: () => Promise<void>;
}

/**
 * `opts.env` adds to the service's environment; `opts.dataDir` is a DATA_DIR the caller owns (kept
 * after kill: an embedded database restarted over it, when databaseUrl is "").
 */
export async function serve(databaseUrl: string, token: string, poolSize = 5, opts: { env?: Record<string, string>; dataDir?: string; startTimeoutMs?: number } = {}): Promise<Served> {
  const port = freePort();
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), "cms-svc-")); // the local secret key file, nothing else
  const proc = Bun.spawn([process.execPath, "src/main.ts"], {
    cwd: join(import.meta.dir, ".."),
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: "127.0.0.1",
      DATA_DIR: dataDir,
      ADMIN_TOKEN: token,
      SEED_DEMO: "false",
      LOG_LEVEL: "warn",
      DB_POOL_SIZE: String(poolSize),
      ...opts.env,
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  let out = "";
  const decoder = new TextDecoder();
  void (async () => {
    for await (const c of proc.stdout) out += decoder.decode(c);
  })();
  void (async () => {
    for await (const c of proc.stderr) out += decoder.decode(c);
  })();
  const kill = async (): Promise<void> => {
    proc.kill("SIGKILL");
    await proc.exited;
    if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
  };
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (opts.startTimeoutMs ?? 30_000);
  while (
    !(await fetch(`${url}/readyz`)
      .then((r) => r.ok)
      .catch(() => false))
  ) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      await kill();
      throw new Error(`service did not start:\n${out}`);
    }
    await Bun.sleep(100);
  }
  return { url, pid: proc.pid, output: () => out, alive: () => proc.exitCode === null && proc.signalCode === null, kill };
}
