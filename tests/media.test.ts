import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { diskStorage } from "../src/media/storage/disk";
import { mediaSuite } from "./media.suite";

const dataDir = mkdtempSync(join(tmpdir(), "media-disk-"));
const env = { DATA_DIR: dataDir, MEDIA_ALLOW_PRIVATE_URLS: "true", MEDIA_MAX_BYTES: String(1024 * 1024) };

mediaSuite("local disk", {
  env: () => env,
  storage: () => diskStorage(dataDir),
  has: async (key) => await diskStorage(dataDir).has(key),
});
