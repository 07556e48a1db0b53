// The webhook dispatcher: sends what the outbox holds. Every instance may run one; they share the
// outbox. A claim is one statement that leases due rows (FOR UPDATE SKIP LOCKED), only the oldest
// pending row of each endpoint (per-endpoint order by event time, one attempt in flight per
// endpoint), so no attempt is sent twice at once; a lease left by a killed process runs out and
// the row is sent again with the same webhook-id (at least once). Woken by the NOTIFY each write
// with events sends at commit, and by a short poll (retries falling due, a lost notification).
import { type SQL, sql } from "drizzle-orm";
import type { AppDeps } from "../core/deps";
import { AppError, describeError } from "../errors";
import { uuidv7 } from "../lib/ids";
import { rows } from "../lib/json";
import { checkOutboundUrl } from "../lib/ssrf";
import { readCappedText } from "../lib/stream";
import { pinnedFetch } from "../platform/fetch";
import { WEBHOOKS_CHANNEL } from "../write/outbox";
import { type SigningEndpoint, signingSecrets, webhookUrlPolicy } from "./service";
import { signedHeaders } from "./sign";

export interface Dispatcher {
  /** Looks for due attempts now (tests, and the in-process path after a write). */
  wake(): void;
  /** Stops claiming; waits for the attempts in flight. */
  stop(): Promise<void>;
}

interface Claimed {
  id: string;
  seq: number;
  attempts: number;
  manual: boolean;
  event_id: string;
  type: string;
  payload: string;
  endpoint_id: string;
  endpoint: SigningEndpoint & { url: string };
}

type Outcome = { statusCode: number | null; error: string | null; retry: boolean; retryAfterMs: number | null };

const MAX_RETRY_AFTER_MS = 86_400_000;
const USER_AGENT = "content-service-webhooks/1";
/** Rows of one endpoint sent under one claim. */
const BATCH = 32;

/** What a claim answers of each row it leased (`o` the outbox row, `ev` its event, `ep` its endpoint). */
const CLAIMED_COLUMNS = sql`returning o.id, o.seq, o.attempts, o.manual, o.event_id, ev.type, ev.payload, o.endpoint_id, ep.project_id, ep.url, ep.secret_sealed,
  ep.previous_secret_sealed, ep.previous_secret_expires_at`;

/**
 * A row of the endpoint after `after` and up to the outbox row `t` that is not due yet (a retry
 * waiting for its time): the rows behind a head are taken only up to it, in order.
 */
const waiting = (endpoint: SQL, after: SQL): SQL =>
  sql`select 1 from webhook_outbox x where x.endpoint_id = ${endpoint} and x.status = 'pending' and (x.seq, x.id) > ${after} and (x.seq, x.id) <= (t.seq, t.id) and x.next_attempt_at > now()`;

/** A CTE handing claimed rows back as they were, not sent: no lease, the attempt not counted (only while still this claim's). */
const released = (unsent: readonly Claimed[]): SQL => sql`released as (
  update webhook_outbox o set lease_until = null, attempts = o.attempts - 1
  from (values ${sql.join(
    unsent.map((r) => sql`(${r.id}::uuid, ${r.attempts}::int)`),
    sql`, `,
  )}) u(id, attempts)
  where o.id = u.id and o.attempts = u.attempts
  returning 1)`;

