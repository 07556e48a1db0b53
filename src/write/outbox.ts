// The outbox side of webhooks: events are written by the write that causes them, in its
// transaction, so a rolled-back write sends nothing and a committed one is always sent. One
// statement per write: the event rows and one outbox row per subscribed endpoint, nothing at all
// when no endpoint of the project wants the event, and a NOTIFY (delivered at commit) that wakes
// the dispatchers.
import { type SQL, sql } from "drizzle-orm";
import { type Db, notifyCall } from "../../db/client";
import { diffJson } from "../lib/diff";
import { rows } from "../lib/json";
import { content } from "./dry-run";
import { RESTORED_FROM_TRASH } from "./record";

export const WEBHOOKS_CHANNEL = "cms_webhooks";

/** Every event type an endpoint may subscribe to (or `*`); webhook.test is sent by the test operation only. */
export const EVENT_TYPES = [
  "node.created",
  "node.updated",
  "node.published",
  "node.unpublished",
  "node.archived",
  "node.restored",
  "node.deleted",
  "translation.updated",
  "translation.published",
  "translation.unpublished",
  "translation.stale",
  "media.created",
  "media.updated",
  "media.deleted",
  "model.updated",
  "theme.updated",
  "project.updated",
] as const;
type EventType = (typeof EVENT_TYPES)[number];

/** One event to enqueue: `data` goes beside `project`; a node event names its `path` and `locale` (the public URL is derived from them). */
export interface PendingEvent {
  readonly type: EventType | "webhook.test";
  readonly data: Record<string, unknown>;
  /** The node's path, for its public URL (when the project has public_base_url). */
  readonly path?: string;
  readonly locale?: string | null;
  /** Only this endpoint (the test event, whatever it subscribes to), as a one-attempt delivery. */
  readonly endpointId?: string;
}

/**
 * Enqueues one event in the caller's transaction (any write: media, settings…): sent to every
 * endpoint of the project subscribed to it, once the transaction commits. Answers the event's id,
 * or null when no endpoint wanted it (nothing was written).
 */
export async function enqueueEvent(tx: Db, projectId: string, type: EventType, data: Record<string, unknown> = {}): Promise<string | null> {
  return (await enqueueEvents(tx, projectId, [{ type, data }]))[0] ?? null;
}

/**
 * A translation event's path as its public URL has it (as delivery and the sitemap resolve it): each
 * segment is the published slug in x.locale of the node at that prefix, when it has one.
 */
const LOCALISED_PATH = sql`(select string_agg(coalesce((select nullif(t.meta->>'slug', '') from published_nodes n
    join published_translations t on t.node_id = n.id and t.locale = x.locale and t.status = 'published'
    where n.project_id = p.id and n.path = array_to_string(s.segs[1:i], '/')), s.segs[i]), '/' order by i)
  from (select string_to_array(x.path, '/') as segs) s, generate_subscripts(s.segs, 1) as i)`;

