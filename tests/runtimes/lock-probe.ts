// Run by tests/runtimes-lock.test.ts under Bun, Node and Deno: takes the DATA_DIR lock of argv[2]
// as argv[3], prints "locked" and holds it until killed, or prints the refusal and exits 3.
import { DataDirLockedError, lockDataDir } from "../../db/lock";

try {
  const lock = await lockDataDir(process.argv[2] ?? "", process.argv[3] ?? "probe");
  console.log(lock ? "locked" : "unguarded");
  setInterval(() => {}, 60_000);
} catch (err) {
  console.log(err instanceof DataDirLockedError ? `refused: ${err.message}` : `error: ${String(err)}`);
  process.exit(3);
}
