// The browser suite (`npm test` runs it last, through tests/run.ts): under Node 22, starts the
// service (bun src/main.ts, or the single binary with --binary <path>) on a fresh database
// (STUDIO_DATABASE_URL, else an embedded PGlite in a temporary DATA_DIR), then runs
// tests/studio/*.spec.ts with node:test, one file after another, each driving Debian's Chromium
// through playwright-core. Usage: node --experimental-strip-types tests/studio/run.ts [--binary dist/content-service]
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

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

const exited = (child: ChildProcess): Promise<number> => new Promise((resolve) => child.once("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0))));

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

async function main(): Promise<number> {
  if (!existsSync(chromiumPath)) {
    console.error(`browser suite: no Chromium at ${chromiumPath}; install Debian's package (apt-get install -y chromium) or set CHROMIUM_PATH`);
    return 1;
  }
  const binaryAt = process.argv.indexOf("--binary");
  const binary = binaryAt >= 0 ? process.argv[binaryAt + 1] : undefined;
  if (!binary) {
    // The built studio the service serves: built now when missing or stale (as npm start does).
    const build = spawn(process.execPath, [join(root, "studio/build.mjs")], { cwd: root, stdio: "inherit" });
    if ((await exited(build)) !== 0) return 1;
  }
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
  };
  delete env.DATABASE_URL;
  if (process.env.STUDIO_DATABASE_URL) env.DATABASE_URL = process.env.STUDIO_DATABASE_URL;
  const bun = process.env.BUN_PATH ?? join(root, "node_modules/.bin/bun");
  const [cmd, args] = binary ? [binary, [] as string[]] : [bun, [join(root, "src/main.ts")]];
  let log = "";
  const service = spawn(cmd, args, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
  service.stdout?.on("data", (d) => (log += String(d)));
  service.stderr?.on("data", (d) => (log += String(d)));
  try {
    await waitReady(url, service, () => log);
    const specs = readdirSync(join(root, "tests/studio"))
      .filter((f) => f.endsWith(".spec.ts"))
      .sort()
      .map((f) => join(root, "tests/studio", f));
    console.log(`\nbrowser suite: ${specs.length} files against ${binary ? "the single binary" : "bun src/main.ts"} on ${env.DATABASE_URL ? "PostgreSQL" : "PGlite"} (${url})`);
    const run = spawn(process.execPath, ["--experimental-strip-types", "--no-warnings", "--test", "--test-concurrency=1", "--test-reporter=spec", ...specs], {
      cwd: root,
      env: { ...env, STUDIO_URL: url, STUDIO_ADMIN_KEY: adminKey, STUDIO_OWNER_EMAIL: env.ADMIN_EMAIL, STUDIO_OWNER_PASSWORD: env.ADMIN_PASSWORD, CHROMIUM_PATH: chromiumPath } as Record<
        string,
        string
      >,
      stdio: "inherit",
    });
    const code = await exited(run);
    if (code !== 0 && log.trim()) console.error(`--- the service's output:\n${log.slice(-4000)}`);
    return code;
  } finally {
    service.kill("SIGTERM");
    // fixed wait: the bound on a graceful stop before SIGKILL
    await Promise.race([exited(service), new Promise((r) => setTimeout(r, 10_000))]);
    if (service.exitCode === null) service.kill("SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
  }
}

process.exit(await main());
