// Approvals: an MCP caller without content:publish that asks to publish, unpublish,
// archive, restore or delete gets a request a person decides on the approval page (or through the
// admin API); its retry then carries the change out once, or answers "rejected". Everything lives
// in PostgreSQL, so any instance answers any step.
import { and, count, desc, eq, inArray, lt, sql } from "drizzle-orm";
import type { z } from "zod";
import type { Db } from "../../db/client";
import { type Actor, type Approval, activity, approvals, mcpClientCapabilities, nodes, publishedNodes, revisions, translations } from "../../db/schema";
import type { Config } from "../config";
import { AppError, notFound } from "../errors";
import type { McpCaller } from "../lib/caller";
import { diffJson } from "../lib/diff";
import { isUuid, uuidv7 } from "../lib/ids";
import { isPlainObject } from "../lib/merge";
import { readPaging } from "../lib/paging";
import { actorOf, type WriteContext } from "../write/context";
import { publishedSnapshot } from "../write/record";
import type { ApprovalOut } from "./model";

/** Retries are matched to their request by who asks: the MCP token, or the OAuth user and client (a refreshed token is the same asker). */
const requesterOf = (caller: McpCaller): string => (caller.kind === "mcp_token" ? `mcp_token:${caller.credentialId}` : `oauth:${caller.userId ?? caller.credentialId}:${caller.clientId ?? ""}`);

export const approvalUrl = (config: Config, id: string): string => `${config.publicUrl}/approvals/${id}`;

/** What a request asks, as stored and compared: the arguments without the unit's own fields. */
function askedArguments(args: Record<string, unknown>): Record<string, unknown> {
  const { dry_run: _d, expected_revision: _e, ...rest } = args;
  return rest;
}

/** The node's revision now: its row's, or (a node in the trash) its last revision's; null when neither exists. */
async function currentRevision(db: Db, projectId: string, nodeId: string): Promise<number | null> {
  const [live] = await db
    .select({ revision: nodes.revision })
    .from(nodes)
    .where(and(eq(nodes.projectId, projectId), eq(nodes.id, nodeId)))
    .limit(1);
  if (live) return live.revision;
  const [last] = await db
    .select({ number: sql<number>`max(${revisions.number})` })
    .from(revisions)
    .where(and(eq(revisions.projectId, projectId), eq(revisions.nodeId, nodeId)));
  return last?.number === null || last?.number === undefined ? null : Number(last.number);
}

export type Gate =
  | { readonly kind: "approved"; readonly approval: Approval }
  | { readonly kind: "rejected"; readonly approval: Approval }
  | { readonly kind: "partial"; readonly approval: Approval }
  | { readonly kind: "ask"; readonly approval: Approval; readonly voided: Approval | null };

/**
 * The tool call of a caller lacking content:publish: carried out when a person approved this very
 * request at the node's current revision (the approval is used up here), "rejected" once when one
 * was rejected, else the pending request to show again or a new one. A request whose node changed
 * since it was asked is void, and a new one is made.
 */
