// Temporary files for request bodies received to disk (uploads): created private (0600, never an
// existing file), written chunk by chunk, seen as a File backed by the file (Bun.file and Node's
// openAsBlob read it lazily; elsewhere it is read once), and removed. node:fs runs on all three runtimes.
import * as fs from "node:fs";
import { type FileHandle, open, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runtime } from "./runtime";

export interface TempFile {
  readonly path: string;
  write(chunk: Uint8Array): Promise<void>;
  /** Closes the file for writing: the File (name and type as given) its bytes are read from. */
  close(name: string, type: string): Promise<File>;
  /** Closes it if still open and removes it; never throws. */
  remove(): Promise<void>;
}

/** A new empty file in the OS's temporary folder (TMPDIR), named `<prefix><random>`. */
export async function createTempFile(prefix: string): Promise<TempFile> {
  const path = join(tmpdir(), `${prefix}${crypto.randomUUID()}`);
  let handle: FileHandle | null = await open(path, "wx", 0o600);
  const closeHandle = async (): Promise<void> => {
    const h = handle;
    handle = null;
    await h?.close();
  };
  return {
    path,
    async write(chunk) {
      if (!handle) throw new Error("temporary file already closed");
      let at = 0;
      while (at < chunk.byteLength) at += (await handle.write(chunk, at, chunk.byteLength - at)).bytesWritten;
    },
    async close(name, type) {
      await closeHandle();
      return fileAt(path, name, type);
    },
    async remove() {
      await closeHandle().catch(() => {});
      await rm(path, { force: true }).catch(() => {});
    },
  };
}

async function fileAt(path: string, name: string, type: string): Promise<File> {
  if (runtime === "bun") return new File([Bun.file(path)], name, { type });
  const openAsBlob = (fs as { openAsBlob?: (p: string) => Promise<Blob> }).openAsBlob;
  if (openAsBlob) return new File([await openAsBlob(path)], name, { type });
  return new File([await readFile(path)], name, { type });
}
