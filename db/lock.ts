// One process at a time on an embedded data directory: an exclusive POSIX record lock (fcntl) on
// DATA_DIR/content-service.lock.db, taken before PGlite opens the files and held for the life of
// the handle. The kernel drops the lock when the process dies, however it dies (kill -9 included),
// so a stale lock cannot exist; no pid file, no staleness heuristics. The holder describes itself
// in DATA_DIR/content-service.lock (text), for the message the next process prints.
//
// The same lock on every runtime, so a Bun and a Node (or Deno) process exclude each other too:
// Node and Deno have no flock or FFI in node:fs, but node:sqlite (Node >= 22.5, Deno >= 2.2) holds
// SQLite's exclusive lock, which is fcntl locks on the file; Bun has no node:sqlite (and bun:sqlite
// takes no lock another process sees), so it calls lockf(3) from libc through bun:ffi (works in
// `bun run` and in the single binary) over the whole file, which conflicts with SQLite's lock both
// ways. fcntl locks are per process: a second lock of the same directory in this process is refused
// here, by the set below. tests/data-dir-lock.test.ts (Bun), tests/runtimes-lock.test.ts (all three).
import { closeSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

export const LOCK_FILE = "content-service.lock";
/** The file the lock is taken on: an empty SQLite database. */
export const LOCK_DB = "content-service.lock.db";

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

/** "ok" and a release function, "held" by another process, or an errno/message that makes the directory unusable. */
type Attempt = { ok: () => void } | "held" | { problem: string };
type Locker = (path: string) => Attempt;

const F_TLOCK = 2;
const EINTR = 4;
const EACCES = 13;
const EAGAIN: Record<string, number> = { linux: 11, darwin: 35, freebsd: 35 };
const SQLITE_BUSY = 5;

// The loading promise itself is kept: two locks taken at once both wait for the one load (a
// `null` set while loading made the second one think the platform had no lock).
let lockerLoad: Promise<Locker | null> | undefined;
const loadLocker = (): Promise<Locker | null> => (lockerLoad ??= "Bun" in globalThis ? openLockf() : openSqliteLock());
const heldHere = new Set<string>();

async function openLockf(): Promise<Locker | null> {
  const errnoSymbol = process.platform === "linux" ? "__errno_location" : process.platform === "darwin" || process.platform === "freebsd" ? "__error" : null;
  if (!errnoSymbol) return null;
  const ffi = await import("bun:ffi");
  const names = process.platform === "linux" ? ["libc.so.6", "libc.musl-x86_64.so.1", "libc.musl-aarch64.so.1", "libc.so"] : ["libc.dylib", "libc.so.7"];
  for (const name of names) {
    try {
      const lib = ffi.dlopen(name, {
        lockf: { args: [ffi.FFIType.i32, ffi.FFIType.i32, ffi.FFIType.i64], returns: ffi.FFIType.i32 },
        [errnoSymbol]: { args: [], returns: ffi.FFIType.ptr },
      });
      const errnoPtr = lib.symbols[errnoSymbol] as () => number | null;
      const wouldBlock = EAGAIN[process.platform];
      return (path) => {
        const fd = openSync(path, "a+", 0o600); // offset 0: lockf locks from here to the end, and beyond
        for (;;) {
          if (lib.symbols.lockf(fd, F_TLOCK, 0) === 0) return { ok: () => closeSync(fd) }; // closing releases it
          const p = errnoPtr();
          const errno = p ? ffi.read.i32(p as never, 0) : -1;
          if (errno === EINTR) continue;
          closeSync(fd);
          return errno === wouldBlock || errno === EACCES ? "held" : { problem: `errno ${errno}` };
        }
      };
    } catch {
      // try the next name
    }
  }
  return null;
}

async function openSqliteLock(): Promise<Locker | null> {
  let sqlite: typeof import("node:sqlite");
  try {
    sqlite = await import("node:sqlite");
  } catch {
    throw new DataDirUnusableError("the embedded database's DATA_DIR lock needs node:sqlite (Node 22.5 or newer, Deno 2.2 or newer): upgrade the runtime, or set DATABASE_URL");
  }
  return (path) => {
    const db = new sqlite.DatabaseSync(path);
    try {
      // Exclusive locking mode keeps the lock taken by the transaction until the connection closes.
      db.exec("PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; COMMIT;");
      return { ok: () => db.close() };
    } catch (err) {
      db.close();
      const e = err as { errcode?: number; message?: string };
      return e.errcode === SQLITE_BUSY || /database is locked/.test(e.message ?? "") ? "held" : { problem: e.message ?? String(err) };
    }
  };
}

/**
 * Takes the exclusive lock on `dir` for `holder` (e.g. "the service on port 3000"), or throws
 * DataDirLockedError naming the live holder. Returns null only on a platform without file locks
 * (the caller logs that the directory is unguarded).
 */
export async function lockDataDir(dir: string, holder: string): Promise<DataDirLock | null> {
  const abs = resolve(dir);
  const path = join(abs, LOCK_FILE);
  const lockPath = join(abs, LOCK_DB);
  const locker = await loadLocker();
  if (!locker) return null;
  try {
    closeSync(openSync(lockPath, "a+", 0o600));
  } catch (err) {
    throw new DataDirUnusableError(
      `DATA_DIR ${abs} is not writable (${(err as NodeJS.ErrnoException).code ?? String(err)}): create it and give the service's user write access, or set DATA_DIR to a writable directory`,
    );
  }
  if (heldHere.has(abs)) throw new DataDirLockedError(abs, `this process (pid ${process.pid})`);
  const got = locker(lockPath);
  if (got === "held") throw new DataDirLockedError(abs, describeHolder(path));
  if ("problem" in got) throw new DataDirUnusableError(`DATA_DIR ${abs}: cannot lock ${LOCK_DB} (${got.problem}); the embedded database needs a local file system with file locks`);
  heldHere.add(abs);
  // Ours now: say who we are, for the message the next process prints.
  writeFileSync(path, `${JSON.stringify({ pid: process.pid, holder, since: new Date().toISOString() })}\n`, { mode: 0o600 });
  let released = false;
  return {
    path,
    release() {
      if (released) return;
      released = true;
      try {
        writeFileSync(path, "");
      } catch {
        /* best effort: the lock, not the text, is what counts */
      }
      got.ok(); // closing the file (or the SQLite connection) releases the lock
      heldHere.delete(abs);
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
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5); // 5 ms, synchronously
  }
  return "another process (pid unknown)";
}
