// Files of the media library's local storage (DATA_DIR/media): written atomically (a temporary
// file renamed into place, so a reader never sees half an object), read whole, removed. node:fs
// runs on Bun, Node and Deno alike.
import { mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname } from "node:path";

export async function writeFileAtomic(path: string, bytes: Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${crypto.randomUUID()}.tmp`;
  await writeFile(tmp, bytes);
  await rename(tmp, path);
}

/** The file's bytes; null when it does not exist. */
export async function readFileOrNull(path: string): Promise<Uint8Array | null> {
  try {
    const b = await readFile(path);
    return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  } catch (err) {
    if ((err as { code?: unknown }).code === "ENOENT") return null;
    throw err;
  }
}

export async function fileExists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Removes a file or a folder and what it holds; nothing when absent. */
export async function removePath(path: string): Promise<void> {
  await rm(path, { recursive: true, force: true });
}
