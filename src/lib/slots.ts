/** A count of calls in flight per key, capped: one key (a project) cannot hold every slot. */
export class Slots {
  private readonly counts = new Map<string, number>();

  /** Takes one of `max` slots of `key`: the function that frees it (call it once), or null when all are taken. */
  acquire(key: string, max: number): (() => void) | null {
    const { counts } = this;
    const n = counts.get(key) ?? 0;
    if (n >= max) return null;
    counts.set(key, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (counts.get(key) ?? 1) - 1;
      if (left <= 0) counts.delete(key);
      else counts.set(key, left);
    };
  }
}
