// The media storage an app uses: the one its dependencies give (tests), else the configured driver,
// made once per configuration.
import type { AppDeps } from "../core/deps";
import type { MediaStorage } from "../core/storage";
import { diskStorage } from "./storage/disk";
import { s3Storage } from "./storage/s3";

const made = new WeakMap<object, MediaStorage>();

export function mediaStorage(deps: AppDeps): MediaStorage {
  if (deps.mediaStorage) return deps.mediaStorage;
  let storage = made.get(deps.config);
  if (!storage) {
    const { s3 } = deps.config.media;
    storage = s3 ? s3Storage(s3, deps.fetch) : diskStorage(deps.config.dataDir);
    made.set(deps.config, storage);
  }
  return storage;
}
