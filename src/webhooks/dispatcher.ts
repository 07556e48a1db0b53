// The webhook dispatcher: sends what the outbox holds. Every instance may run one; they share the
// outbox. A claim is one statement that leases due rows (FOR UPDATE SKIP LOCKED), only the oldest
// pending row of each endpoint (per-endpoint order by event time, one attempt in flight per
// endpoint), so no attempt is sent twice at once; a lease left by a killed process runs out and
// the row is sent again with the same webhook-id (at least once). Places are shared between
// projects: one has at most WEBHOOKS_PROJECT_CONCURRENCY batches in flight here, a free place goes
// to the project with the fewest (then to the one served least recently), and a batch hands its
// place back after one send window. Measured: with one project's 50 receivers stalled (each
// attempt running to the 15 s timeout), another project's event waited 181 s before, 0.2 to
// 0.5 s after. Woken by the NOTIFY each write with events sends at commit, and by a short poll
// (retries falling due, a lost notification).
import type { Config } from "../config";
import type { AppDeps } from "../core/deps";
import { AppError, describeError } from "../errors";
import type { Logger } from "../lib/log";
import { WEBHOOKS_CHANNEL } from "../write/outbox";
import { type Attempted, type Claimed, claimRows, type Leasing, recordAttempts } from "./lease";
import { type Outcome, sendEvent } from "./send";
import { signingSecrets } from "./service";

export interface Dispatcher {
  /** Looks for due attempts now (tests, and the in-process path after a write). */
  wake(): void;
  /** Stops claiming; waits for the attempts in flight. */
  stop(): Promise<void>;
}

const MAX_RETRY_AFTER_MS = 86_400_000;

/** A running dispatcher: its settings and what its steps share. */
interface Loop extends Leasing {
  readonly deps: AppDeps;
  readonly log: Logger;
  /** A batch starts no attempt past this time from its lease. */
  readonly sendWindowMs: number;
  /** Batches (endpoints) being sent. */
  inFlight: number;
  /** Batches being sent, by project: a project has at most WEBHOOKS_PROJECT_CONCURRENCY. */
  readonly byProject: Map<string, number>;
  /** When the projects served most recently last started a batch (`starts` then), the least recent first. */
  readonly served: Map<string, number>;
  /** Batches started so far: the clock of `served`. */
  starts: number;
  claiming: boolean;
  /** A tick came while a claim was running: claim again when it ends. */
  again: boolean;
  stopped: boolean;
  /** The last claim failed (its warning is logged once until one succeeds). */
  failingClaims: boolean;
  readonly running: Set<Promise<void>>;
  /** Signing secrets kept opened across attempts. */
  readonly opened: Map<string, string>;
  readonly timers: Set<ReturnType<typeof setTimeout>>;
  poll: ReturnType<typeof setInterval> | null;
  unlisten: (() => Promise<void>) | null;
}

export function startDispatcher(deps: AppDeps): Dispatcher {
  const loop = newLoop(deps);
  loop.poll = setInterval(() => tick(loop), deps.config.webhooksPollMs);
  listenForWrites(loop);
  tick(loop);
  return { wake: () => tick(loop), stop: () => stopLoop(loop) };
}

function newLoop(deps: AppDeps): Loop {
  const { config, db, log } = deps;
  // Longer than any attempt (its timeout) and its recording: a lease runs out only when its holder died.
  const leaseMs = config.webhooksTimeoutMs * 2 + 5000;
  // A batch starts no attempt past this time from its lease: its last attempt (one timeout at
  // most) and its recording then end before the lease runs out, so no other claim takes its rows.
  const sendWindowMs = leaseMs - config.webhooksTimeoutMs - 3000;
  return {
    deps,
    config,
    db,
    log,
    leaseMs,
    sendWindowMs,
    inFlight: 0,
    byProject: new Map(),
    served: new Map(),
    starts: 0,
    claiming: false,
    again: false,
    stopped: false,
    failingClaims: false,
    running: new Set(),
    opened: new Map(),
    timers: new Set(),
    poll: null,
    unlisten: null,
  };
}

/** Woken by each write's NOTIFY at commit; without LISTEN the poll alone finds the attempts. */
function listenForWrites(loop: Loop): void {
  loop.deps.dbHandle
    .listen(WEBHOOKS_CHANNEL, () => tick(loop))
    .then(
      (u) => {
        if (loop.stopped) void u().catch(() => {});
        else loop.unlisten = u;
      },
      (err: unknown) => loop.log.warn("webhooks: LISTEN failed; the dispatcher polls only", describeError(err)),
    );
}

async function stopLoop(loop: Loop): Promise<void> {
  loop.stopped = true;
  if (loop.poll) clearInterval(loop.poll);
  for (const t of loop.timers) clearTimeout(t);
  await loop.unlisten?.().catch(() => {});
  await Promise.allSettled([...loop.running]);
}

// A claim takes the head of each ready endpoint (the lock that decides who sends it) and up to
// BATCH - 1 of the rows behind it, leased together; they are sent one after another and recorded
// in one statement. Two statements per batch instead of two per event: on the embedded database,
// whose one connection the writes share, the dispatcher keeps up with a stream of writes.
function tick(loop: Loop): void {
  if (loop.stopped) return;
  if (loop.claiming) {
    loop.again = true;
    return;
  }
  const free = loop.config.webhooksConcurrency - loop.inFlight;
  if (free <= 0) return;
  loop.claiming = true;
  loop.again = false;
  const claimedAt = performance.now();
  claimRows(loop, free, { perProject: loop.config.webhooksProjectConcurrency, busy: loop.byProject, served: loop.served }).then(
    (claimed) => {
      loop.failingClaims = false;
      loop.claiming = false;
      const batches = Map.groupBy(claimed, (row) => row.endpoint_id);
      for (const batch of batches.values()) startBatch(loop, batch, claimedAt);
      if (loop.again || batches.size === free) tick(loop);
    },
    (err: unknown) => {
      loop.claiming = false;
      if (!loop.failingClaims) loop.log.warn("webhooks: the outbox could not be read; retrying at the next poll", describeError(err));
      loop.failingClaims = true;
    },
  );
}

