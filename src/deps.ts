import type { Db, DbHandle } from "../db/client";
import type { Config } from "./config";
import type { Logger } from "./lib/log";

/** Everything the app needs from outside; tests build it with their own database and vendors. */
export interface AppDeps {
  readonly config: Config;
  readonly db: Db;
  readonly dbHandle: DbHandle;
  readonly fetch: typeof fetch;
  readonly now: () => Date;
  readonly log: Logger;
}
