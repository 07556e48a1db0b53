// Files of the media library's local storage (DATA_DIR/media): written atomically (a temporary
// file renamed into place, so a reader never sees half an object), read whole or streamed by
// range, removed. node:fs runs on Bun, Node and Deno alike.
import { type FileHandle, mkdir, open, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
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

/** The file's size in bytes; null when it does not exist. */
export async function fileSize(path: string): Promise<number | null> {
  try {
    return (await stat(path)).size;
  } catch (err) {
    if ((err as { code?: unknown }).code === "ENOENT") return null;
    throw err;
  }
}

const CHUNK = 64 * 1024;

/**
 * Bytes start…end (inclusive) of a file, read a chunk at a time as the consumer pulls: a reader
 * that stalls holds one chunk, never the file. The file is opened on the first pull and closed at
 * the end or on cancel (a reader that went away).
 */
export function fileRangeStream(path: string, start: number, end: number): ReadableStream<Uint8Array> {
  let handle: FileHandle | null = null;
  let at = start;
  const close = async (): Promise<void> => {
    const h = handle;
    handle = null;
    await h?.close().catch(() => {});
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const want = Math.min(CHUNK, end + 1 - at);
        if (want <= 0) {
          await close();
          controller.close();
          return;
        }
        handle ??= await open(path, "r");
        const buf = new Uint8Array(want);
        const { bytesRead } = await handle.read(buf, 0, want, at);
        if (bytesRead === 0) {
          await close();
          controller.error(new Error("the file ended before the range"));
          return;
        }
        at += bytesRead;
        controller.enqueue(bytesRead === want ? buf : buf.subarray(0, bytesRead));
      },
      cancel: close,
    },
    { highWaterMark: 0 },
  );
}
