#!/usr/bin/env node
// Builds the studio (studio/dist) with Vite when it is missing or stale. Stale: the SHA-256 over
// the sources (index.html, vite.config.ts, src/**, the repo's package-lock.json) differs from the
// one the last build recorded in dist/.build-hash. Prints one line; exits non-zero when the build fails.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

const studio = fileURLToPath(new URL(".", import.meta.url));
const repo = join(studio, "..");
const dist = join(studio, "dist");
const hashFile = join(dist, ".build-hash");

/** Every file under dir, recursively, as absolute paths. */
function walk(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? walk(p) : e.isFile() ? [p] : [];
  });
}

/** The hash of the inputs: each file's repo-relative path and contents, in sorted order. */
function sourceHash() {
  const files = [join(studio, "index.html"), join(studio, "vite.config.ts"), join(repo, "package-lock.json"), ...walk(join(studio, "src"))]
    .filter((f) => existsSync(f))
    .map((f) => ({ f, name: relative(repo, f).split(sep).join("/") }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const h = createHash("sha256");
  for (const { f, name } of files) {
    const body = readFileSync(f);
    h.update(`${name}\0${body.length}\0`);
    h.update(body);
  }
  return h.digest("hex");
}

const wanted = sourceHash();
const recorded = existsSync(hashFile) ? readFileSync(hashFile, "utf8").trim() : null;
if (recorded === wanted && existsSync(join(dist, "index.html"))) {
  console.log("studio: up to date");
  process.exit(0);
}

const started = performance.now();
try {
  const { build } = await import("vite");
  await build({ configFile: join(studio, "vite.config.ts"), root: studio, logLevel: "warn", mode: "production" });
  writeFileSync(hashFile, `${wanted}\n`);
  console.log(`studio: built in ${Math.round(performance.now() - started)} ms`);
} catch (err) {
  console.error(`studio: build failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
