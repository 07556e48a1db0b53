// The runtime, decided once at start-up: every module in src/platform/ branches on this value and
// nothing else. Bun-only modules (bun:ffi, Bun.serve, the compiled binary's assets) are imported
// dynamically behind it, so Node and Deno never load them.
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";

export type RuntimeName = "bun" | "deno" | "node";

export const runtime: RuntimeName = "Bun" in globalThis ? "bun" : "Deno" in globalThis ? "deno" : "node";

/**
 * Whether the module of `meta` is the program's entry point: `import.meta.main` on Bun and Deno
 * (Node has it only from 24), else the script path Node (or tsx) was started with.
 */
export function isEntry(meta: ImportMeta): boolean {
  const main = (meta as { main?: boolean }).main;
  if (typeof main === "boolean") return main;
  const script = process.argv[1];
  return script !== undefined && realpathSync(script) === fileURLToPath(meta.url);
}
