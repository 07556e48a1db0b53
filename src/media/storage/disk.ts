// The local disk driver: DATA_DIR/media/<key>. The embedded default, nothing to configure.
import { join } from "node:path";
import type { MediaStorage } from "../../core/storage";
import { fileExists, fileRangeStream, fileSize, readFileOrNull, removePath, writeFileAtomic } from "../../platform/disk";

export function diskStorage(dataDir: string): MediaStorage {
  const root = join(dataDir, "media");
  const pathOf = (key: string): string => {
    // Keys are made by storage.ts from a hex hash and variant names; never a path that climbs out.
    if (key.split("/").some((s) => s === ".." || s === "")) throw new Error("invalid storage key");
    return join(root, key);
  };
  return {
    driver: "disk",
    put: async (key, bytes) => {
      const path = pathOf(key);
      if (!(await fileExists(path))) await writeFileAtomic(path, bytes);
    },
    get: (key) => readFileOrNull(pathOf(key)),
    open: async (key) => {
      const path = pathOf(key);
      const size = await fileSize(path);
      return size === null ? null : { size, read: (start, end) => fileRangeStream(path, start, end) };
    },
    has: (key) => fileExists(pathOf(key)),
    removePrefix: (prefix) => removePath(join(root, prefix.replace(/\/+$/, ""))),
  };
}
