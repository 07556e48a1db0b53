// Preloaded by bun test: one database per test process (PGlite in memory, or DATABASE_URL), migrated once.
// Under `bun test --parallel` (tests/run.ts) each worker is a process of its own running files one
// after another: on PGlite it has its own in-memory database anyway; on PostgreSQL it gets a
// database of its own, `<DATABASE_URL's database>_w<pid>`, and DATABASE_URL points at it for the
// worker's files and the processes they start, so files running at once never meet in one database
// (counts across projects, housekeeping, truncations, fixed names). tests/run.ts drops them after the
// run; a worker also drops those whose worker is gone (a run that was interrupted).
import { afterAll } from "bun:test";
import postgres from "postgres";
import { type DbHandle, openDb } from "../db/client";
import { runMigrations } from "../db/migrate";
import { loadConfig } from "../src/config";

declare global {
  var __testDb: Promise<DbHandle> | undefined;
}

/** A process id that is running on this machine (a worker's, for its database's name). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Creates this worker's database beside `base`'s (dropping those of workers gone) and returns its URL. */
async function workerDatabase(base: string): Promise<string> {
  const url = new URL(base);
  const prefix = `${decodeURIComponent(url.pathname.slice(1))}_w`;
  const name = `${prefix}${process.pid}`;
  const admin = postgres(base, { max: 1, onnotice: () => {} });
  try {
    const rows = await admin<{ datname: string }[]>`select datname from pg_database where starts_with(datname, ${prefix})`;
    for (const { datname } of rows) {
      const pid = Number(datname.slice(prefix.length));
      if (!Number.isInteger(pid) || (pid !== process.pid && alive(pid))) continue;
      // Another worker starting now may be dropping the same one.
      await admin.unsafe(`drop database if exists "${datname}" with (force)`).catch(() => {});
    }
    await admin.unsafe(`create database "${name}"`);
  } finally {
    await admin.end();
  }
  url.pathname = `/${name}`;
  return url.toString();
}

const pgUrl = process.env.DATABASE_URL?.startsWith("postgres") ? process.env.DATABASE_URL : null;
// BUN_TEST_WORKER_ID is set in --parallel workers; TEST_WORKER_DATABASE once this process made its
// database (with --isolate the preload runs again for each file, in the same process).
if (pgUrl && process.env.BUN_TEST_WORKER_ID && !process.env.TEST_WORKER_DATABASE) {
  process.env.DATABASE_URL = await workerDatabase(pgUrl);
  process.env.TEST_WORKER_DATABASE = new URL(process.env.DATABASE_URL).pathname.slice(1);
}
const url = process.env.DATABASE_URL?.startsWith("postgres") ? process.env.DATABASE_URL : "memory://";

globalThis.__testDb ??= (async () => {
  // DATABASE_PREPARED_STATEMENTS=false runs the tests on PostgreSQL with no statement prepared, as behind an old pgbouncer.
  const preparedStatements = loadConfig({ DATABASE_PREPARED_STATEMENTS: process.env.DATABASE_PREPARED_STATEMENTS }).databasePreparedStatements;
  const handle = await openDb({ databaseUrl: url, dataDir: "", poolSize: 5, preparedStatements });
  await runMigrations(handle);
  return handle;
})();

afterAll(async () => {
  // Each file's afterAll runs; the process exit closes the pool. Nothing to do per file.
});
