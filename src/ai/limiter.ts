// Per-project cap on concurrent vendor calls (per instance): one project cannot hold every
// outbound slot, and a slow vendor cannot pile up requests without bound.
import type { Config } from "../config";
import { AppError } from "../errors";

const inFlight = new WeakMap<Config, Map<string, number>>();

/** Takes a slot or throws 429 rate_limited; call the returned function exactly once to free it. */
export function acquireSlot(config: Config, projectId: string): () => void {
  let counts = inFlight.get(config);
  if (!counts) inFlight.set(config, (counts = new Map()));
  const n = counts.get(projectId) ?? 0;
  const max = config.aiMaxConcurrentPerProject;
  if (n >= max) throw new AppError("rate_limited", `this project already has ${max} translation calls in progress; retry shortly`, { limit: max, retry_after: 1 }, { "retry-after": "1" });
  counts.set(projectId, n + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (counts.get(projectId) ?? 1) - 1;
    if (left <= 0) counts.delete(projectId);
    else counts.set(projectId, left);
  };
}
