// Packs the studio's build (studio/dist) into one file, studio/dist/studio.pack, that the single
// binary embeds (`npm run build`): Bun's compiler bundles an HTML or JS file given to it as an
// entry point, so the built files travel as data inside one file of a type it only embeds.
// Run with `bun src/studio/pack.ts` after the studio is built.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { isEntry } from "../platform/runtime";
import { PACK_NAME, type Pack } from "./assets";

const DIST = fileURLToPath(new URL("../../studio/dist/", import.meta.url));

const walk = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : e.name.startsWith(".") || e.name === PACK_NAME ? [] : [join(dir, e.name)]));

if (isEntry(import.meta)) {
  const files = walk(DIST);
  if (!files.some((f) => relative(DIST, f) === "index.html")) throw new Error("studio/dist/index.html is missing: build the studio first (node studio/build.mjs)");
  const pack: Pack = Object.fromEntries(files.map((f) => [relative(DIST, f), readFileSync(f).toString("base64")]));
  writeFileSync(join(DIST, PACK_NAME), JSON.stringify(pack));
  console.log(`studio: packed ${files.length} files into studio/dist/${PACK_NAME}`);
}
