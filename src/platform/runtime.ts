// The runtime, decided once at start-up: every module in src/platform/ branches on this value and
// nothing else. Bun-only modules (bun:ffi, Bun.serve, the compiled binary's assets) are imported
// dynamically behind it, so Node and Deno never load them.
export type RuntimeName = "bun" | "deno" | "node";

export const runtime: RuntimeName = "Bun" in globalThis ? "bun" : "Deno" in globalThis ? "deno" : "node";
