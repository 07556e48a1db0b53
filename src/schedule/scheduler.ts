// The scheduler: in the background of every instance, like the hourly housekeeping, it
// looks for due schedules every SCHEDULER_INTERVAL_MS and carries each out as a write of its own
// (schedule/service.ts). Several instances may look at once: each schedule is claimed by one. A
// schedule missed while no instance ran is due at the first look after a start.
import type { AppDeps } from "../core/deps";
import { describeError } from "../errors";
import { periodic } from "../lib/periodic";
import { dueSchedules, fireSchedule } from "./service";

export interface Scheduler {
  /** One look: fires what is due; answers how many changes this instance made. */
  tick(): Promise<number>;
  stop(): void;
}

export function startScheduler(deps: Pick<AppDeps, "db" | "log">, intervalMs: number): Scheduler {
  return periodic(intervalMs, async () => {
    let fired = 0;
    try {
      for (const due of await dueSchedules(deps.db)) {
        try {
          if (await fireSchedule(deps.db, due)) fired++;
        } catch (err) {
          deps.log.warn("scheduler: a schedule could not be carried out; retrying at the next look", { node_id: due.nodeId, locale: due.locale, action: due.action, ...describeError(err) });
        }
      }
      if (fired > 0) deps.log.info("scheduler: carried out schedules", { fired });
    } catch (err) {
      deps.log.warn("scheduler: could not read due schedules", describeError(err));
    }
    return fired;
  });
}