/** The rows a claim leased, in event order. */
function claimedRows(result: unknown): Claimed[] {
  type Row = Omit<Claimed, "seq" | "endpoint"> & {
    seq: string | number;
    project_id: string;
    url: string;
    secret_sealed: string;
    previous_secret_sealed: string | null;
    previous_secret_expires_at: string | Date | null;
  };
  return rows<Row>(result)
    .map((r) => ({
      id: r.id,
      seq: Number(r.seq),
      attempts: Number(r.attempts),
      manual: r.manual,
      event_id: r.event_id,
      type: r.type,
      payload: r.payload,
      endpoint_id: r.endpoint_id,
      endpoint: {
        id: r.endpoint_id,
        projectId: r.project_id,
        url: r.url,
        secretSealed: r.secret_sealed,
        previousSecretSealed: r.previous_secret_sealed,
        previousSecretExpiresAt: r.previous_secret_expires_at === null ? null : new Date(r.previous_secret_expires_at),
      },
    }))
    .sort((a, b) => a.seq - b.seq || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

export function startDispatcher(deps: AppDeps): Dispatcher {
  const { config, db, log } = deps;
  // Longer than any attempt (its timeout) and its recording: a lease runs out only when its holder died.
  const leaseMs = config.webhooksTimeoutMs * 2 + 5000;
  // A batch starts no attempt past this time from its lease: its last attempt (one timeout at
  // most) and its recording then end before the lease runs out, so no other claim takes its rows.
  const sendWindowMs = leaseMs - config.webhooksTimeoutMs - 3000;
  let inFlight = 0; // batches (endpoints) being sent
  let claiming = false;
  let again = false;
  let stopped = false;
  let failingClaims = false;
  const running = new Set<Promise<void>>();
  const opened = new Map<string, string>();
  const timers = new Set<ReturnType<typeof setTimeout>>();

  // A claim takes the head of each ready endpoint (the lock that decides who sends it) and up to
  // BATCH - 1 of the rows behind it, leased together; they are sent one after another and recorded
  // in one statement. Two statements per batch instead of two per event: on the embedded database,
  // whose one connection the writes share, the dispatcher keeps up with a stream of writes.
  const tick = (): void => {
    if (stopped) return;
    if (claiming) {
      again = true;
      return;
    }
    const free = config.webhooksConcurrency - inFlight;
    if (free <= 0) return;
    claiming = true;
    again = false;
    const claimedAt = performance.now();
    claim(free).then(
      (claimed) => {
        failingClaims = false;
        claiming = false;
        const batches = Map.groupBy(claimed, (row) => row.endpoint_id);
        for (const batch of batches.values()) {
          inFlight++;
          const p = sendBatch(batch, claimedAt)
            .catch((err: unknown) => log.error("webhook attempts failed to record", { outbox_ids: batch.map((r) => r.id), ...describeError(err) }))
            .finally(() => {
              inFlight--;
              running.delete(p);
              tick();
            });
          running.add(p);
        }
        if (again || batches.size === free) tick();
      },
      (err: unknown) => {
        claiming = false;
        if (!failingClaims) log.warn("webhooks: the outbox could not be read; retrying at the next poll", describeError(err));
        failingClaims = true;
      },
    );
  };

  const later = (ms: number): void => {
    if (stopped || ms >= config.webhooksPollMs) return; // the poll comes first
    const t = setTimeout(
      () => {
        timers.delete(t);
        tick();
      },
      Math.max(0, ms),
    );
    timers.add(t);
  };

  async function claim(limit: number): Promise<Claimed[]> {
    // Only an endpoint's oldest pending row can be a head, while none of its rows is leased (one
    // batch in flight per endpoint: a redelivery, inserted at its event's old place, waits for the
    // batch being sent), and only the claim that locked the head takes the rows behind it (which no
    // other claim can, their head being pending). A head leased by a claim that committed first
    // fails the re-check of its lock, so no row is sent twice at once.
    const result = await db.execute(sql`
      with heads as (
        select c.id, c.endpoint_id, c.seq from webhook_outbox c join webhook_endpoints e on e.id = c.endpoint_id
        where c.status = 'pending' and c.next_attempt_at <= now() and (c.lease_until is null or c.lease_until < now()) and e.status = 'active'
          and not exists (select 1 from webhook_outbox h where h.endpoint_id = c.endpoint_id and h.status = 'pending' and (h.seq, h.id) < (c.seq, c.id))
          and not exists (select 1 from webhook_outbox l where l.endpoint_id = c.endpoint_id and l.status = 'pending' and l.lease_until >= now())
        order by c.seq, c.id
        limit ${limit}
        for update of c skip locked
      ), batch as (
        select id from heads
        union all
        select t.id from heads, lateral (
          select t.id from webhook_outbox t
          where t.endpoint_id = heads.endpoint_id and t.status = 'pending' and (t.seq, t.id) > (heads.seq, heads.id)
            and not exists (${waiting(sql`heads.endpoint_id`, sql`(heads.seq, heads.id)`)})
          order by t.seq, t.id
          limit ${BATCH - 1}) t
      )
      update webhook_outbox o set lease_until = now() + make_interval(secs => ${leaseMs / 1000}), attempts = o.attempts + 1
      from batch, webhook_events ev, webhook_endpoints ep
      where o.id = batch.id and ev.id = o.event_id and ep.id = o.endpoint_id
      ${CLAIMED_COLUMNS}`);
    return claimedRows(result);
  }

  interface Attempted {
    row: Claimed;
    attemptedAt: Date;
    durationMs: number;
    outcome: Outcome;
    status: "delivered" | "pending" | "failed";
    next: Date | null;
    delay: number;
  }

  /** Sends one endpoint's claimed rows in event order, stopping at the first that is not delivered. */
  async function sendBatch(first: Claimed[], claimedAt: number): Promise<void> {
    // Each recording also leases the endpoint's next rows when all went well: while events keep
    // coming, an endpoint's batches follow one another at one statement each.
    let leasedAt = claimedAt;
    for (let batch = first; batch.length > 0; ) {
      const done: Attempted[] = [];
      for (const row of batch) {
        if (stopped || performance.now() - leasedAt > sendWindowMs) break; // the rest are handed back
        const attempted = await attempt(row);
        done.push(attempted);
        if (attempted.status !== "delivered") break;
      }
      const recordedAt = performance.now();
      batch = await record(done, batch.slice(done.length));
      leasedAt = recordedAt;
      const last = done.at(-1);
      if (last?.next) later(last.delay);
    }
  }

  async function attempt(row: Claimed): Promise<Attempted> {
    const { endpoint } = row;
    const attemptedAt = new Date();
    const started = performance.now();
    // A secret that cannot be opened (a key ring without its key) is a failed attempt like any other, logged.
    const outcome = await signingSecrets(deps, endpoint, attemptedAt, opened)
      .then((secrets) => send(endpoint.url, row, secrets))
      .catch((err: unknown): Outcome => ({ statusCode: null, error: err instanceof AppError ? err.message : `internal error (${describeError(err).name})`, retry: true, retryAfterMs: null }));
    const durationMs = Math.round(performance.now() - started);
    const schedule = config.webhooksRetrySchedule;
    const retrying = outcome.retry && !row.manual && row.attempts < schedule.length;
    const delay = retrying ? Math.min(MAX_RETRY_AFTER_MS, Math.max(jitter(schedule[row.attempts] ?? 0), outcome.retryAfterMs ?? 0)) : 0;
    const next = retrying ? new Date(Date.now() + delay) : null;
    const succeeded = outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300;
    const status = succeeded ? "delivered" : retrying ? "pending" : "failed";
    log.info("webhook attempt", {
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

  /**
   * One statement: each attempt logged, its outbox row settled (only if still this claim's), the
   * rows not sent (behind one that failed) handed back as they were, and the endpoint's failure
   * state from the last attempt.
   */
  async function record(done: Attempted[], unsent: Claimed[]): Promise<Claimed[]> {
    const last = done.at(-1);
    if (!last) {
      if (unsent.length > 0) await db.execute(sql`with ${released(unsent)} select 1`);
      return [];
    }
    const endpointId = last.row.endpoint_id;
    const at = last.attemptedAt.toISOString();
    const succeeded = last.status === "delivered";
    const disableBefore = new Date(last.attemptedAt.getTime() - config.webhooksDisableAfterSeconds * 1000);
    const disable = sql`coalesce(failing_since, ${at}::timestamptz) <= ${disableBefore.toISOString()}::timestamptz and status <> 'disabled'`;
    const reason = `every attempt has failed for ${config.webhooksDisableAfterSeconds} seconds (last: ${last.outcome.error ?? `HTTP ${last.outcome.statusCode}`}); PATCH status active to resume`;
    const logged = sql.join(
      done.map(
        (d) => sql`(${uuidv7()}::uuid, ${d.row.id}::uuid, ${d.row.endpoint_id}::uuid, ${d.row.event_id}, ${d.row.type}, ${d.row.attempts}::int, ${d.attemptedAt.toISOString()}::timestamptz,
          ${d.outcome.statusCode}::int, ${d.durationMs}::int, ${d.outcome.error}::text, ${d.status === "delivered" ? "succeeded" : d.status === "pending" ? "retrying" : "failed"},
          ${d.next?.toISOString() ?? null}::timestamptz, ${d.status})`,
      ),
      sql`, `,
    );
    const handBack = unsent.length ? sql`, ${released(unsent)}` : sql``;
    // The rows after the last one sent, when it was delivered and nothing of this endpoint waits
    // before it (a redelivery asked meanwhile, at its event's old place: the next claim takes it).
    const lastRow = last.row;
    const going = succeeded && unsent.length === 0 && !stopped;
    const more = going
      ? sql`, more as (
          update webhook_outbox o set lease_until = now() + make_interval(secs => ${leaseMs / 1000}), attempts = o.attempts + 1
          from webhook_events ev, webhook_endpoints ep
          where o.id in (
              select t.id from webhook_outbox t
              where t.endpoint_id = ${endpointId} and t.status = 'pending' and (t.seq, t.id) > (${lastRow.seq}::bigint, ${lastRow.id}::uuid)
                and not exists (${waiting(sql`${endpointId}::uuid`, sql`(${lastRow.seq}::bigint, ${lastRow.id}::uuid)`)})
              order by t.seq, t.id
              limit ${BATCH})
            and ev.id = o.event_id and ep.id = o.endpoint_id and ep.status = 'active'
            and not exists (select 1 from webhook_outbox h where h.endpoint_id = ${endpointId} and h.status = 'pending'
              and (h.seq, h.id) < (${lastRow.seq}::bigint, ${lastRow.id}::uuid) and h.id not in (select outbox_id from v))
            and (select count(*) from settled) = ${done.length}
          ${CLAIMED_COLUMNS})`
      : sql``;
    const result = await db.execute(sql`
      with v(id, outbox_id, endpoint_id, event_id, event_type, attempt, attempted_at, status_code, duration_ms, error, outcome, next_attempt_at, status) as (values ${logged}),
      logged as (
        insert into webhook_deliveries (id, outbox_id, endpoint_id, event_id, event_type, attempt, attempted_at, status_code, duration_ms, error, outcome, next_attempt_at)
        select id, outbox_id, endpoint_id, event_id, event_type, attempt, attempted_at, status_code, duration_ms, error, outcome, next_attempt_at from v
        returning 1
      ), settled as (
        update webhook_outbox o set status = v.status, lease_until = null, next_attempt_at = coalesce(v.next_attempt_at, o.next_attempt_at)
        from v where o.id = v.outbox_id and o.attempts = v.attempt
        returning 1
      )${handBack}, state as (${
        succeeded
          ? sql`update webhook_endpoints set failing_since = null where id = ${endpointId} and failing_since is not null returning 1`
          : sql`update webhook_endpoints set failing_since = coalesce(failing_since, ${at}::timestamptz),
              disabled_at = case when ${disable} then now() else disabled_at end,
              disabled_reason = case when ${disable} then ${reason} else disabled_reason end,
              status = case when ${disable} then 'disabled' else status end
            where id = ${endpointId} returning 1`
      })${more}
      ${going ? sql`select * from more` : sql`select 1 where false`}`);
    return claimedRows(result);
  }

  /** One POST of the event to the URL, checked again by the outbound guard and pinned to the addresses it checked. */
  async function send(url: string, row: Claimed, secrets: string[]): Promise<Outcome> {
    const check = await checkOutboundUrl(url, webhookUrlPolicy(deps, "refuse"));
    if (!check.ok) return { statusCode: null, error: `url ${check.reason}`, retry: true, retryAfterMs: null };
    const headers = {
      "content-type": "application/json",
      "user-agent": USER_AGENT,
      ...signedHeaders(row.event_id, Math.floor(Date.now() / 1000), row.payload, secrets),
    };
    const signal = AbortSignal.timeout(config.webhooksTimeoutMs);
    let res: Response | null = null;
    let failure = "connection failed";
    for (const address of check.addresses.length ? check.addresses : [null]) {
      try {
        res = await pinnedFetch(check.url, address, { method: "POST", headers, body: row.payload, redirect: "manual", signal }, deps.fetch);
        break;
      } catch (err) {
        if (signal.aborted) return { statusCode: null, error: `timed out after ${config.webhooksTimeoutMs} ms`, retry: true, retryAfterMs: null };
        failure = `connection failed (${describeError(err).name})`;
      }
    }
    if (!res) return { statusCode: null, error: failure, retry: true, retryAfterMs: null };
    // The body is read (bounded) so that the connection can be reused; its content is not kept.
    const read = await readCappedText(res.body, config.webhooksMaxResponseBytes).then(
      () => null,
      () => (signal.aborted ? `timed out after ${config.webhooksTimeoutMs} ms reading the response` : null),
    );
    const code = res.status;
    if (read) return { statusCode: code, error: read, retry: true, retryAfterMs: null };
    if (code >= 200 && code < 300) return { statusCode: code, error: null, retry: false, retryAfterMs: null };
    if (code >= 300 && code < 400) return { statusCode: code, error: `redirect (HTTP ${code}) not followed`, retry: false, retryAfterMs: null };
    const retry = code === 429 || code === 408 || code >= 500;
    return { statusCode: code, error: `HTTP ${code}`, retry, retryAfterMs: retry ? retryAfterMs(res.headers) : null };
  }

  const poll = setInterval(tick, config.webhooksPollMs);
  let unlisten: (() => Promise<void>) | null = null;
  deps.dbHandle.listen(WEBHOOKS_CHANNEL, tick).then(
    (u) => {
      if (stopped) void u().catch(() => {});
      else unlisten = u;
    },
    (err: unknown) => log.warn("webhooks: LISTEN failed; the dispatcher polls only", describeError(err)),
  );
  tick();

  return {
    wake: tick,
    async stop() {
      stopped = true;
      clearInterval(poll);
      for (const t of timers) clearTimeout(t);
      await unlisten?.().catch(() => {});
      await Promise.allSettled([...running]);
    },
  };
}

/** Up to 10 % later, so that retries of many events do not arrive together. */
const jitter = (ms: number): number => (ms > 0 ? Math.round(ms * (1 + Math.random() * 0.1)) : 0);

/** Retry-After as ms (delta seconds or an HTTP date); null when absent or unreadable. */
function retryAfterMs(headers: Headers): number | null {
  const raw = headers.get("retry-after")?.trim();
  if (!raw) return null;
  const ms = /^\d+$/.test(raw) ? Number(raw) * 1000 : Date.parse(raw) - Date.now();
  return Number.isFinite(ms) ? Math.max(0, ms) : null;
}
