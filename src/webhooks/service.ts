// Webhook endpoints of a project: created with a secret shown once and sealed at rest,
// their URL checked by the outbound guard (again at every connection, by the dispatcher), paused,
// resumed, rotated; their deliveries log read; an event redelivered or a test event sent.
import { and, asc, count, desc, eq, sql } from "drizzle-orm";
import type { z } from "zod";
import { type Db, notify } from "../../db/client";
import { type Project, projects, webhookDeliveries, webhookEndpoints, webhookEvents, webhookOutbox } from "../../db/schema";
import type { AppDeps } from "../core/deps";
import { AppError, notFound } from "../errors";
import { isUuid, uuidv7 } from "../lib/ids";
import { readPaging } from "../lib/paging";
import { oneRow } from "../lib/rows";
import { SealError, sealedKeyId } from "../lib/seal";
import { sqlArray } from "../lib/sql";
import { checkOutboundUrl, systemResolver, type UrlPolicy } from "../lib/ssrf";
import { enqueueEvents, lockEndpointsForDelete, WEBHOOKS_CHANNEL } from "../write/outbox";
import type { DeliveriesQuery, DeliveryOut, EndpointIn, EndpointOut, EndpointPatch } from "./model";
import { newSecret } from "./sign";

type EndpointRow = typeof webhookEndpoints.$inferSelect;

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

/**
 * The URL as a reader without webhooks:write sees it: its origin only. Receivers often take their
 * credential in the path or the query (`/services/T0/B0/XXXX`, `?token=`), which content:read and
 * projects:read must not hand out; credentials in the user part are refused at create.
 */
function maskedUrl(url: string): string {
  const u = URL.parse(url);
  if (!u) return "…";
  return u.pathname === "/" && !u.search ? u.origin : `${u.origin}/…`;
}

/** `revealUrl`: the caller may change the endpoint (webhooks:write), so it may read its whole URL. */
function endpointToWire(e: EndpointRow, pending: number, revealUrl = true): z.input<typeof EndpointOut> {
  return {
    id: e.id,
    project_id: e.projectId,
    url: revealUrl ? e.url : maskedUrl(e.url),
    url_masked: !revealUrl,
    description: e.description,
    events: e.events,
    status: e.status as "active" | "paused" | "disabled",
    disabled_reason: e.disabledReason,
    disabled_at: iso(e.disabledAt),
    failing_since: iso(e.failingSince),
    pending,
    previous_secret_expires_at: e.previousSecretSealed ? iso(e.previousSecretExpiresAt) : null,
    created_at: e.createdAt.toISOString(),
    updated_at: e.updatedAt.toISOString(),
  };
}

/** The outbound guard's policy for webhook URLs (WEBHOOKS_ALLOW_PRIVATE_URLS). */
export function webhookUrlPolicy(deps: AppDeps, unresolvable: UrlPolicy["unresolvable"]): UrlPolicy {
  return {
    allowPrivate: deps.config.webhooksAllowPrivateUrls,
    resolve: deps.resolveHost ?? systemResolver,
    unresolvable,
    timeoutMs: Math.min(5000, deps.config.webhooksTimeoutMs),
    setting: "WEBHOOKS_ALLOW_PRIVATE_URLS",
  };
}

async function checkUrl(deps: AppDeps, raw: string): Promise<string> {
  const check = await checkOutboundUrl(raw.trim(), webhookUrlPolicy(deps, "accept"));
  if (!check.ok) throw new AppError("invalid_request", `url ${check.reason}`, { field: "url" });
  if (check.url.hash) throw new AppError("invalid_request", "url must not carry a #fragment", { field: "url" });
  return check.url.href;
}

const normaliseEvents = (events: readonly string[]): string[] => (events.includes("*") ? ["*"] : [...new Set(events)]);

const aadOf = (endpointId: string, projectId: string, which: "current" | "previous"): string => `webhook_endpoints.secret:${which}:${endpointId}:${projectId}`;

