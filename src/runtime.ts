import { openDb, type DbHandle } from "../db/client";
import { runMigrations } from "../db/migrate";
import type { Config } from "./config";
import type { AppDeps } from "./deps";
import { createLogger } from "./lib/log";

/** Opens and migrates the configured database and assembles the app's dependencies. */
export async function openRuntime(config: Config): Promise<AppDeps> {
  const dbHandle: DbHandle = await openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: config.dbPoolSize });
  await runMigrations(dbHandle);
  return {
    config,
    db: dbHandle.db,
    dbHandle,
    fetch: globalThis.fetch,
    now: () => new Date(),
    log: createLogger(config.logLevel),
  };
}