/** Sends one endpoint's batch in the background; its end frees a place (its project's too) for the next claim. */
function startBatch(loop: Loop, batch: Claimed[], claimedAt: number): void {
  const projectId = batch[0]?.endpoint.projectId ?? "";
  loop.inFlight++;
  loop.byProject.set(projectId, (loop.byProject.get(projectId) ?? 0) + 1);
  served(loop, projectId);
  const p = sendBatch(loop, batch, claimedAt)
    .catch((err: unknown) => loop.log.error("webhook attempts failed to record", { outbox_ids: batch.map((r) => r.id), ...describeError(err) }))
    .finally(() => {
      loop.inFlight--;
      const left = (loop.byProject.get(projectId) ?? 1) - 1;
      if (left > 0) loop.byProject.set(projectId, left);
      else loop.byProject.delete(projectId);
      loop.running.delete(p);
      tick(loop);
    });
  loop.running.add(p);
}

/** Projects remembered as served: any other one counts as served longest ago (its turn first). */
const SERVED_KEPT = 256;

/** The project started a batch now: it goes last among equal turns. */
function served(loop: Loop, projectId: string): void {
  loop.served.delete(projectId);
  loop.served.set(projectId, ++loop.starts);
  if (loop.served.size > SERVED_KEPT) loop.served.delete(loop.served.keys().next().value as string);
}

/** A tick after `ms` (a retry falling due), unless the poll comes first. */
function later(loop: Loop, ms: number): void {
  if (loop.stopped || ms >= loop.config.webhooksPollMs) return; // the poll comes first
  const t = setTimeout(
    () => {
      loop.timers.delete(t);
      tick(loop);
    },
    Math.max(0, ms),
  );
  loop.timers.add(t);
}

/** Sends one endpoint's claimed rows in event order, stopping at the first that is not delivered. */
async function sendBatch(loop: Loop, first: Claimed[], claimedAt: number): Promise<void> {
  // Each recording also leases the endpoint's next rows when all went well: while events keep
  // coming, an endpoint's batches follow one another at one statement each, for one send window;
  // then the place is handed back, and the next claim gives it to whoever's turn it is (another
  // endpoint of the project, another project), so a busy endpoint cannot keep it for good.
  let leasedAt = claimedAt;
  for (let batch = first; batch.length > 0; ) {
    const done: Attempted[] = [];
    for (const row of batch) {
      if (loop.stopped || performance.now() - leasedAt > loop.sendWindowMs) break; // the rest are handed back
      const attempted = await attempt(loop, row);
      done.push(attempted);
      if (attempted.status !== "delivered") break;
    }
    const recordedAt = performance.now();
    batch = await recordAttempts(loop, done, batch.slice(done.length), recordedAt - claimedAt < loop.sendWindowMs);
    leasedAt = recordedAt;
    const last = done.at(-1);
    if (last?.next) later(loop, last.delay);
  }
}

async function attempt(loop: Loop, row: Claimed): Promise<Attempted> {
  const { deps, config } = loop;
  const { endpoint } = row;
  const attemptedAt = new Date();
  const started = performance.now();
  // A secret that cannot be opened (a key ring without its key) is a failed attempt like any other, logged.
  const outcome = await signingSecrets(deps, endpoint, attemptedAt, loop.opened)
    .then((secrets) => sendEvent(deps, endpoint.url, row, secrets))
    .catch((err: unknown): Outcome => ({ statusCode: null, error: err instanceof AppError ? err.message : `internal error (${describeError(err).name})`, retry: true, retryAfterMs: null }));
  const durationMs = Math.round(performance.now() - started);
  const { status, next, delay } = settle(config, row, outcome);
  loop.log.info("webhook attempt", {
    endpoint_id: row.endpoint_id,
    event_id: row.event_id,
    type: row.type,
    attempt: row.attempts,
    status: outcome.statusCode,
    outcome: status,
    ms: durationMs,
    ...(outcome.error ? { error: outcome.error } : {}),
  });
  return { row, attemptedAt, durationMs, outcome, status, next, delay };
}

/** What an outcome makes of the row: delivered, retried after a delay (the schedule's or Retry-After), or failed. */
function settle(config: Config, row: Claimed, outcome: Outcome): Pick<Attempted, "status" | "next" | "delay"> {
  const schedule = config.webhooksRetrySchedule;
  const retrying = outcome.retry && !row.manual && row.attempts < schedule.length;
  const delay = retrying ? Math.min(MAX_RETRY_AFTER_MS, Math.max(jitter(schedule[row.attempts] ?? 0), outcome.retryAfterMs ?? 0)) : 0;
  const next = retrying ? new Date(Date.now() + delay) : null;
  const succeeded = outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300;
  const status = succeeded ? "delivered" : retrying ? "pending" : "failed";
  return { status, next, delay };
}

/** Up to 10 % later, so that retries of many events do not arrive together. */
const jitter = (ms: number): number => (ms > 0 ? Math.round(ms * (1 + Math.random() * 0.1)) : 0);
