// The service a browser run drives (the browser suite, bench/studio.ts): `bun src/main.ts` or the
// single binary, on STUDIO_DATABASE_URL or an embedded PGlite in a temporary DATA_DIR, with a known
// root key and owner, answering on a free loopback port.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = fileURLToPath(new URL("../..", import.meta.url));

export interface Service {
  readonly url: string;
  readonly adminKey: string;
  readonly env: Record<string, string>;
  output(): string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export const exited = (child: ChildProcess): Promise<number> => new Promise((resolve) => child.once("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0))));

async function waitReady(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the service exited (${child.exitCode}):\n${output()}`);
    const ok = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    // fixed wait: polling /readyz while the service starts (nothing to wait on but the port)
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the service did not answer /readyz within 60 s:\n${output()}`);
}

/** Starts the service and waits until /readyz answers. */
export async function startService(opts: { binary?: string; databaseUrl?: string; env?: Record<string, string> } = {}): Promise<Service> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const adminKey = `cms_ak_studio_suite_${crypto.randomUUID().replaceAll("-", "")}`;
  const dataDir = mkdtempSync(join(tmpdir(), "studio-suite-"));
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    PORT: String(port),
    HOST: "127.0.0.1",
    PUBLIC_URL: url,
    ADMIN_TOKEN: adminKey,
    ADMIN_EMAIL: "owner@studio.test",
    ADMIN_PASSWORD: "owner-password-studio-suite",
    SEED_DEMO: "false",
    LOG_LEVEL: "warn",
    DATA_DIR: dataDir,
    OAUTH_SIGNIN_RATE_LIMIT: "1000000",
    ...opts.env,
  };
  delete env.DATABASE_URL;
  if (opts.databaseUrl) env.DATABASE_URL = opts.databaseUrl;
  const bun = process.env.BUN_PATH ?? join(root, "node_modules/.bin/bun");
  const [cmd, args] = opts.binary ? [opts.binary, [] as string[]] : [bun, [join(root, "src/main.ts")]];
  let log = "";
  const child = spawn(cmd, args, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout?.on("data", (d) => (log += String(d)));
  child.stderr?.on("data", (d) => (log += String(d)));
  const stop = async (): Promise<void> => {
    child.kill("SIGTERM");
    // fixed wait: the bound on a graceful stop before SIGKILL (cleared once it has exited, so nothing idles after)
    let bound: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([exited(child), new Promise((r) => (bound = setTimeout(r, 10_000)))]);
    clearTimeout(bound);
    if (child.exitCode === null) child.kill("SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await waitReady(url, child, () => log);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, adminKey, env, output: () => log, stop };
}
