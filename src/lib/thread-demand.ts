// How much else the serving thread has been asked to do: the hot delivery reads answered in front
// of the app (src/delivery/front.ts) count themselves here. Process-wide on purpose: the thread is.
// Work that would hold the thread for long (a search on the embedded database, src/search/pace.ts)
// rests between runs only while such reads are coming in.
let served = 0;

/** One hot read answered. */
export function hotReadServed(): void {
  served++;
}

/** Hot reads answered since the process started. */
export const hotReadsServed = (): number => served;
