import { join } from "node:path";
import { type DbHandle, openDb } from "../db/client";
import { runMigrations } from "../db/migrate";
import type { Config } from "./config";
import type { AppDeps } from "./core/deps";
import { createLogger, type Logger } from "./lib/log";
import { createKeyRing, generateKeyEntry, type KeyRing, loadKeyFile, parseKeyEntries } from "./lib/seal";
import { upgradeFieldIndexes } from "./model/indexes";
import type { RuntimeAssets } from "./platform/embedded-bun";

/**
 * Opens and migrates the configured database (per-project field indexes of an older database
 * replaced by shared ones) and assembles the app's dependencies.
 * `holder` names this process to another one that finds the embedded DATA_DIR locked;
 * `prependNewKey` adds a new current key to the DATA_DIR key file, only once the lock is held.
 */
export async function openRuntime(config: Config, assets: RuntimeAssets = {}, opts: { holder?: string; prependNewKey?: boolean } = {}): Promise<AppDeps> {
  const log = createLogger(config.logLevel);
  const dbHandle: DbHandle = await openDb({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.dbPoolSize,
    preparedStatements: config.databasePreparedStatements,
    pglite: assets.pglite,
    holder: opts.holder,
    onUnguarded: () => log.warn("no file locks on this platform: DATA_DIR is not guarded against a second process; run one process per DATA_DIR", { data_dir: config.dataDir }),
  });
  try {
    await runMigrations(dbHandle, assets.migrationsFolder);
    await upgradeFieldIndexes(dbHandle.db);
    const keyRing = await openKeyRing(config, log, { prependNew: opts.prependNewKey });
    return { config, db: dbHandle.db, dbHandle, fetch: globalThis.fetch, now: () => new Date(), log, keyRing };
  } catch (err) {
    await dbHandle.close().catch(() => {}); // releases the DATA_DIR lock too
    throw err;
  }
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
