// Log lines to stdout in batches: lines are written together at most FLUSH_MS after the first of
// them (or as soon as 64 KiB are pending), so a busy server pays one system call per batch instead
// of one per request. Pending lines are written when the process exits (process.exit included);
// kill -9 loses at most the last few milliseconds of lines.

const MAX_PENDING_CHARS = 64 * 1024;
const FLUSH_MS = 5;

export function batchedStdout(out: { write(chunk: string): unknown } = process.stdout): { write(line: string): void; flush(): void } {
  let pending = "";
  let timer: ReturnType<typeof setTimeout> | null = null;
  const flush = (): void => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    if (pending === "") return;
    const chunk = pending;
    pending = "";
    out.write(chunk);
  };
  return {
    write(line: string): void {
      pending += `${line}\n`;
      if (pending.length >= MAX_PENDING_CHARS) flush();
      else if (timer === null) {
        timer = setTimeout(flush, FLUSH_MS);
        timer.unref?.(); // never keeps the process alive: pending lines are written at exit
      }
    },
    flush,
  };
}

let shared: ReturnType<typeof batchedStdout> | null = null;

/** The process's stdout sink (one, so that lines from every logger keep their order). */
export function stdoutSink(): ReturnType<typeof batchedStdout> {
  if (shared === null) {
    shared = batchedStdout();
    process.on("exit", shared.flush);
  }
  return shared;
}