export async function gateApproval(db: Db, config: Config, projectId: string, caller: McpCaller, operation: string, args: Record<string, unknown>, now: Date): Promise<Gate> {
  const nodeId = String(args.node_id).toLowerCase();
  const asked = askedArguments(args);
  const requester = requesterOf(caller);
  await expireApprovals(db, projectId, now);
  const revision = await currentRevision(db, projectId, nodeId);
  if (revision === null) throw notFound("node");
  const [latest] = await db
    .select()
    .from(approvals)
    .where(
      and(
        eq(approvals.projectId, projectId),
        eq(approvals.requester, requester),
        eq(approvals.operation, operation),
        eq(approvals.nodeId, nodeId),
        inArray(approvals.status, ["pending", "approved", "rejected", "partial"]),
        sql`${approvals.arguments} = ${JSON.stringify(asked)}::jsonb`,
      ),
    )
    .orderBy(desc(approvals.createdAt), desc(approvals.id))
    .limit(1);
  let voided: Approval | null = null;
  if (latest?.status === "partial") {
    // Approved in part: the person published it already (a new revision); the retry hears what was left out, once.
    const [spent] = await db
      .update(approvals)
      .set({ status: "used", usedAt: now })
      .where(and(eq(approvals.id, latest.id), eq(approvals.status, "partial")))
      .returning();
    if (spent) return { kind: "partial", approval: { ...spent, status: "partial" } };
  } else if (latest && latest.revision !== revision) {
    const [v] = await db
      .update(approvals)
      .set({ status: "void" })
      .where(and(eq(approvals.id, latest.id), eq(approvals.status, latest.status)))
      .returning();
    voided = v ?? latest;
  } else if (latest) {
    if (latest.status === "pending") return { kind: "ask", approval: latest, voided: null };
    // Single use: the retry that carries the approval out (or hears the rejection) spends it.
    const [spent] = await db
      .update(approvals)
      .set({ status: "used", usedAt: now })
      .where(and(eq(approvals.id, latest.id), eq(approvals.status, latest.status)))
      .returning();
    if (spent) return { kind: latest.status === "approved" ? "approved" : "rejected", approval: { ...spent, status: latest.status } };
  }
  const [created] = await db
    .insert(approvals)
    .values({
      id: uuidv7(now.getTime()),
      projectId,
      nodeId,
      operation,
      arguments: asked,
      revision,
      requestedBy: actorOf(caller),
      requester,
      createdAt: now,
      expiresAt: new Date(now.getTime() + config.approvalTtlSeconds * 1000),
    })
    .returning();
  if (!created) throw new Error("approval not recorded");
  return { kind: "ask", approval: created, voided };
}

/** The write an approval allowed failed: the approval stands again (the retry checks the node's revision anew). */
export async function releaseApproval(db: Db, id: string): Promise<void> {
  await db
    .update(approvals)
    .set({ status: "approved", usedAt: null })
    .where(and(eq(approvals.id, id), eq(approvals.status, "used")));
}

/**
 * Requests (and unused approvals) past their time are expired, each with an activity entry (the
 * system decided): whenever a project's approvals are read or decided, and by the hourly
 * housekeeping for every project (`projectId` null). Answers how many.
 */
export async function expireApprovals(db: Db, projectId: string | null, now: Date): Promise<number> {
  const expired = await db
    .update(approvals)
    .set({ status: "expired", decidedAt: now })
    .where(and(projectId === null ? undefined : eq(approvals.projectId, projectId), inArray(approvals.status, ["pending", "approved"]), lt(approvals.expiresAt, now)))
    .returning();
  if (expired.length === 0) return 0;
  const system: Actor = { kind: "system", id: null, name: null };
  await db
    .insert(activity)
    .values(
      expired.map((a) => ({ id: uuidv7(now.getTime()), projectId: a.projectId, operation: "expire_approval", actor: system, target: approvalTarget(a), nodeId: a.nodeId, revision: a.revision })),
    );
  return expired.length;
}

const approvalTarget = (a: Approval): Record<string, unknown> => ({ kind: "approval", id: a.id, operation: a.operation, node_id: a.nodeId });

/**
 * A person's decision on a pending request: recorded with who decided, in the activity log too. A
 * request whose node has changed since is void (409): the agent must ask again.
 */
