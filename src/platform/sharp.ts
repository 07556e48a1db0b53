// sharp (libvips, native) on each runtime. From the sources, Bun, Node and Deno load it from
// node_modules. The single binary (`bun build --compile`) cannot: sharp resolves its addon with a
// runtime `require` from node_modules, so there the Bun-only sharp-bun.ts loads the copy the
// binary embeds.
import type sharp from "sharp";
import { runtime } from "./runtime";

export type SharpFn = typeof sharp;

/** sharp's default export, loaded on first call. Throws when it cannot be loaded here. */
export async function loadSharp(): Promise<SharpFn> {
  // Only inside the binary: sharp-bun.ts names x64 libvips by path, which other machines' node_modules lack.
  if (runtime === "bun" && import.meta.url.includes("$bunfs")) {
    const compiled = await (await import("./sharp-bun")).compiledSharp();
    if (compiled !== null) return compiled as SharpFn;
  }
  const m = await import("sharp");
  return (m.default ?? m) as unknown as SharpFn;
}