export type SigningEndpoint = Pick<EndpointRow, "id" | "projectId" | "secretSealed" | "previousSecretSealed" | "previousSecretExpiresAt">;

/** Secrets a dispatcher keeps opened (by endpoint and sealed value: a rotation seals a new one). */
const OPENED_MAX = 1000;

/**
 * The secrets an attempt is signed with now: the current one, and the previous one during its
 * grace period. `opened` keeps them opened across attempts (the dispatcher's, in its memory): an
 * attempt then signs without waiting for a decryption.
 */
export async function signingSecrets(deps: AppDeps, e: SigningEndpoint, now: Date, opened?: Map<string, string>): Promise<string[]> {
  const open = async (sealed: string, which: "current" | "previous"): Promise<string> => {
    const key = `${e.id} ${which} ${sealed}`;
    const known = opened?.get(key);
    if (known !== undefined) return known;
    const secret = await deps.keyRing.open(sealed, aadOf(e.id, e.projectId, which)).catch((err: unknown) => {
      deps.log.error("webhook secret cannot be opened", { endpoint_id: e.id, project_id: e.projectId, reason: err instanceof SealError ? err.reason : "error", sealed_with: sealedKeyId(sealed) });
      throw new AppError("internal", "the endpoint's stored secret cannot be opened with the configured key ring; rotate it", undefined, undefined, { cause: err });
    });
    if (opened) {
      if (opened.size >= OPENED_MAX) opened.delete(opened.keys().next().value as string);
      opened.set(key, secret);
    }
    return secret;
  };
  const out = [await open(e.secretSealed, "current")];
  if (e.previousSecretSealed && e.previousSecretExpiresAt && e.previousSecretExpiresAt > now) out.push(await open(e.previousSecretSealed, "previous"));
  return out;
}

async function pendingCounts(db: Db, ids: readonly string[]): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const found = await db
    .select({ id: webhookOutbox.endpointId, n: count() })
    .from(webhookOutbox)
    .where(
      and(
        eq(webhookOutbox.status, "pending"),
        sql`${webhookOutbox.endpointId} in (${sql.join(
          ids.map((id) => sql`${id}::uuid`),
          sql`, `,
        )})`,
      ),
    )
    .groupBy(webhookOutbox.endpointId);
  return new Map(found.map((r) => [r.id, Number(r.n)]));
}

export async function listEndpoints(db: Db, projectId: string, revealUrls: boolean): Promise<z.input<typeof EndpointOut>[]> {
  const found = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.projectId, projectId)).orderBy(asc(webhookEndpoints.createdAt), asc(webhookEndpoints.id));
  const pending = await pendingCounts(
    db,
    found.map((e) => e.id),
  );
  return found.map((e) => endpointToWire(e, pending.get(e.id) ?? 0, revealUrls));
}

/** One endpoint of the project; another project's is 404 like a missing one. */
async function getEndpoint(db: Db, projectId: string, id: string): Promise<EndpointRow> {
  const [row] = isUuid(id)
    ? await db
        .select()
        .from(webhookEndpoints)
        .where(and(eq(webhookEndpoints.id, id.toLowerCase()), eq(webhookEndpoints.projectId, projectId)))
    : [];
  if (!row) throw notFound("webhook endpoint");
  return row;
}

export async function readEndpoint(db: Db, projectId: string, id: string, revealUrl: boolean): Promise<z.input<typeof EndpointOut>> {
  const row = await getEndpoint(db, projectId, id);
  return endpointToWire(row, (await pendingCounts(db, [row.id])).get(row.id) ?? 0, revealUrl);
}