export async function decideApproval(db: Db, ctx: WriteContext, projectId: string, id: string, decision: "approved" | "rejected", now: Date, note: string | null = null): Promise<Approval> {
  const decider = ctx.actor;
  const found = await getApproval(db, projectId, id, now);
  assertPending(found);
  if (decision === "approved" && (await currentRevision(db, projectId, found.nodeId)) !== found.revision) {
    await db
      .update(approvals)
      .set({ status: "void" })
      .where(and(eq(approvals.id, id), eq(approvals.status, "pending")));
    throw new AppError("conflict", "the node has changed since this approval was asked for: the request is void, the agent must ask again", { status: "void" });
  }
  const [decided] = await db
    .update(approvals)
    .set({ status: decision, decidedBy: decider, decidedAt: now, decisionNote: note })
    .where(and(eq(approvals.id, id), eq(approvals.status, "pending")))
    .returning();
  if (!decided) throw new AppError("conflict", "this approval request was decided meanwhile", { status: "decided" });
  await db.insert(activity).values({
    id: uuidv7(now.getTime()),
    projectId,
    operation: decision === "approved" ? "approve_approval" : "reject_approval",
    actor: decider,
    target: approvalTarget(decided),
    nodeId: decided.nodeId,
    revision: decided.revision,
  });
  ctx.state.recorded = true;
  return decided;
}

type Out = z.input<typeof ApprovalOut>;

export function approvalToWire(config: Config, a: Approval): Out {
  const actor = (x: Actor) => ({ kind: x.kind, id: x.id, name: x.name, ...(x.user !== undefined ? { user: x.user } : {}), ...(x.client !== undefined ? { client: x.client } : {}) });
  return {
    id: a.id,
    node_id: a.nodeId,
    operation: a.operation,
    arguments: a.arguments,
    revision: a.revision,
    status: a.status,
    requested_by: actor(a.requestedBy),
    decided_by: a.decidedBy ? actor(a.decidedBy) : null,
    note: a.decisionNote,
    parts: a.decisionParts ? { accepted: [...a.decisionParts.accepted], left_out: [...a.decisionParts.left_out] } : null,
    decided_at: a.decidedAt?.toISOString() ?? null,
    used_at: a.usedAt?.toISOString() ?? null,
    created_at: a.createdAt.toISOString(),
    expires_at: a.expiresAt.toISOString(),
    url: approvalUrl(config, a.id),
  };
}

export function assertPending(a: Approval): void {
  if (a.status !== "pending") throw new AppError("conflict", `this approval request is ${a.status}: only a pending one can be decided`, { status: a.status });
}

/** One of the project's approvals (expired ones marked first); 404 otherwise. */
export async function getApproval(db: Db, projectId: string, id: string, now: Date): Promise<Approval> {
  if (!isUuid(id)) throw notFound("approval");
  await expireApprovals(db, projectId, now);
  const [found] = await db
    .select()
    .from(approvals)
    .where(and(eq(approvals.projectId, projectId), eq(approvals.id, id.toLowerCase())))
    .limit(1);
  if (!found) throw notFound("approval");
  return found;
}

export async function listApprovals(db: Db, config: Config, projectId: string, q: { status?: Approval["status"]; page?: number; per_page?: number }, now: Date) {
  await expireApprovals(db, projectId, now);
  const { page, perPage } = readPaging(q, { defaultPerPage: 20 });
  const where = and(eq(approvals.projectId, projectId), q.status ? eq(approvals.status, q.status) : undefined);
  const [rows, [counted]] = await Promise.all([
    db
      .select()
      .from(approvals)
      .where(where)
      .orderBy(desc(approvals.createdAt), desc(approvals.id))
      .limit(perPage)
      .offset((page - 1) * perPage),
    db.select({ total: count() }).from(approvals).where(where),
  ]);
  return { approvals: rows.map((a) => approvalToWire(config, a)), total: Number(counted?.total ?? 0), page, per_page: perPage };
}

/** An approval by id alone (the page's link names no project), with what the page shows. */
export async function findApproval(db: Db, id: string): Promise<Approval | null> {
  const [a] = await db.select().from(approvals).where(eq(approvals.id, id)).limit(1);
  return a ?? null;
}

