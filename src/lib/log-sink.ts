// Log lines to stdout in batches: lines written during one turn of the event loop go out in one
// write once the turn is over (or as soon as 64 KiB are pending), so a busy server pays one
// system call per turn instead of one per request. Pending lines are written when the process
// exits (process.exit included); kill -9 loses at most the current turn's lines.

const MAX_PENDING_CHARS = 64 * 1024;

export interface LineSink {
  write(line: string): void;
  /** Writes the pending lines now. */
  flush(): void;
}

export function batchedStdout(out: { write(chunk: string): unknown } = process.stdout): LineSink {
  let pending = "";
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    if (pending === "") return;
    const chunk = pending;
    pending = "";
    out.write(chunk);
  };
  return {
    write(line: string): void {
      pending += line + "\n";
      if (pending.length >= MAX_PENDING_CHARS) flush();
      else if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    flush,
  };
}

let shared: LineSink | null = null;

/** The process's stdout sink (one, so that lines from every logger keep their order). */
export function stdoutSink(): LineSink {
  if (shared === null) {
    const sink = batchedStdout();
    process.on("exit", () => sink.flush());
    shared = sink;
  }
  return shared;
}