export async function createEndpoint(deps: AppDeps, project: Project, input: z.output<typeof EndpointIn>): Promise<{ endpoint: z.input<typeof EndpointOut>; secret: string }> {
  const url = await checkUrl(deps, input.url);
  const max = deps.config.webhooksMaxEndpoints;
  const now = deps.now();
  const id = uuidv7(now.getTime());
  const secret = newSecret();
  const secretSealed = await deps.keyRing.seal(secret, aadOf(id, project.id, "current"));
  // Each event is one request per endpoint: the bound on endpoints bounds what one write sends. The
  // project's row is locked for the count, so concurrent creations cannot pass it together.
  const row = await deps.db.transaction(async (tx) => {
    await tx.select({ id: projects.id }).from(projects).where(eq(projects.id, project.id)).for("update");
    const [{ n } = { n: 0 }] = await tx.select({ n: count() }).from(webhookEndpoints).where(eq(webhookEndpoints.projectId, project.id));
    if (Number(n) >= max) throw new AppError("conflict", `a project has at most ${max} webhook endpoints (WEBHOOKS_MAX_ENDPOINTS); delete one first`, { max });
    return oneRow(
      await tx
        .insert(webhookEndpoints)
        .values({ id, projectId: project.id, url, description: input.description ?? null, events: normaliseEvents(input.events), secretSealed, createdAt: now, updatedAt: now })
        .returning(),
    );
  });
  return { endpoint: endpointToWire(row, 0), secret };
}

export async function updateEndpoint(deps: AppDeps, project: Project, id: string, patch: z.output<typeof EndpointPatch>): Promise<{ endpoint: z.input<typeof EndpointOut>; secret?: string }> {
  const url = patch.url === undefined ? undefined : await checkUrl(deps, patch.url);
  const now = deps.now();
  const result = await deps.db.transaction(async (tx) => {
    const [current] = await tx
      .select()
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.id, isUuid(id) ? id.toLowerCase() : "00000000-0000-0000-0000-000000000000"), eq(webhookEndpoints.projectId, project.id)))
      .for("update");
    if (!current) throw notFound("webhook endpoint");
    const changes: Partial<EndpointRow> = { updatedAt: now };
    if (url !== undefined) changes.url = url;
    if (patch.events !== undefined) changes.events = normaliseEvents(patch.events);
    if (patch.description !== undefined) changes.description = patch.description;
    if (patch.status !== undefined) {
      changes.status = patch.status;
      // Resuming a disabled endpoint starts it afresh: its held events are sent, failures counted anew.
      if (patch.status === "active" && current.status === "disabled") Object.assign(changes, { disabledReason: null, disabledAt: null, failingSince: null });
    }
    let secret: string | undefined;
    if (patch.rotate_secret) {
      secret = newSecret();
      const old = await deps.keyRing.open(current.secretSealed, aadOf(current.id, current.projectId, "current"));
      changes.secretSealed = await deps.keyRing.seal(secret, aadOf(current.id, current.projectId, "current"));
      changes.previousSecretSealed = await deps.keyRing.seal(old, aadOf(current.id, current.projectId, "previous"));
      changes.previousSecretExpiresAt = new Date(now.getTime() + deps.config.webhooksSecretGraceSeconds * 1000);
    }
    const row = oneRow(await tx.update(webhookEndpoints).set(changes).where(eq(webhookEndpoints.id, current.id)).returning());
    // Resumed: the held events are due now; the dispatchers hear of it at commit.
    if (row.status === "active" && current.status !== "active") await notify(tx, WEBHOOKS_CHANNEL, project.id);
    return { row, secret };
  });
  const endpoint = endpointToWire(result.row, (await pendingCounts(deps.db, [result.row.id])).get(result.row.id) ?? 0);
  return result.secret === undefined ? { endpoint } : { endpoint, secret: result.secret };
}

export async function deleteEndpoint(db: Db, projectId: string, id: string): Promise<void> {
  const row = await getEndpoint(db, projectId, id);
  await deleteEndpoints(db, [row.id]);
}

