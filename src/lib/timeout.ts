/** What `start` gives (a synchronous throw rejects too), or a rejection ("timeout") after `ms`; the timer never outlives the race. */
export async function withTimeout<T>(start: () => Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([start(), new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("timeout")), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
