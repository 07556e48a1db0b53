import { fileURLToPath } from "node:url";
import type { PgliteDatabase } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import type { PostgresJsDatabase } from "drizzle-orm/postgres-js";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import type { DbHandle } from "./client";

export const MIGRATIONS_FOLDER = fileURLToPath(new URL("./migrations", import.meta.url));
const MIGRATION_LOCK = 0x636d7331; // "cms1"

/** Applies db/migrations; several instances starting at once serialise on an advisory lock. */
export async function runMigrations(handle: DbHandle, folder: string = MIGRATIONS_FOLDER): Promise<void> {
  await handle.withLock(MIGRATION_LOCK, async (db) => {
    if (handle.driver === "pglite") await migratePglite(db as unknown as PgliteDatabase, { migrationsFolder: folder });
    else await migratePostgres(db as unknown as PostgresJsDatabase, { migrationsFolder: folder });
  });
}