/** Several events of one write, in order: their ids (only of those some endpoint wanted). */
export async function enqueueEvents(tx: Db, projectId: string, events: readonly PendingEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const input = JSON.stringify(events.map((e) => ({ type: e.type, data: e.data, path: e.path ?? null, locale: e.locale ?? null, only: e.endpointId ?? null })));
  const result = await tx.execute(sql`
    with p as (select id, slug, default_locale, public_base_url from projects where id = ${projectId}),
    eps as (select id, events from webhook_endpoints where project_id = ${projectId} and status <> 'disabled'),
    x as materialized (
      select 'msg_' || replace(gen_random_uuid()::text, '-', '') as id, e->>'type' as type, e->'data' as data, e->>'path' as path,
        e->>'locale' as locale, (e->>'only')::uuid as only, ord
      from jsonb_array_elements(${input}::jsonb) with ordinality as t(e, ord)
    ),
    targets as (
      select x.id as event_id, eps.id as endpoint_id, x.only is not null as manual from x join eps
        on (x.only is null and (eps.events ? '*' or eps.events ? x.type)) or eps.id = x.only
    ),
    ev as (
      insert into webhook_events (id, project_id, type, payload)
      select x.id, p.id, x.type, json_build_object(
          'type', x.type,
          'timestamp', to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'data', jsonb_build_object('project', jsonb_build_object('id', p.id, 'slug', p.slug)) || coalesce(x.data, '{}'::jsonb)
            || case when x.path is null then '{}'::jsonb else jsonb_build_object('url', case when p.public_base_url is null then null
                 else p.public_base_url || case when x.locale is null or x.locale = p.default_locale then '/' || x.path else '/' || x.locale || '/' || ${LOCALISED_PATH} end end) end
        )::text
      from x cross join p
      where exists (select 1 from targets where targets.event_id = x.id)
      order by x.ord
      returning id, seq
    ),
    ob as (
      insert into webhook_outbox (id, event_id, endpoint_id, seq, manual)
      select gen_random_uuid(), ev.id, targets.endpoint_id, ev.seq, targets.manual from ev join targets on targets.event_id = ev.id
      returning event_id
    )
    select distinct ob.event_id as id, ${notifyCall(WEBHOOKS_CHANNEL, projectId)} is null as n from ob`);
  return rows<{ id: string }>(result).map((r) => r.id);
}

/** What the write path (src/write/unit.ts) knows of a content write, to name its events. */
export interface WriteSummary {
  /** The operation the write runs under (undefined outside one). */
  readonly operation: string | undefined;
  /** Every node it changed: the locales changed alone (undefined: the node itself), the change's name outside an operation. */
  readonly changed: ReadonlyMap<string, { readonly locales: ReadonlySet<string | undefined>; readonly operation?: string }>;
  /** Its state after the write (the revision just recorded). */
  readonly recorded: ReadonlyMap<string, { readonly number: number; readonly snapshot: Record<string, unknown> }>;
  /** Nodes deleted, with the number of their last revision (their state before the deletion). */
  readonly deleted: ReadonlyMap<string, number>;
  /** Nodes the write published (their snapshot is then the published version), or one of whose translations. */
  readonly published?: ReadonlySet<string>;
  /** A published node's published version before the write (null: none), for node.published's `changes`. */
  readonly publishedBefore?: ReadonlyMap<string, Record<string, unknown> | null>;
}

const TRANSITION_EVENTS: Record<string, EventType> = {
  publish_node: "node.published",
  unpublish_node: "node.unpublished",
  archive_node: "node.archived",
  restore_node: "node.restored",
  [RESTORED_FROM_TRASH]: "node.restored",
};
const PROJECT_EVENTS: Record<string, EventType> = { update_content_model: "model.updated", update_theme: "theme.updated", update_project: "project.updated" };

/**
 * The events of one content write, named after its operation and what it changed, enqueued in its
 * transaction (called by contentWrite, after the revisions are recorded).
 */
