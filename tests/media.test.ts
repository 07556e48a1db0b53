import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { diskStorage } from "../src/media/storage/disk";
import { mediaSuite } from "./media.suite";

const dataDir = mkdtempSync(join(tmpdir(), "media-disk-"));
// Every request of app.handle comes from one address: the suite renders more than a visitor's minute allows.
const env = { DATA_DIR: dataDir, AI_ALLOW_PRIVATE_URLS: "true", MEDIA_MAX_BYTES: String(1024 * 1024), MEDIA_RENDER_RATE: "1000" };

mediaSuite("local disk", {
  env: () => env,
  storage: () => diskStorage(dataDir),
  has: async (key) => await diskStorage(dataDir).has(key),
});
