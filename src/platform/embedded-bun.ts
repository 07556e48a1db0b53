// Bun only (loaded by files.ts on Bun): what the single executable (`bun build --compile`) carries
// inside itself. PGlite looks for its WASM and data files next to its module, which does not exist
// inside the compiled binary, so they are embedded here and handed to it explicitly; the migrations
// are embedded too (SQL as assets, the journal as a module) and unpacked to a temporary folder.
// So are the bundles of the contrib extensions search needs (pg_trgm, unaccent: migration 0017).
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Extension } from "@electric-sql/pglite";
import type { OpenDbOptions } from "../../db/client";
import journal from "../../db/migrations/meta/_journal.json" with { type: "json" };
import initdbWasmPath from "../../node_modules/@electric-sql/pglite/dist/initdb.wasm" with { type: "file" };
import pgTrgmPath from "../../node_modules/@electric-sql/pglite/dist/pg_trgm.tar.gz" with { type: "file" };
import pgliteDataPath from "../../node_modules/@electric-sql/pglite/dist/pglite.data" with { type: "file" };
import pgliteWasmPath from "../../node_modules/@electric-sql/pglite/dist/pglite.wasm" with { type: "file" };
import unaccentPath from "../../node_modules/@electric-sql/pglite/dist/unaccent.tar.gz" with { type: "file" };
// The API explorer's script (a pinned dependency), served by the service itself: no CDN at run time.
import explorerScript from "../../node_modules/@scalar/api-reference/dist/browser/standalone.js" with { type: "file" };

/** What the single binary embeds for the database: PGlite's files and the migrations. */
export type RuntimeAssets = Pick<OpenDbOptions, "pglite"> & { migrationsFolder?: string };

/** The explorer's bundle: a path, inside $bunfs when compiled. */
export const explorerScriptPath: string = explorerScript;

export async function compiledAssets(): Promise<RuntimeAssets> {
  if (!import.meta.url.includes("$bunfs") && Bun.embeddedFiles.length === 0) return {};
  const [pgliteWasmModule, initdbWasmModule] = await Promise.all([pgliteWasmPath, initdbWasmPath].map(async (path) => WebAssembly.compile(await Bun.file(path).arrayBuffer())));
  const fsBundle = new Blob([await Bun.file(pgliteDataPath).arrayBuffer()]);
  const extensions = { pg_trgm: await embeddedExtension("pg_trgm", pgTrgmPath), unaccent: await embeddedExtension("unaccent", unaccentPath) };
  return { pglite: { pgliteWasmModule, initdbWasmModule, fsBundle, extensions }, migrationsFolder: await unpackMigrations() };
}

/**
 * A PGlite extension whose bundle is embedded: PGlite streams a bundle from its path with
 * node:fs, which cannot open $bunfs files, so the bundle is copied to a temporary file first.
 */
async function embeddedExtension(name: string, path: string): Promise<Extension> {
  const file = join(mkdtempSync(join(tmpdir(), "cms-pglite-")), `${name}.tar.gz`);
  writeFileSync(file, new Uint8Array(await Bun.file(path).arrayBuffer()));
  return { name, setup: async () => ({ bundlePath: file as unknown as URL }) };
}

/** The studio's built files, packed into one embedded file (src/studio/pack.ts); null outside the single binary. */
export async function embeddedStudioPack(): Promise<string | null> {
  const pack = Bun.embeddedFiles.find((f) => (f as Blob & { name: string }).name === "studio.pack");
  return pack ? pack.text() : null;
}

async function unpackMigrations(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "cms-migrations-"));
  mkdirSync(join(dir, "meta"));
  writeFileSync(join(dir, "meta", "_journal.json"), JSON.stringify(journal));
  const files = new Map(Bun.embeddedFiles.map((f) => [(f as Blob & { name: string }).name, f]));
  for (const entry of journal.entries) {
    const file = files.get(`${entry.tag}.sql`);
    if (!file) throw new Error(`migration ${entry.tag}.sql is not embedded in this binary`);
    writeFileSync(join(dir, `${entry.tag}.sql`), await file.text());
  }
  return dir;
}
