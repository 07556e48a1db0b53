// One process at a time on an embedded data directory: an exclusive flock(2) on
// DATA_DIR/content-service.lock, taken before PGlite opens the files and held (file descriptor
// kept open) for the life of the handle. The kernel drops the lock when the process dies, however
// it dies (kill -9 included), so a stale lock cannot exist; no pid file, no staleness heuristics.
// Bun has no flock in node:fs, so it is called from libc through bun:ffi (works in `bun run` and in
// the `bun build --compile` binary; distroless/cc and every glibc or musl Linux has it).
import { closeSync, ftruncateSync, openSync, readFileSync, writeSync } from "node:fs";
import { join, resolve } from "node:path";

export const LOCK_FILE = "content-service.lock";

/** Another live process holds the data directory. */
export class DataDirLockedError extends Error {
  constructor(
    readonly dir: string,
    readonly holder: string,
  ) {
    super(`DATA_DIR ${dir} is in use by ${holder}; one process at a time may open an embedded data directory`);
  }
}

/** The directory cannot be used at all (missing permission, read-only file system, no lock support). */
export class DataDirUnusableError extends Error {}

export interface DataDirLock {
  readonly path: string;
  release(): void;
}

interface Flock {
  flock(fd: number): "ok" | "held" | { errno: number };
}

const LOCK_EX = 2;
const LOCK_NB = 4;
const EINTR = 4;
const EWOULDBLOCK: Record<string, number> = { linux: 11, darwin: 35, freebsd: 35 };

// The loading promise itself is kept: two locks taken at once both wait for the one load (a
// `null` set while loading made the second one think the platform had no flock).
let flockLoad: Promise<Flock | null> | undefined;
const loadFlock = (): Promise<Flock | null> => (flockLoad ??= openFlock());

async function openFlock(): Promise<Flock | null> {
  const errnoSymbol = process.platform === "linux" ? "__errno_location" : process.platform === "darwin" || process.platform === "freebsd" ? "__error" : null;
  if (!errnoSymbol || typeof Bun === "undefined") return null;
  const ffi = await import("bun:ffi");
  const names = process.platform === "linux" ? ["libc.so.6", "libc.musl-x86_64.so.1", "libc.musl-aarch64.so.1", "libc.so"] : ["libc.dylib", "libc.so.7"];
  for (const name of names) {
    try {
      const lib = ffi.dlopen(name, {
        flock: { args: [ffi.FFIType.i32, ffi.FFIType.i32], returns: ffi.FFIType.i32 },
        [errnoSymbol]: { args: [], returns: ffi.FFIType.ptr },
      });
      const errnoPtr = lib.symbols[errnoSymbol] as () => number | null;
      const wouldBlock = EWOULDBLOCK[process.platform];
      return {
        flock(fd) {
          for (;;) {
            if (lib.symbols.flock(fd, LOCK_EX | LOCK_NB) === 0) return "ok";
            const p = errnoPtr();
            const errno = p ? ffi.read.i32(p as never, 0) : -1;
            if (errno === EINTR) continue;
            return errno === wouldBlock ? "held" : { errno };
          }
        },
      };
    } catch {
      // try the next name
    }
  }
  return null;
}

/**
 * Takes the exclusive lock on `dir` for `holder` (e.g. "the service on port 3000"), or throws
 * DataDirLockedError naming the live holder. Returns null only on a platform without flock
 * (the caller logs that the directory is unguarded).
 */
export async function lockDataDir(dir: string, holder: string): Promise<DataDirLock | null> {
  const abs = resolve(dir);
  const path = join(abs, LOCK_FILE);
  const impl = await loadFlock();
  if (!impl) return null;
  let fd: number;
  try {
    fd = openSync(path, "a+", 0o600);
  } catch (err) {
    throw new DataDirUnusableError(
      `DATA_DIR ${abs} is not writable (${(err as NodeJS.ErrnoException).code ?? String(err)}): create it and give the service's user write access, or set DATA_DIR to a writable directory`,
    );
  }
  const got = impl.flock(fd);
  if (got !== "ok") {
    closeSync(fd);
    if (got === "held") throw new DataDirLockedError(abs, describeHolder(path));
    throw new DataDirUnusableError(`DATA_DIR ${abs}: cannot lock ${LOCK_FILE} (errno ${got.errno}); the embedded database needs a local file system with file locks`);
  }
  // Ours now: say who we are, for the message the next process prints.
  const info = JSON.stringify({ pid: process.pid, holder, since: new Date().toISOString() });
  ftruncateSync(fd, 0);
  writeSync(fd, `${info}\n`, 0);
  let released = false;
  return {
    path,
    release() {
      if (released) return;
      released = true;
      try {
        ftruncateSync(fd, 0);
      } catch {
        /* best effort: the lock, not the text, is what counts */
      }
      closeSync(fd); // closing the descriptor releases the flock
    },
  };
}

function describeHolder(path: string): string {
  // The holder writes its line right after locking; a reader can catch the file empty for an instant.
  for (let i = 0; i < 20; i++) {
    try {
      const text = readFileSync(path, "utf8").trim();
      if (text) {
        const { pid, holder } = JSON.parse(text) as { pid?: number; holder?: string };
        return `${holder ?? "another process"} (pid ${pid ?? "unknown"})`;
      }
    } catch {
      /* retry */
    }
    Bun.sleepSync(5);
  }
  return "another process (pid unknown)";
}