export async function enqueueWriteEvents(tx: Db, projectId: string, w: WriteSummary): Promise<void> {
  const events: PendingEvent[] = [];
  const projectEvent = w.operation ? PROJECT_EVENTS[w.operation] : undefined;
  if (projectEvent) events.push({ type: projectEvent, data: {} });
  for (const [id, c] of w.changed) {
    if (w.deleted.has(id)) continue;
    const r = w.recorded.get(id);
    if (!r) continue;
    const s = r.snapshot;
    const node = { id, path: s.path, type: s.type, status: s.status, revision: r.number };
    const path = typeof s.path === "string" ? s.path : undefined;
    const op = c.operation ?? w.operation ?? "";
    const locales = [...c.locales];
    const transition = TRANSITION_EVENTS[op];
    const onlyLocales = locales.length > 0 && locales.every((l) => l !== undefined);
    const published = w.published?.has(id) ?? false;
    if (transition && !(onlyLocales && (op === "publish_node" || op === "unpublish_node"))) {
      // node.published carries the version now published (the write's snapshot: working copy and published version are one).
      // node.published carries the version published and what changed against the one before (what readers saw).
      const before = w.publishedBefore?.get(id);
      const version = transition === "node.published" && published ? { version: publishedVersion(s), changes: diffJson(before ? content(before) : {}, content(s)) } : {};
      events.push({ type: transition, data: { node, locale: null, ...version }, path });
    } else if (onlyLocales) {
      const translations = Array.isArray(s.translations) ? (s.translations as { locale?: string; status?: string }[]) : [];
      for (const locale of locales) {
        const t = translations.find((x) => x.locale === locale);
        const type = op === "unpublish_node" || op === "unpublish_translation" ? "translation.unpublished" : published ? "translation.published" : "translation.updated";
        events.push({ type, data: { node, locale, deleted: t === undefined, ...(type === "translation.published" ? { version: t } : {}) }, path, locale });
      }
    } else {
      events.push({ type: r.number === 1 ? "node.created" : "node.updated", data: { node, locale: null }, path });
    }
  }
  if (w.deleted.size > 0) events.push(...(await deletedEvents(tx, w.deleted)));
  await enqueueEvents(tx, projectId, events);
}

/** A node's published version as node.published carries it: its snapshot without its status and translations (each has its own event). */
function publishedVersion(snapshot: Record<string, unknown>): Record<string, unknown> {
  const { status: _s, deleted: _d, translations: _t, ...version } = snapshot;
  return version;
}

/** node.deleted for every node deleted (a subtree: each node), read from their last revisions. */
async function deletedEvents(tx: Db, deleted: ReadonlyMap<string, number>): Promise<PendingEvent[]> {
  const roots = JSON.stringify([...deleted].map(([id, number]) => ({ id, number })));
  const found = await tx.execute(sql`
    select r.node_id as id, r.number, r.snapshot->>'path' as path, r.snapshot->>'type' as type, r.snapshot->>'status' as status
    from jsonb_to_recordset(${roots}::jsonb) as d(id uuid, number int)
    join revisions root on root.node_id = d.id and root.number = d.number
    join revisions r on r.project_id = root.project_id and r.snapshot->'deleted'->>'root' = d.id::text and r.created_at = root.created_at
    where exists (select 1 from webhook_endpoints e where e.project_id = root.project_id and e.status <> 'disabled')
    order by r.snapshot->>'path'`);
  return rows<{ id: string; number: number; path: string; type: string; status: string }>(found).map((r) => ({
    type: "node.deleted",
    data: { node: { id: r.id, path: r.path, type: r.type, status: r.status, revision: Number(r.number) }, locale: null },
    path: r.path,
  }));
}

/**
 * Locks the endpoints `endpoints` selects (a subquery or an array of ids), then their outbox rows, for
 * a transaction about to delete them by a cascade (an endpoint's, a project's). The endpoints first:
 * a dispatcher recording attempts locks its endpoint before it touches its rows
 * (src/webhooks/lease.ts), so it either finishes first or finds the endpoint gone. The rows then in
 * the order a claim locks them (an endpoint's head, then the rows behind it): a claim racing the
 * delete either has the head, and the delete waits for it holding nothing of that endpoint, or skips
 * it. Left to the cascade's own order, the delete held rows that a claim or a recording holding
 * others waited for: deadlocks (CI and tests/webhooks-delete-race.test.ts, 40P01).
 */
export async function lockEndpointsForDelete(tx: Db, endpoints: SQL): Promise<void> {
  await tx.execute(sql`select 1 from webhook_endpoints e where e.id = any(${endpoints}) order by e.id for update`);
  await tx.execute(sql`select 1 from webhook_outbox o where o.endpoint_id = any(${endpoints}) order by o.endpoint_id, o.seq, o.id for update`);
}