/** Endpoints deleted with their outbox rows (the foreign key cascades), locked first as a claim locks them. */
export async function deleteEndpoints(db: Db, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.transaction(async (tx) => {
    const endpoints = sqlArray(ids, "uuid");
    await lockEndpointsForDelete(tx, endpoints);
    await tx.execute(sql`delete from ${webhookEndpoints} where ${webhookEndpoints.id} = any(${endpoints})`);
  });
}

/** The endpoint's attempts, newest first. */
export async function listDeliveries(
  db: Db,
  projectId: string,
  endpointId: string,
  q: z.output<typeof DeliveriesQuery>,
): Promise<{ deliveries: z.input<typeof DeliveryOut>[]; total: number; page: number; per_page: number }> {
  const endpoint = await getEndpoint(db, projectId, endpointId);
  const { page, perPage } = readPaging(q, { defaultPerPage: 50 });
  const where = and(eq(webhookDeliveries.endpointId, endpoint.id), q.event_id ? eq(webhookDeliveries.eventId, q.event_id) : undefined);
  const [found, [total]] = await Promise.all([
    db
      .select()
      .from(webhookDeliveries)
      .where(where)
      .orderBy(desc(webhookDeliveries.attemptedAt), desc(webhookDeliveries.id))
      .limit(perPage)
      .offset((page - 1) * perPage),
    db.select({ n: count() }).from(webhookDeliveries).where(where),
  ]);
  return {
    deliveries: found.map((d) => ({
      id: d.id,
      event_id: d.eventId,
      event_type: d.eventType,
      attempt: d.attempt,
      attempted_at: d.attemptedAt.toISOString(),
      status_code: d.statusCode,
      duration_ms: d.durationMs,
      error: d.error,
      outcome: d.outcome as "succeeded" | "retrying" | "failed",
      next_attempt_at: iso(d.nextAttemptAt),
    })),
    total: Number(total?.n ?? 0),
    page,
    per_page: perPage,
  };
}

/** Sends an attempted event again to the endpoint (one attempt, the same webhook-id), next in its order. */
export async function redeliver(deps: AppDeps, projectId: string, endpointId: string, deliveryId: string): Promise<{ event_id: string; event_type: string }> {
  const endpoint = await getEndpoint(deps.db, projectId, endpointId);
  if (endpoint.status === "disabled") throw new AppError("conflict", "the endpoint is disabled; resume it first (PATCH status active)");
  const [found] = isUuid(deliveryId)
    ? await deps.db
        .select({ eventId: webhookEvents.id, type: webhookEvents.type, seq: webhookEvents.seq })
        .from(webhookDeliveries)
        .innerJoin(webhookEvents, eq(webhookEvents.id, webhookDeliveries.eventId))
        .where(and(eq(webhookDeliveries.id, deliveryId.toLowerCase()), eq(webhookDeliveries.endpointId, endpoint.id)))
    : [];
  if (!found) throw notFound("delivery");
  await deps.db.transaction(async (tx) => {
    await tx.insert(webhookOutbox).values({ id: uuidv7(), eventId: found.eventId, endpointId: endpoint.id, seq: found.seq, manual: true });
    await notify(tx, WEBHOOKS_CHANNEL, projectId);
  });
  return { event_id: found.eventId, event_type: found.type };
}

/** A webhook.test event to this endpoint only (one attempt), whatever it subscribes to. */
export async function sendTestEvent(deps: AppDeps, project: Project, endpointId: string): Promise<{ event_id: string; event_type: string }> {
  const endpoint = await getEndpoint(deps.db, project.id, endpointId);
  if (endpoint.status === "disabled") throw new AppError("conflict", "the endpoint is disabled; resume it first (PATCH status active)");
  const [id] = await deps.db.transaction((tx) => enqueueEvents(tx, project.id, [{ type: "webhook.test", data: { endpoint: { id: endpoint.id } }, endpointId: endpoint.id }]));
  if (!id) throw notFound("webhook endpoint"); // deleted meanwhile
  return { event_id: id, event_type: "webhook.test" };
}
