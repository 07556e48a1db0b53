import type { Db, DbHandle } from "../../db/client";
import type { Config } from "../config";
import type { Logger } from "../lib/log";
import type { KeyRing } from "../lib/seal";
import type { Slots } from "../lib/slots";
import type { Resolver } from "../lib/ssrf";
import type { WorkQueue } from "../lib/work-queue";
import type { MediaStorage } from "./storage";

/** Everything the app needs from outside; tests build it with their own database and vendors. */
export interface AppDeps {
  readonly config: Config;
  readonly db: Db;
  readonly dbHandle: DbHandle;
  readonly fetch: typeof fetch;
  readonly now: () => Date;
  readonly log: Logger;
  /** Seals and opens provider API keys (SECRET_KEYS or the DATA_DIR key file). */
  readonly keyRing: KeyRing;
  /** DNS for the outbound URL guard; defaults to the system resolver. */
  readonly resolveHost?: Resolver;
  /** Where media bytes live; by default the configured driver (MEDIA_STORAGE), made once by createApp. */
  readonly mediaStorage?: MediaStorage;
  /** The AI vendor calls in flight per project (AI_MAX_CONCURRENT_PER_PROJECT); createApp makes one per app. */
  readonly aiSlots?: Slots;
  /** Image variant renders of this app, delivery's and the uploads' (MEDIA_RENDER_CONCURRENCY, MEDIA_RENDER_QUEUE); createApp makes one per app. */
  readonly renderQueue?: WorkQueue;
}