/** One time of a schedule on the page: what it is now, and what the request makes of it. */
export interface ScheduleTime {
  readonly field: "publish_at" | "unpublish_at";
  /** The time set now (ISO 8601, UTC), or null. */
  readonly now: string | null;
  /** As asked: a time (as the agent wrote it, with its offset), null to clear it, undefined to keep it. */
  readonly asked: string | null | undefined;
}

/** What a schedule_node request changes: which version (the node, or its translation into `locale`), and its times. */
export interface ScheduleView {
  readonly locale: string | null;
  readonly times: readonly ScheduleTime[];
}

export interface ApprovalChange {
  readonly title: string;
  readonly path: string;
  readonly diff: ReturnType<typeof diffJson>;
  readonly published: number | null;
  /** schedule_node only: the times the scheduler would act at. */
  readonly schedule: ScheduleView | null;
}

const askedTime = (v: unknown): string | null | undefined => (typeof v === "string" ? v : v === null ? null : undefined);

/** The schedule a schedule_node request sets, beside the one the node (or translation) carries now. */
async function scheduleView(db: Db, a: Approval): Promise<ScheduleView> {
  const locale = typeof a.arguments.locale === "string" ? a.arguments.locale : null;
  const columns = { publishAt: locale === null ? nodes.publishAt : translations.publishAt, unpublishAt: locale === null ? nodes.unpublishAt : translations.unpublishAt };
  const [current] =
    locale === null
      ? await db.select(columns).from(nodes).where(eq(nodes.id, a.nodeId)).limit(1)
      : await db
          .select(columns)
          .from(translations)
          .where(and(eq(translations.nodeId, a.nodeId), sql`lower(${translations.locale}) = lower(${locale})`))
          .limit(1);
  return {
    locale,
    times: [
      { field: "publish_at", now: current?.publishAt?.toISOString() ?? null, asked: askedTime(a.arguments.publish_at) },
      { field: "unpublish_at", now: current?.unpublishAt?.toISOString() ?? null, asked: askedTime(a.arguments.unpublish_at) },
    ],
  };
}

/**
 * What readers would see once a schedule_node request's times come: with publish_at, the working
 * copy published (the node's, or only the translation's into `locale`); with unpublish_at alone,
 * the published version taken off (the node's status, or the translation's); asking neither (times
 * cleared), the published version unchanged.
 */
function scheduledContent(working: Record<string, unknown>, published: Record<string, unknown> | null, a: Approval): Record<string, unknown> {
  const locale = typeof a.arguments.locale === "string" ? a.arguments.locale.toLowerCase() : null;
  if (typeof a.arguments.publish_at === "string") {
    const after = publishedPart(working, locale, published);
    return locale === null ? { ...after, status: "published" } : after;
  }
  const now = published ?? {};
  if (typeof a.arguments.unpublish_at !== "string") return now;
  if (locale === null) return { ...now, status: "draft" };
  const list = Array.isArray(now.translations) ? (now.translations as unknown[]) : [];
  return { ...now, translations: list.map((t) => (isPlainObject(t) && String(t.locale).toLowerCase() === locale ? { ...t, status: "draft" } : t)) };
}

/**
 * What the page shows a person: the node's title and path, and the change against the published
 * version (the node's last revision that was published): for a delete, everything goes; for a
 * restore, the revision restored; for a schedule, its times and what its publication (or
 * unpublication) changes; otherwise the node as it was when asked, with its new status.
 */
