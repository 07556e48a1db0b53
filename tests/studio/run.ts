// The browser suite (`npm test` runs it last, through tests/run.ts): under Node 22, starts the
// service (bun src/main.ts, or the single binary with --binary <path>) on a fresh database
// (STUDIO_DATABASE_URL, else an embedded PGlite in a temporary DATA_DIR), then runs
// tests/studio/*.spec.ts with node:test, one file after another, each driving Debian's Chromium
// through playwright-core. Usage: node --experimental-strip-types tests/studio/run.ts [--binary dist/content-service] [name.spec.ts …]
import { spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { exited, root, startService } from "./service.ts";

const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

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
  // The AI vendor stand-in and the webhook receivers of the specs live on loopback.
  const service = await startService({ binary, databaseUrl: process.env.STUDIO_DATABASE_URL, env: { AI_ALLOW_PRIVATE_URLS: "true", WEBHOOKS_ALLOW_PRIVATE_URLS: "true" } });
  const { url, adminKey, env } = service;
  try {
    // Spec files named on the command line run alone (a name or a path), else all of them.
    const named = process.argv.slice(2).filter((a) => a.endsWith(".spec.ts"));
    const specs = readdirSync(join(root, "tests/studio"))
      .filter((f) => f.endsWith(".spec.ts") && (named.length === 0 || named.some((n) => n.endsWith(f))))
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
    if (code !== 0 && service.output().trim()) console.error(`--- the service's output:\n${service.output().slice(-4000)}`);
    return code;
  } finally {
    await service.stop();
  }
}

process.exit(await main());
