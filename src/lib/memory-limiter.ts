/**
 * Fixed-window counters in this process's memory, bounded in size. For limits that need not be
 * exact across instances (failed admin authentications): N instances allow at most N × limit.
 */
export class MemoryLimiter {
  private readonly windows = new Map<string, { count: number; start: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly maxKeys = 10_000,
  ) {}

  /** Seconds until the key may try again, or 0 when it is under the limit. */
  blockedFor(key: string, now: number): number {
    const w = this.windows.get(key);
    if (!w || now - w.start >= this.windowMs || w.count < this.limit) return 0;
    return Math.max(1, Math.ceil((w.start + this.windowMs - now) / 1000));
  }

  hit(key: string, now: number): void {
    const w = this.windows.get(key);
    if (!w || now - w.start >= this.windowMs) {
      if (this.windows.size >= this.maxKeys) this.windows.delete(this.windows.keys().next().value as string);
      this.windows.set(key, { count: 1, start: now });
    } else w.count += 1;
  }
}