export async function approvalChange(db: Db, a: Approval): Promise<ApprovalChange> {
  const snapshots = await db
    .select({ number: revisions.number, snapshot: revisions.snapshot })
    .from(revisions)
    .where(and(eq(revisions.projectId, a.projectId), eq(revisions.nodeId, a.nodeId)))
    .orderBy(desc(revisions.number))
    .limit(200);
  // What readers see now: the node's published version (its translations as published).
  const published = await publishedVersion(db, a.nodeId);
  const at = snapshots.find((r) => r.number === a.revision)?.snapshot ?? snapshots[0]?.snapshot ?? {};
  let after: Record<string, unknown> = strip(at);
  if (a.operation === "delete_node") after = {};
  else if (a.operation === "restore_revision" && typeof a.arguments.revision === "number") after = strip(snapshots.find((r) => r.number === a.arguments.revision)?.snapshot ?? at);
  else if (a.operation === "schedule_node") after = scheduledContent(after, published ? strip(published.snapshot) : null, a);
  else {
    const status = { publish_node: "published", unpublish_node: "draft", archive_node: "archived", restore_node: "draft" }[a.operation];
    if (status) after = { ...after, status };
    // Publishing brings the working copy and the translations that have (or get) a published version.
    if (a.operation === "publish_node") after = publishedPart(after, typeof a.arguments.locale === "string" ? a.arguments.locale : null, published?.snapshot ?? null);
  }
  const title = typeof at.title === "string" ? at.title : a.nodeId;
  const path = typeof at.path === "string" ? at.path : "";
  const schedule = a.operation === "schedule_node" ? await scheduleView(db, a) : null;
  return { title, path, diff: diffJson(published ? strip(published.snapshot) : {}, after), published: published?.number ?? null, schedule };
}

/** The node's published version now and the revision that published it; null when it has none. */
async function publishedVersion(db: Db, nodeId: string): Promise<{ snapshot: Record<string, unknown>; number: number } | null> {
  const snapshot = await publishedSnapshot(db, nodeId);
  if (snapshot === null) return null;
  const [row] = await db.select({ revision: publishedNodes.revision }).from(publishedNodes).where(eq(publishedNodes.id, nodeId));
  return { snapshot, number: row?.revision ?? 0 };
}

/**
 * What readers would see after publish_node: the working copy with its published translations
 * (`locale`: only that translation changes, over the published version).
 */
function publishedPart(working: Record<string, unknown>, locale: string | null, published: Record<string, unknown> | null): Record<string, unknown> {
  const list = (s: Record<string, unknown> | null) => (Array.isArray(s?.translations) ? (s.translations as Record<string, unknown>[]) : []);
  if (locale === null) return { ...working, translations: list(working).filter((t) => t.status === "published") };
  const mine = list(working).find((t) => String(t.locale).toLowerCase() === locale.toLowerCase());
  const others = list(published).filter((t) => String(t.locale).toLowerCase() !== locale.toLowerCase());
  const base = published ?? working;
  return { ...base, translations: [...others, ...(mine ? [{ ...mine, status: "published" }] : [])].sort((x, y) => String(x.locale).localeCompare(String(y.locale))) };
}

const strip = (s: Record<string, unknown>): Record<string, unknown> => {
  const { deleted: _, published_at: _p, ...rest } = isPlainObject(s) ? s : {};
  return rest;
};

/**
 * Initialize of a 2025-11-25 client: whether it declared URL elicitation is kept per asker for its
 * later calls (a stateless server sees capabilities only then). Only a declaration is stored; a
 * client that does not declare it clears what an earlier one of the same asker declared.
 */
export async function rememberUrlElicitation(db: Db, caller: McpCaller, declared: boolean, now: Date): Promise<void> {
  const requester = requesterOf(caller);
  if (!declared) {
    await db.delete(mcpClientCapabilities).where(eq(mcpClientCapabilities.requester, requester));
    return;
  }
  await db
    .insert(mcpClientCapabilities)
    .values({ requester, urlElicitation: true, updatedAt: now })
    .onConflictDoUpdate({ target: mcpClientCapabilities.requester, set: { urlElicitation: true, updatedAt: now } });
}

export async function declaredUrlElicitation(db: Db, caller: McpCaller): Promise<boolean> {
  const [row] = await db
    .select({ url: mcpClientCapabilities.urlElicitation })
    .from(mcpClientCapabilities)
    .where(eq(mcpClientCapabilities.requester, requesterOf(caller)))
    .limit(1);
  return row?.url === true;
}
