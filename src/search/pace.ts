// Searches on the embedded database take turns. PGlite runs each query on the thread that serves
// every request, so a stream of searches (each parses and ranks thousands of rows) would leave the
// hot delivery reads, which never touch the database, no time to run. Here searches run one at a
// time; after each, one turn of the event loop lets what waited in (src/lib/thread-demand.ts
// counts the hot reads answered), and while hot reads are coming in the next search waits until
// searching has taken at most SHARE of the thread's time (a search of 20 ms is followed by 180 ms
// for everything else: the share counts the driver's work, not the answer's rendering and sending,
// so it is set below the 20 % the reads may lose; bench/search measures the loss). Without other
// reads, searches run back to back. A queue longer than MAX_WAITING is answered 503 with
// Retry-After at once. PostgreSQL runs searches in its own processes: no pacing.
import { AppError } from "../errors";
import { hotReadsServed } from "../lib/thread-demand";
import type { SearchDriver } from "./driver";

/** The share of the serving thread's time searches may take on the embedded database. */
const SEARCH_SHARE = 0.1;
/** A search's time counted for its rest, at most (wall time: a process the machine left waiting must not rest for seconds). */
const MAX_COUNTED_MS = 250;
/** Searches waiting for their turn, at most. */
const MAX_WAITING = 64;

interface PaceOptions {
  share?: number;
  now?: () => number;
  /** A count that grows while other work is served (default: the hot reads answered). */
  demand?: () => number;
}

export function pacedDriver(inner: SearchDriver, opts: PaceOptions = {}): SearchDriver {
  const share = opts.share ?? SEARCH_SHARE;
  const now = opts.now ?? (() => performance.now());
  const demand = opts.demand ?? hotReadsServed;
  let tail: Promise<void> = Promise.resolve();
  let waiting = 0;
  let nextStart = 0;
  let demandAtEnd = demand();
  const turn = <T>(run: () => Promise<T>): Promise<T> => {
    if (waiting >= MAX_WAITING) {
      return Promise.reject(new AppError("service_unavailable", "too many searches at once on the embedded database; retry shortly", undefined, { "retry-after": "1" }));
    }
    waiting++;
    const mine = tail.then(async () => {
      // One turn of the loop: requests that came in during the last search are answered now.
      await new Promise((resolve) => setTimeout(resolve, 0));
      const wait = nextStart - now();
      if (wait > 0 && demand() !== demandAtEnd) await new Promise((resolve) => setTimeout(resolve, wait));
      waiting--;
      const started = now();
      try {
        return await run();
      } finally {
        const took = Math.min(now() - started, MAX_COUNTED_MS);
        nextStart = now() + (took * (1 - share)) / share;
        demandAtEnd = demand();
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
