import { openDb, type DbHandle } from "../db/client";
import { runMigrations } from "../db/migrate";
import type { Config } from "./config";
import type { AppDeps } from "./deps";
import type { RuntimeAssets } from "./embedded";
import { join } from "node:path";
import { createLogger, type Logger } from "./lib/log";
import { createKeyRing, generateKeyEntry, type KeyRing, loadKeyFile, parseKeyEntries } from "./lib/seal";

/** Opens and migrates the configured database and assembles the app's dependencies. */
export async function openRuntime(config: Config, assets: RuntimeAssets = {}): Promise<AppDeps> {
  const dbHandle: DbHandle = await openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: config.dbPoolSize, pglite: assets.pglite });
  await runMigrations(dbHandle, assets.migrationsFolder);
  const log = createLogger(config.logLevel);
  return {
    config,
    db: dbHandle.db,
    dbHandle,
    fetch: globalThis.fetch,
    now: () => new Date(),
    log,
    keyRing: await openKeyRing(config, log),
  };
}

/**
 * SECRET_KEYS when set; otherwise DATA_DIR/secret.key (created 0600 on first start);
 * an in-memory database gets an ephemeral key, since nothing it seals outlives the process.
 */
async function openKeyRing(config: Config, log: Logger, opts: { prependNew?: boolean } = {}): Promise<KeyRing> {
  if (config.secretKeys) return createKeyRing(parseKeyEntries(config.secretKeys));
  if (config.databaseUrl === "memory://") return createKeyRing(parseKeyEntries([generateKeyEntry()]));
  const path = join(config.dataDir, "secret.key");
  const { entries, created } = loadKeyFile(path, opts);
  if (created) log.info("generated the provider key sealing key", { path });
  if (config.databaseUrl) log.warn("SECRET_KEYS is unset: sealing provider keys with the local key file; instances sharing this database need the same SECRET_KEYS", { path });
  return createKeyRing(parseKeyEntries(entries));
}
