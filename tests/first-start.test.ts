// First start explains itself (real processes, `bun src/main.ts` and `bun src/cli.ts`): an
// unreachable database, a database that does not exist, a malformed DATABASE_URL and an
// unwritable DATA_DIR each end in one line saying what is wrong and how to fix it, exit code 2,
// no stack trace, no password.
import { afterAll, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const work = mkdtempSync(join(tmpdir(), "cms-first-"));
chmodSync(work, 0o755);
afterAll(() => rmSync(work, { recursive: true, force: true }));

const pgUrl = process.env.DATABASE_URL?.startsWith("postgres") ? process.env.DATABASE_URL : null;

async function start(env: Record<string, string>, opts: { cli?: string[]; readOnly?: boolean } = {}): Promise<{ code: number; out: string }> {
  const base: Record<string, string> = { PATH: process.env.PATH ?? "", HOME: tmpdir(), SEED_DEMO: "false", LOG_LEVEL: "warn", HOST: "127.0.0.1", PORT: "0" };
  const argv = opts.cli ? [process.execPath, "src/cli.ts", ...opts.cli] : [process.execPath, "src/main.ts"];
  // Root writes anywhere: the unwritable case runs, when the suite runs as root, as root without
  // the capabilities that ignore file modes (so a 0555 directory refuses it as it refuses its
  // owner). It stays root so it still reads a checkout only root may enter (nobody could not).
  const drop = "-dac_override,-dac_read_search";
  const cmd = opts.readOnly && process.getuid?.() === 0 ? ["setpriv", "--bounding-set", drop, "--inh-caps", drop, ...argv] : argv;
  const p = Bun.spawn(cmd, { cwd: root, env: { ...base, ...env }, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const timer = setTimeout(() => p.kill("SIGKILL"), 20_000);
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  clearTimeout(timer);
  return { code, out: (out + err).trim() };
}

function oneClearLine(r: { code: number; out: string }, says: RegExp): void {
  expect(r.out).toMatch(says);
  expect(r.out.split("\n")).toHaveLength(1);
  expect(r.out).toStartWith("error: ");
  expect(r.out).not.toMatch(/\n\s+at |\.ts:\d+:\d+/);
  expect(r.code).toBe(2);
}

test("each first-start failure is one line with the fix, exit code 2 (service and CLI)", async () => {
  const readOnly = join(work, "read-only");
  mkdirSync(readOnly);
  chmodSync(readOnly, 0o555);
  const aFile = join(work, "a-file");
  writeFileSync(aFile, "x");

  const [unreachable, malformedPort, malformedEscape, readOnlyDir, underAFile, cliUnreachable, cliReadOnly] = await Promise.all([
    start({ DATABASE_URL: "postgres://postgres:hunter2-secret@127.0.0.1:1/x" }),
    start({ DATABASE_URL: "postgres://app:hunter2-secret@127.0.0.1:99999/db" }),
    start({ DATABASE_URL: "postgres://app:hunter2%zz@127.0.0.1/db" }),
    start({ DATA_DIR: readOnly }, { readOnly: true }),
    start({ DATA_DIR: join(aFile, "data") }),
    start({ DATABASE_URL: "postgres://postgres:hunter2-secret@127.0.0.1:1/x" }, { cli: ["keys:list"] }),
    start({ DATA_DIR: readOnly }, { cli: ["keys:create", "--name", "x"], readOnly: true }),
  ]);

  oneClearLine(unreachable, /cannot reach the PostgreSQL server at 127\.0\.0\.1:1 \(ECONNREFUSED\): start it, or fix the host and port in DATABASE_URL/);
  oneClearLine(malformedPort, /DATABASE_URL is malformed .*: write it as postgres:\/\/user:password@host:5432\/database/);
  oneClearLine(malformedEscape, /DATABASE_URL is malformed .*percent-encoded/);
  oneClearLine(readOnlyDir, new RegExp(`DATA_DIR ${readOnly} is not writable \\(EACCES\\): .*give the service's user write access`));
  oneClearLine(underAFile, /DATA_DIR .*a-file\/data cannot be created \(ENOTDIR\)/);
  oneClearLine(cliUnreachable, /cannot reach the PostgreSQL server at 127\.0\.0\.1:1/);
  oneClearLine(cliReadOnly, /is not writable \(EACCES\)/);
  for (const r of [unreachable, malformedPort, malformedEscape, cliUnreachable]) expect(r.out).not.toContain("hunter2");
  // Nothing was created on the way.
  expect(existsSync(join(readOnly, "content-service.lock"))).toBe(false);
}, 60_000);

// The embedded pass needs no PostgreSQL server (Node and npm are enough): this case asks the
// server of the PostgreSQL pass for a database it does not have.
test.skipIf(pgUrl === null)(
  "a database that does not exist is one line naming it and the createdb that fixes it, exit code 2 (PostgreSQL only: needs DATABASE_URL)",
  async () => {
    const missing = `cms_missing_${crypto.randomUUID().replaceAll("-", "")}`;
    const url = new URL(pgUrl ?? "");
    url.pathname = `/${missing}`;
    const noDatabase = await start({ DATABASE_URL: url.toString() });
    oneClearLine(noDatabase, new RegExp(`database "${missing}" does not exist on the PostgreSQL server at .*: create it \\(createdb ${missing}`));
  },
  30_000,
);
