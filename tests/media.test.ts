// The media suite over the local disk driver (MEDIA_STORAGE unset: DATA_DIR/media), read back from the files.
import { existsSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, sep } from "node:path";
import { mediaSuite } from "./media.suite";

const dataDir = mkdtempSync(join(tmpdir(), "media-disk-"));
// Every request of app.handle comes from one address: the suite renders more than a visitor's minute allows.
const env = { DATA_DIR: dataDir, MEDIA_ALLOW_PRIVATE_URLS: "true", MEDIA_MAX_BYTES: String(1024 * 1024), MEDIA_RENDER_RATE: "1000" };
const root = join(dataDir, "media");

mediaSuite("local disk", {
  env: () => env,
  keys: async () =>
    existsSync(root)
      ? readdirSync(root, { recursive: true, withFileTypes: true })
          .filter((e) => e.isFile())
          .map((e) =>
            join(e.parentPath, e.name)
              .slice(root.length + 1)
              .split(sep)
              .join("/"),
          )
      : [],
  has: async (key) => existsSync(join(root, key)),
  written: () => null,
});
