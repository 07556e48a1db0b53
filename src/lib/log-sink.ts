// Log lines to stdout in batches: lines are written together at most FLUSH_MS after the first of
// them (or as soon as 64 KiB would not hold the next), so a busy server pays one system call per batch instead
// of one per request. Pending lines are written when the process exits (process.exit included);
// kill -9 loses at most the last few milliseconds of lines.

const MAX_PENDING_BYTES = 64 * 1024;
const FLUSH_MS = 5;
const NEWLINE = 10;

/**
 * Lines are encoded as they come into one buffer (TextEncoder.encodeInto: no string is built per
 * batch) and each batch is written as bytes (a copy: a stream may keep what it was given).
 * Building the batch as one string cost about 1.4 µs per access-log line at 45,000 lines a second
 * (the join of the rope and its encoding at write), the largest part of what the access log cost
 * a hot read (bench/README.md).
 */
export function batchedStdout(out: { write(chunk: Uint8Array): unknown } = process.stdout): { write(line: string): void; flush(): void } {
  const encoder = new TextEncoder();
  const buf = new Uint8Array(MAX_PENDING_BYTES);
  let at = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const flush = (): void => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    if (at === 0) return;
    const chunk = buf.slice(0, at);
    at = 0;
    out.write(chunk);
  };
  return {
    write(line: string): void {
      // A UTF-16 unit is at most 3 bytes of UTF-8.
      if (at + line.length * 3 + 1 > buf.length) {
        flush();
        if (line.length * 3 + 1 > buf.length) {
          out.write(encoder.encode(`${line}\n`));
          return;
        }
      }
      at += encoder.encodeInto(line, buf.subarray(at)).written;
      buf[at++] = NEWLINE;
      if (timer === null) {
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
