/**
 * Expensive work (image renders) run at most `concurrency` at a time, the rest waiting in a
 * bounded queue: at most `maxWaiting` in all, one group (a project) at most half of them, and the
 * groups served in turn, so one group's burst neither stalls the instance nor shuts the others out.
 * A key already running or waiting is joined, not queued again (one render per variant at a time).
 */
export class WorkQueue {
  private running = 0;
  private waitingCount = 0;
  /** Waiting starts by group, each FIFO; the Map's order is the turn order. */
  private readonly waiting = new Map<string, Array<() => void>>();
  private readonly flights = new Map<string, Promise<unknown>>();

  constructor(
    readonly concurrency: number,
    readonly maxWaiting: number,
  ) {}

  /** What runs and what waits now. */
  stats(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waitingCount };
  }

  /** True when `key` is running or waiting: run() would join it. */
  has(key: string): boolean {
    return this.flights.has(key);
  }

  /**
   * `fn`'s result once a slot is free (or the result of the run of `key` already under way);
   * null when the queue is full (the caller answers 503).
   */
  run<T>(group: string, key: string, fn: () => Promise<T>): Promise<T> | null {
    const joined = this.flights.get(key);
    if (joined !== undefined) return joined as Promise<T>;
    if (this.running >= this.concurrency) {
      const mine = this.waiting.get(group)?.length ?? 0;
      if (this.waitingCount >= this.maxWaiting || mine >= Math.max(1, Math.floor(this.maxWaiting / 2))) return null;
    }
    const flight = this.slot(group)
      .then(fn)
      .finally(() => {
        this.flights.delete(key);
        this.release();
      });
    this.flights.set(key, flight);
    return flight;
  }

  /** Resolves once this run holds a slot. */
  private slot(group: string): Promise<void> {
    if (this.running < this.concurrency) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise<void>((start) => {
      const q = this.waiting.get(group);
      if (q) q.push(start);
      else this.waiting.set(group, [start]);
      this.waitingCount++;
    });
  }

  /** Frees a slot: the next group in turn starts its oldest waiting run, and goes to the back of the turn. */
  private release(): void {
    const next = this.waiting.entries().next();
    if (next.done) {
      this.running--;
      return;
    }
    const [group, q] = next.value;
    const start = q.shift();
    this.waiting.delete(group);
    if (q.length > 0) this.waiting.set(group, q);
    this.waitingCount--;
    start?.(); // the slot passes on: running stays the same
  }
}
