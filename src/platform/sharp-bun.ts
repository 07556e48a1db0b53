// Bun only (loaded by sharp.ts on Bun): sharp inside the single binary. The binary embeds sharp's
// CommonJS build, whose `require` of the native addon the bundler follows (the addon is embedded
// and unpacked by Bun when loaded), and libvips, which the addon needs: it is written to a private
// temporary folder and loaded first, so the addon's `libvips-cpp.so.*` dependency is found already loaded
// (the dynamic linker matches it by its SONAME) instead of along the addon's RPATH, which points
// into a node_modules the binary does not have.
import { dlopen } from "bun:ffi";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
// The SONAME of the libvips that @img/sharp-linux-x64 is linked against (readelf -d): a sharp
// upgrade that changes it fails the build here, not at run time.
import libvipsPath from "../../node_modules/@img/sharp-libvips-linux-x64/lib/libvips-cpp.so.8.18.7" with { type: "file" };

const LIBVIPS_SONAME = "libvips-cpp.so.8.18.7";

/** sharp as the binary carries it; null when not running as a compiled binary (node_modules then serves). */
export async function compiledSharp(): Promise<unknown> {
  if (!import.meta.url.includes("$bunfs")) return null;
  if (process.arch !== "x64") throw new Error(`the single binary carries libvips for x64 only, not ${process.arch}`);
  // A folder of this process's own (mode 0700, a fresh name): no other user can put a library
  // where it would be loaded. Once loaded, the file is removed: the mapping stays, nothing is left.
  const dir = mkdtempSync(join(tmpdir(), "cms-libvips-"));
  try {
    const lib = join(dir, LIBVIPS_SONAME);
    writeFileSync(lib, await Bun.file(libvipsPath).bytes(), { mode: 0o500 });
    // Any symbol will do (bun:ffi wants one); the library stays loaded for the process's lifetime.
    dlopen(lib, { vips_version: { args: ["int"], returns: "int" } });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const m = (await import("../../node_modules/sharp/dist/index.cjs")) as { default?: unknown };
  return m.default ?? m;
}
