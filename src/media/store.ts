// The media storage an app uses: the one its dependencies give (createApp makes the configured
// driver once per app; tests give their own).
import type { Config } from "../config";
import type { AppDeps } from "../core/deps";
import type { MediaStorage } from "../core/storage";
import { diskStorage } from "./storage/disk";
import { s3Storage } from "./storage/s3";

/** The configured driver: S3 when MEDIA_S3_* is set, else files under DATA_DIR. */
export function createMediaStorage(config: Config, fetch: typeof globalThis.fetch): MediaStorage {
  const { s3 } = config.media;
  return s3 ? s3Storage(s3, fetch) : diskStorage(config.dataDir);
}

/** The app's storage; a service called outside an app (a script) gets the configured driver. */
export const mediaStorage = (deps: AppDeps): MediaStorage => deps.mediaStorage ?? createMediaStorage(deps.config, deps.fetch);
