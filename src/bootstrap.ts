import type { Db } from "../db/client";
import { systemState } from "../db/schema";
import type { Config } from "./config";
import { seedDemo } from "./demo";
import { createAdminKey } from "./keys/service";
import { generateToken } from "./lib/tokens";
import { createUser } from "./users/service";

/**
 * First start of an empty database: the owner user, a root admin key and the demo project.
 * Runs exactly once per database: the marker row is inserted in the same transaction.
 */
export async function bootstrap(db: Db, config: Config, now: Date) {
  return db.transaction(async (tx) => {
    const inserted = await tx
      .insert(systemState)
      .values({ key: "bootstrapped", value: { at: now.toISOString() } })
      .onConflictDoNothing()
      .returning({ key: systemState.key });
    if (inserted.length === 0) return null;
    const email = config.adminEmail ?? "admin@localhost";
    const password = config.adminPassword ?? generateToken("cms_cs_").slice(7, 31);
    await createUser(tx, { email, password, role: "owner" }, now);
    const { plaintext } = await createAdminKey(tx, { name: "root" }, null, now, config.adminToken ?? undefined);
    if (config.seedDemo) await seedDemo(tx, now);
    // The password and key only when generated here: never echo what the operator supplied.
    return { email, password: config.adminPassword ? null : password, rootKey: config.adminToken ? null : plaintext };
  });
}
