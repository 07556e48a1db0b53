// Searches on the embedded database take turns. PGlite runs each query on the thread that serves
// every request, so a stream of searches (each parses and ranks thousands of rows) would leave the
// hot delivery reads, which never touch the database, no time to run. Here searches run one at a
// time, and each waits after the last until searching has taken at most SHARE of the thread's time
// (a search of 20 ms is followed by 80 ms for everything else); a queue longer than MAX_WAITING is
// answered 503 with Retry-After at once. PostgreSQL runs searches in its own processes: no pacing.
import { AppError } from "../errors";
import type { SearchDriver } from "./driver";

/** The share of the serving thread's time searches may take on the embedded database. */
export const SEARCH_SHARE = 0.15;
/** A search's time counted for its rest, at most (wall time: a process the machine left waiting must not rest for seconds). */
const MAX_COUNTED_MS = 250;
/** Searches waiting for their turn, at most. */
const MAX_WAITING = 64;

export function pacedDriver(inner: SearchDriver, share = SEARCH_SHARE, now: () => number = () => performance.now()): SearchDriver {
  let tail: Promise<void> = Promise.resolve();
  let waiting = 0;
  let nextStart = 0;
  const turn = <T>(run: () => Promise<T>): Promise<T> => {
    if (waiting >= MAX_WAITING) {
      return Promise.reject(new AppError("service_unavailable", "too many searches at once on the embedded database; retry shortly", undefined, { "retry-after": "1" }));
    }
    waiting++;
    const mine = tail.then(async () => {
      const wait = nextStart - now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      waiting--;
      const started = now();
      try {
        return await run();
      } finally {
        const took = Math.min(now() - started, MAX_COUNTED_MS);
        nextStart = now() + (took * (1 - share)) / share;
      }
    });
    tail = mine.then(
      () => {},
      () => {},
    );
    return mine;
  };
  return {
    search: (r) => turn(() => inner.search(r)),
    suggest: (r, limit) => turn(() => inner.suggest(r, limit)),
  };
}
