// Files, standard input and compression, on each runtime. Bun reads through Bun.file (which also
// reads the single binary's embedded files, $bunfs) and gzips natively; Node and Deno use node:fs
// and node:zlib. The single binary's embedded assets are Bun's alone (embedded-bun.ts).
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import explorerPackage from "../../node_modules/@scalar/api-reference/package.json" with { type: "json" };
import type { RuntimeAssets } from "./embedded-bun";
import { runtime } from "./runtime";

/** The explorer's script (a pinned dependency served by the service) and its version. */
export const explorerAsset = {
  version: explorerPackage.version,
  path: async (): Promise<string> =>
    runtime === "bun" ? (await import("./embedded-bun")).explorerScriptPath : fileURLToPath(new URL("../../node_modules/@scalar/api-reference/dist/browser/standalone.js", import.meta.url)),
} as const;

/** What the single binary embeds (PGlite's files, the migrations); nothing on another runtime. */
export async function compiledAssets(): Promise<RuntimeAssets> {
  return runtime === "bun" ? (await import("./embedded-bun")).compiledAssets() : {};
}

/** The studio's packed files when this is the single binary (embedded-bun.ts); null elsewhere. */
export async function embeddedStudioPack(): Promise<string | null> {
  return runtime === "bun" ? (await import("./embedded-bun")).embeddedStudioPack() : null;
}

export async function readBytes(path: string): Promise<Uint8Array<ArrayBuffer>> {
  if (runtime === "bun") return Bun.file(path).bytes();
  const b = await readFile(path);
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength) as Uint8Array<ArrayBuffer>;
}

/** A file as a response body: streamed from disk by Bun, read whole elsewhere. */
export async function fileBody(path: string): Promise<BodyInit> {
  return runtime === "bun" ? Bun.file(path) : readBytes(path);
}

export function gzip(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  if (runtime === "bun") return Bun.gzipSync(bytes as Uint8Array<ArrayBuffer>);
  const b = gzipSync(bytes);
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength) as Uint8Array<ArrayBuffer>;
}

/** All of standard input as text. */
export async function stdinText(): Promise<string> {
  if (runtime === "bun") return Bun.stdin.text();
  const chunks: Uint8Array[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Uint8Array);
  return new TextDecoder().decode(Buffer.concat(chunks));
}
