// Preloaded by bun test: one database per run (PGlite in memory, or DATABASE_URL), migrated once.
import { afterAll } from "bun:test";
import { type DbHandle, openDb } from "../db/client";
import { runMigrations } from "../db/migrate";
import { loadConfig } from "../src/config";

declare global {
  var __testDb: Promise<DbHandle> | undefined;
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
