// A background look repeated on every instance (the scheduler, the translation jobs' worker): one
// at a time (a tick while one runs joins it), the next `intervalMs` after the last ended, never
// keeping the process alive; stop waits for the look in progress.
export interface Periodic<T> {
  /** One look now (or the one in progress). */
  tick(): Promise<T>;
  stop(): Promise<void>;
  /** True once stop was called: a long look checks it between its steps. */
  readonly stopped: () => boolean;
}

export function periodic<T>(intervalMs: number, look: () => Promise<T>): Periodic<T> {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let running: Promise<T> | null = null;
  const tick = (): Promise<T> => {
    running ??= look().finally(() => {
      running = null;
    });
    return running;
  };
  const loop = (): void => {
    if (stopped) return;
    timer = setTimeout(() => void tick().finally(loop), intervalMs);
    (timer as { unref?: () => void }).unref?.();
  };
  void tick().finally(loop);
  return {
    tick,
    stop: async () => {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
      await running?.catch(() => {});
    },
    stopped: () => stopped,
  };
}
