// The cold transform the media library does (issue 26): a 12-megapixel JPEG to an 800-pixel-wide
// WebP with sharp, on whichever runtime runs this file. Prints one JSON line.
// bun bench/media/transform.ts | node --import tsx bench/media/transform.ts | deno run -A --node-modules-dir=manual bench/media/transform.ts
// The single binary's sharp (libvips embedded, src/platform/sharp-bun.ts), compiled the same way:
// bun build --compile --target=bun-linux-x64 bench/media/transform.ts --outfile /tmp/transform && /tmp/transform
import { loadSharp } from "../../src/platform/sharp";

const sharp = await loadSharp();

const ROUNDS = 7;
// A photo-like 4000×3000 JPEG: a gradient under moderate noise (pure noise would be the worst case for the encoder).
const base = await sharp({ create: { width: 4000, height: 3000, channels: 3 as const, background: { r: 0, g: 0, b: 0 }, noise: { type: "gaussian" as const, mean: 120, sigma: 18 } } })
  .composite([
    {
      input: await sharp({ create: { width: 4000, height: 3000, channels: 4, background: { r: 30, g: 90, b: 200, alpha: 0.5 } } })
        .png()
        .toBuffer(),
    },
  ])
  .jpeg({ quality: 85 })
  .toBuffer();
const times: number[] = [];
let out = 0;
for (let i = 0; i < ROUNDS; i++) {
  const t0 = performance.now();
  const webp = await sharp(base).autoOrient().resize({ width: 800 }).webp({ quality: 75 }).toBuffer();
  times.push(performance.now() - t0);
  out = webp.length;
}
times.sort((a, b) => a - b);
const runtime = "Deno" in globalThis ? "deno" : "Bun" in globalThis ? (import.meta.url.includes("$bunfs") ? "bun-binary" : "bun") : "node";
console.log(
  JSON.stringify({
    runtime,
    version: process.versions[runtime === "node" ? "node" : runtime === "deno" ? "deno" : "bun"] ?? null,
    vips: sharp.versions.vips,
    input_bytes: base.length,
    output_bytes: out,
    median_ms: Math.round(times[Math.floor(ROUNDS / 2)] ?? 0),
    min_ms: Math.round(times[0] ?? 0),
  }),
);
