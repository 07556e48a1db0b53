// The dispatcher's two statements on the outbox: a claim leases due rows, a recording settles the
// attempts made under a lease (and, while all goes well, leases the endpoint's next rows).
import { type SQL, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import type { Config } from "../config";
import { uuidv7 } from "../lib/ids";
import { rows } from "../lib/json";
import type { Outcome } from "./send";
import type { SigningEndpoint } from "./service";

export interface Claimed {
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

/** One attempt made, as it is recorded. */
export interface Attempted {
  row: Claimed;
  attemptedAt: Date;
  durationMs: number;
  outcome: Outcome;
  status: "delivered" | "pending" | "failed";
  next: Date | null;
  delay: number;
}

/** What the statements need of the dispatcher that runs them. */
export interface Leasing {
  readonly db: Db;
  readonly config: Config;
  /** How long a claim holds its rows. */
  readonly leaseMs: number;
  /** A stopped dispatcher leases nothing more. */
  readonly stopped: boolean;
}

/** Rows of one endpoint sent under one claim. */
const BATCH = 32;

/** What a claim answers of each row it leased (`o` the outbox row, `ev` its event, `ep` its endpoint). */
const CLAIMED_COLUMNS = sql`returning o.id, o.seq, o.attempts, o.manual, o.event_id, ev.type, ev.payload, o.endpoint_id, ep.project_id, ep.url, ep.secret_sealed,
  ep.previous_secret_sealed, ep.previous_secret_expires_at`;

/**
 * The rows of the endpoint after `after` (`t` the outbox row) up to the first one that is not due
 * yet (a retry waiting for its time): the rows behind a head are taken only up to it, in order. The
 * bound is found once per head (two scalar subqueries that do not depend on `t`), not once per row
 * behind it: with a row-by-row check, a claim over an endpoint 3,000 events deep took 6.5 s on
 * PostgreSQL, holding every other project's events meanwhile; it takes milliseconds so.
 */
const beforeWaiting = (endpoint: SQL, after: SQL): SQL => {
  const first = (column: SQL) =>
    sql`(select ${column} from webhook_outbox x where x.endpoint_id = ${endpoint} and x.status = 'pending' and (x.seq, x.id) > ${after} and x.next_attempt_at > now() order by x.seq, x.id limit 1)`;
  return sql`(t.seq, t.id) < (coalesce(${first(sql`x.seq`)}, 9223372036854775807), coalesce(${first(sql`x.id`)}, 'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid))`;
};

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

/** What one project may still take in a claim, and whose turn comes first. */
export interface Shares {
  /** Batches (endpoints) a project may have in flight at once on this instance. */
  readonly perProject: number;
  /** Batches in flight now, by project id (absent: none). */
  readonly busy: ReadonlyMap<string, number>;
  /** When each project recently served last started a batch (a counter; absent: longer ago than any). */
  readonly served: ReadonlyMap<string, number>;
}

/** The shares as one JSON object the claim reads: project id → { n: in flight, last: last start }. */
function sharesJson(shares: Shares): string {
  const out: Record<string, { n: number; last: number }> = {};
  for (const [id, last] of shares.served) out[id] = { n: 0, last };
  for (const [id, n] of shares.busy) out[id] = { n, last: shares.served.get(id) ?? 0 };
  return JSON.stringify(out);
}

/**
 * A claim: the head of each ready endpoint (the lock that decides who sends it) and up to BATCH - 1
 * of the rows behind it, leased together, at most `limit` endpoints, shared fairly between
 * projects: no project past its cap, and the free places go first to the project with the
 * fewest batches in flight (a project's own endpoints in event order).
 */
export async function claimRows(l: Leasing, limit: number, shares: Shares): Promise<Claimed[]> {
  // Only an endpoint's oldest pending row can be a head, while none of its rows is leased (one
  // batch in flight per endpoint: a redelivery, inserted at its event's old place, waits for the
  // batch being sent), and only the claim that locked the head takes the rows behind it (which no
  // other claim can, their head being pending). A head leased by a claim that committed first
  // fails the re-check of its lock, so no row is sent twice at once. A head's turn is its rank
  // among its project's ready heads after the batches the project has in flight: taking it makes
  // that many; turns above the cap wait, and the lowest turns are taken first (between equal
  // turns, the project served least recently), so a project whose receivers stall, or whose
  // backlog never ends, cannot hold every place while another's events wait.
  const result = await l.db.execute(sql`
    with ready as (
      select c.id, c.seq, e.project_id from webhook_outbox c join webhook_endpoints e on e.id = c.endpoint_id
      where c.status = 'pending' and c.next_attempt_at <= now() and (c.lease_until is null or c.lease_until < now()) and e.status = 'active'
        and not exists (select 1 from webhook_outbox h where h.endpoint_id = c.endpoint_id and h.status = 'pending' and (h.seq, h.id) < (c.seq, c.id))
        and not exists (select 1 from webhook_outbox l where l.endpoint_id = c.endpoint_id and l.status = 'pending' and l.lease_until >= now())
    ), shares as (
      select key::uuid as project_id, (value->>'n')::int as n, (value->>'last')::bigint as last from jsonb_each(${sharesJson(shares)}::jsonb)
    ), turns as (
      select r.id, r.seq, coalesce(b.n, 0) + row_number() over (partition by r.project_id order by r.seq, r.id) as turn, coalesce(b.last, 0) as last
      from ready r left join shares b on b.project_id = r.project_id
    ), heads as (
      select c.id, c.endpoint_id, c.seq from webhook_outbox c
      where c.id in (select id from turns where turn <= ${shares.perProject} order by turn, last, seq, id limit ${limit})
        and c.status = 'pending' and (c.lease_until is null or c.lease_until < now())
      for update of c skip locked
    ), batch as (
      select id from heads
      union all
      select t.id from heads, lateral (
        select t.id from webhook_outbox t
        where t.endpoint_id = heads.endpoint_id and t.status = 'pending' and (t.seq, t.id) > (heads.seq, heads.id)
          and ${beforeWaiting(sql`heads.endpoint_id`, sql`(heads.seq, heads.id)`)}
        order by t.seq, t.id
        limit ${BATCH - 1}) t
    )
    update webhook_outbox o set lease_until = now() + make_interval(secs => ${l.leaseMs / 1000}), attempts = o.attempts + 1
    from batch, webhook_events ev, webhook_endpoints ep
    where o.id = batch.id and ev.id = o.event_id and ep.id = o.endpoint_id
    ${CLAIMED_COLUMNS}`);
  return claimedRows(result);
}

/**
 * One transaction: the endpoint's row locked (none: it was deleted, nothing is recorded), then one
 * statement: each attempt logged, its outbox row settled (only if still this claim's), the
 * rows not sent (behind one that failed) handed back as they were, and the endpoint's failure
 * state from the last attempt. Answers the endpoint's next rows, leased, when all went well and
 * `keep` (the batch may keep its place).
 */
export async function recordAttempts(l: Leasing, done: Attempted[], unsent: Claimed[], keep = true): Promise<Claimed[]> {
  const last = done.at(-1);
  const endpointId = (last?.row ?? unsent[0])?.endpoint_id;
  if (endpointId === undefined) return [];
  // The endpoint's row first, locked as strongly as the recording needs it: a delete of the endpoint
  // (or its project) locks the endpoints before their outbox rows (src/write/outbox.ts), so the two
  // never hold each other's rows. Deleted meanwhile: its rows are gone, there is nothing to record.
  return l.db.transaction(async (tx) => {
    if (rows(await tx.execute(sql`select 1 from webhook_endpoints where id = ${endpointId} for no key update`)).length === 0) return [];
    if (!last) {
      // Nothing was sent (endpointId came from the unsent rows): they are handed back.
      await tx.execute(sql`with ${released(unsent)} select 1`);
      return [];
    }
    const succeeded = last.status === "delivered";
    const logged = attemptValues(done);
    const handBack = unsent.length ? sql`, ${released(unsent)}` : sql``;
    const going = keep && succeeded && unsent.length === 0 && !l.stopped;
    const more = going ? sql`, ${nextRows(l, last.row, done.length)}` : sql``;
    const result = await tx.execute(sql`
      with v(id, outbox_id, endpoint_id, event_id, event_type, attempt, attempted_at, status_code, duration_ms, error, outcome, next_attempt_at, status) as (values ${logged}),
      logged as (
        insert into webhook_deliveries (id, outbox_id, endpoint_id, event_id, event_type, attempt, attempted_at, status_code, duration_ms, error, outcome, next_attempt_at)
        select id, outbox_id, endpoint_id, event_id, event_type, attempt, attempted_at, status_code, duration_ms, error, outcome, next_attempt_at from v
        returning 1
      ), settled as (
        update webhook_outbox o set status = v.status, lease_until = null, next_attempt_at = coalesce(v.next_attempt_at, o.next_attempt_at)
        from v where o.id = v.outbox_id and o.attempts = v.attempt
        returning 1
      )${handBack}, state as (${endpointState(l.config, endpointId, last)})${more}
      ${going ? sql`select * from more` : sql`select 1 where false`}`);
    return claimedRows(result);
  });
}

/** The attempts as rows of the `v` values list the recording reads. */
function attemptValues(done: readonly Attempted[]): SQL {
  return sql.join(
    done.map(
      (d) => sql`(${uuidv7()}::uuid, ${d.row.id}::uuid, ${d.row.endpoint_id}::uuid, ${d.row.event_id}, ${d.row.type}, ${d.row.attempts}::int, ${d.attemptedAt.toISOString()}::timestamptz,
        ${d.outcome.statusCode}::int, ${d.durationMs}::int, ${d.outcome.error}::text, ${d.status === "delivered" ? "succeeded" : d.status === "pending" ? "retrying" : "failed"},
        ${d.next?.toISOString() ?? null}::timestamptz, ${d.status})`,
    ),
    sql`, `,
  );
}

/**
 * The endpoint's failure state after its last attempt: cleared by a success; after a failure, set
 * (from the first failure on) and the endpoint disabled once every attempt has failed for
 * WEBHOOKS_DISABLE_AFTER.
 */
function endpointState(config: Config, endpointId: string, last: Attempted): SQL {
  if (last.status === "delivered") return sql`update webhook_endpoints set failing_since = null where id = ${endpointId} and failing_since is not null returning 1`;
  const at = last.attemptedAt.toISOString();
  const disableBefore = new Date(last.attemptedAt.getTime() - config.webhooksDisableAfterSeconds * 1000);
  const disable = sql`coalesce(failing_since, ${at}::timestamptz) <= ${disableBefore.toISOString()}::timestamptz and status <> 'disabled'`;
  const reason = `every attempt has failed for ${config.webhooksDisableAfterSeconds} seconds (last: ${last.outcome.error ?? `HTTP ${last.outcome.statusCode}`}); PATCH status active to resume`;
  return sql`update webhook_endpoints set failing_since = coalesce(failing_since, ${at}::timestamptz),
      disabled_at = case when ${disable} then now() else disabled_at end,
      disabled_reason = case when ${disable} then ${reason} else disabled_reason end,
      status = case when ${disable} then 'disabled' else status end
    where id = ${endpointId} returning 1`;
}

/**
 * A CTE leasing the rows after the last one sent, when it was delivered and nothing of this
 * endpoint waits before it (a redelivery asked meanwhile, at its event's old place: the next claim
 * takes it), and only when every attempt was settled as this claim's.
 */
function nextRows(l: Leasing, lastRow: Claimed, attempts: number): SQL {
  const endpointId = lastRow.endpoint_id;
  return sql`more as (
    update webhook_outbox o set lease_until = now() + make_interval(secs => ${l.leaseMs / 1000}), attempts = o.attempts + 1
    from webhook_events ev, webhook_endpoints ep
    where o.id in (
        select t.id from webhook_outbox t
        where t.endpoint_id = ${endpointId} and t.status = 'pending' and (t.seq, t.id) > (${lastRow.seq}::bigint, ${lastRow.id}::uuid)
          and ${beforeWaiting(sql`${endpointId}::uuid`, sql`(${lastRow.seq}::bigint, ${lastRow.id}::uuid)`)}
        order by t.seq, t.id
        limit ${BATCH})
      and ev.id = o.event_id and ep.id = o.endpoint_id and ep.status = 'active'
      and not exists (select 1 from webhook_outbox h where h.endpoint_id = ${endpointId} and h.status = 'pending'
        and (h.seq, h.id) < (${lastRow.seq}::bigint, ${lastRow.id}::uuid) and h.id not in (select outbox_id from v))
      and (select count(*) from settled) = ${attempts}
    ${CLAIMED_COLUMNS})`;
}
