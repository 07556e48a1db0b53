// The one write path (STYLE.md habit 15). Every content write of every transport (REST, MCP, the
// CLI, machine translation, the demo seed) runs in `contentWrite`: it locks the project and bumps its
// content version, checks the expected revision, runs the write, records each changed node's
// revision, the activity entry and the webhook events, checks every node the write touched against
// the project's content model, then (at commit) notifies the other instances and announces the
// write in-process. What the write runs under (operation, actor, expected revision, dry run) comes
// in explicitly as its WriteContext (./context.ts).
import { eq, type SQL, sql } from "drizzle-orm";
import { type Db, notify } from "../../db/client";
import { projects } from "../../db/schema/index";
import { AppError, notFound } from "../errors";
import { commitNotice, contentCommitted } from "../lib/commits";
import { isPlainObject } from "../lib/merge";
import { compiledModel, nodeSnapshots } from "../model/cache";
import { type NodeSnapshot, pointerSegment } from "../model/compile";
import { MAX_VIOLATIONS, type Violation } from "../model/model";
import { contentActivityInsert } from "./activity";
import { markAnswers } from "./answers";
import { checkExpectedRevision } from "./conflict";
import type { WriteContext } from "./context";
import { dryRunChanges } from "./dry-run";
import { enqueueWriteEvents } from "./outbox";
import { type Recorded, recordDeletion, recordRevisions, type Versions } from "./record";
import { refreshSearchIndex } from "./search-index";
import { settleUnits } from "./translation-units";

export const CONTENT_CHANNEL = "cms_content";

/** What a write tells the unit while it runs. */
export interface WriteLog {
  /** A page (base path; "" = the whole project) the write may take away: delivery stops serving its last good answer. */
  gone(path: string): void;
  /** A page the write may bring (back). */
  added(path: string): void;
  /** A node whose content the write changed, to be checked against the content model; `locale` when only that translation changed. */
  touched(nodeId: string, locale?: string): void;
  /**
   * A node the write changed without changing what the model checks (a status transition, a
   * translation removed, `locale` when only that one): recorded as a revision, not checked.
   * `operation` names the change when no operation runs (the demo seed, scripts); within an
   * operation the operation's name is kept.
   */
  changed(nodeId: string, operation: string, locale?: string): void;
  /** A node the write did not change but whose check depends on what it changed (the children of a node whose type changed): checked, not recorded. */
  checked(nodeId: string): void;
  /** Call BEFORE deleting a node: it and its descendants are recorded (their state before, marked deleted) for the trash. */
  deleting(nodeId: string, operation: string): Promise<void>;
  /**
   * The write published the node's working copy (`locale`: that translation's): its revision says
   * so, and its working copy has no unpublished changes. `before`: the node's published version
   * before the write (null: it had none), what a dry run diffs against.
   */
  published(nodeId: string, locale?: string, before?: Record<string, unknown> | null): void;
  /** The write made the working copy equal to the published version, or removed that version (discard, unpublish): no unpublished changes. */
  settled(nodeId: string, locale?: string): void;
  /** The write changed nothing a stored delivery answer shows (search rows, vectors): none is marked (./answers.ts). */
  keepsAnswers(): void;
}

const versionKey = (nodeId: string, locale: string | undefined): string => (locale === undefined ? nodeId : `${nodeId}/${locale}`);

/**
 * Every content write calls this FIRST inside its transaction (contentWrite does): the update locks
 * the project's row, so a project's content writes are serialised (a move and a create under the
 * moved node cannot interleave, two crossing moves cannot make a cycle); the content version moves
 * and the notification goes out at commit, so every instance's delivery cache for it is stale from
 * then. It answers the project's content model version and whether it has webhook endpoints, read
 * in the same statement.
 */
export async function bumpContentVersion(db: Db, projectId: string, notice: string | null = projectId): Promise<{ version: number; modelVersion: number; webhooks: boolean }> {
  const [locked] = await db
    .update(projects)
    .set({ contentVersion: sql`${projects.contentVersion} + 1` })
    .where(eq(projects.id, projectId))
    .returning({
      version: projects.contentVersion,
      modelVersion: projects.modelVersion,
      // Whether any endpoint may want the write's events: without one, no outbox statement at all.
      webhooks: sql<boolean>`exists (select 1 from webhook_endpoints w where w.project_id = ${projectId}::uuid and w.status <> 'disabled')`,
    });
  // Deleted since the request resolved it: nothing of the write may land (404, not a stray 400).
  if (!locked) throw notFound("project");
  if (notice !== null) await notifyContent(db, notice);
  return locked;
}

/**
 * A content write: bumpContentVersion, then `write`, then the model check of what it touched, in one
 * transaction. Once it has committed, it is announced on the Db it began on (lib/commits): this
 * instance drops the project's answers at once; the NOTIFY tells the others.
 */
export async function contentWrite<T>(db: Db, ctx: WriteContext, projectId: string, write: (tx: Db, w: WriteLog) => Promise<T>): Promise<T> {
  const changes: { gone: string[]; added: string[]; version?: number } = { gone: [], added: [] };
  const touched = new Map<string, Set<string | undefined>>();
  /** Every node the write changed: the locales it changed alone (undefined: the node itself), and the change's name outside an operation. */
  const changed = new Map<string, { locales: Set<string | undefined>; operation?: string }>();
  const note = (into: Map<string, Set<string | undefined>>, nodeId: string, locale: string | undefined): void => {
    let locales = into.get(nodeId);
    if (!locales) into.set(nodeId, (locales = new Set()));
    locales.add(locale);
  };
  const change = (nodeId: string, locale: string | undefined, operation?: string): void => {
    let c = changed.get(nodeId);
    if (!c) changed.set(nodeId, (c = { locales: new Set() }));
    c.locales.add(locale);
    if (operation !== undefined) c.operation = operation;
  };
  const deleted = new Map<string, number>();
  let keepsAnswers = false;
  const versions = { settled: new Set<string>(), edited: new Set<string>(), published: new Set<string>() };
  const publishedBefore = new Map<string, Record<string, unknown> | null>();
  let tx0: Db | null = null;
  const log: WriteLog = {
    gone: (path) => void changes.gone.push(path),
    added: (path) => void changes.added.push(path),
    touched: (nodeId, locale) => {
      note(touched, nodeId, locale);
      change(nodeId, locale);
      versions.edited.add(versionKey(nodeId, locale));
    },
    changed: (nodeId, operation, locale) => change(nodeId, locale, operation),
    checked: (nodeId) => note(touched, nodeId, undefined),
    deleting: async (nodeId, operation) => {
      if (!tx0) throw new Error("deleting() outside the write");
      change(nodeId, undefined, operation); // the activity entry names it
      deleted.set(nodeId, await recordDeletion(tx0, ctx, projectId, nodeId, operation));
    },
    published: (nodeId, locale, before) => {
      change(nodeId, locale);
      if (before !== undefined) publishedBefore.set(nodeId, before);
      versions.published.add(nodeId);
      versions.settled.add(versionKey(nodeId, locale));
    },
    settled: (nodeId, locale) => {
      change(nodeId, locale);
      versions.settled.add(versionKey(nodeId, locale));
    },
    keepsAnswers: () => void (keepsAnswers = true),
  };
  const result = await db.transaction(async (tx) => {
    tx0 = tx;
    const { version, modelVersion, webhooks } = await bumpContentVersion(tx, projectId, null);
    // After the project lock, before the write: a stale expected revision writes nothing (409).
    await checkExpectedRevision(tx, ctx, projectId);
    const out = await write(tx, log);
    // One round trip after the write (postgres.js pipelines a transaction's queries): the statement
    // recording the revisions and the activity entry, which answers the nodes' states the model
    // check reads instead of a query of its own, and the NOTIFY. A failed check rolls all of it
    // back (a NOTIFY is delivered only at commit). The NOTIFY names this app (whose own listener
    // skips it, having heard of the write at commit), the version it made (a reader that sees the
    // version first knows its news is on the way) and the pages the write took away or brought.
    changes.version = version;
    // A dry run reports what would change to the operation unit, which rolls it all back.
    const dry = ctx.dryRun;
    const check = modelVersion > 0 && touched.size > 0;
    // A node's own content written: which translated units went stale (only nodes that have translations pay).
    const ownChanges = [...changed].filter(([id, c]) => c.locales.has(undefined) && !deleted.has(id)).map(([id]) => id);
    const [{ numbers, recorded }] = await Promise.all([
      recordChanges(tx, ctx, projectId, changed, deleted, versions, check || dry !== null || versions.published.size > 0),
      notifyContent(tx, commitNotice(db, projectId, changes)),
    ]);
    // The write's webhook events (the outbox), in this transaction, beside the model check
    // (one round trip; a failed check rolls them back with the rest). An endpoint created after the
    // project's lock was taken gets this write's events no more than it would from the statement.
    const events = webhooks ? enqueueWriteEvents(tx, projectId, { operation: ctx.operation ?? undefined, changed, recorded, deleted, published: versions.published, publishedBefore }) : null;
    const own = ownChanges.flatMap((id) => {
      const r = recorded.get(id);
      return r ? [{ id, snapshot: r.snapshot }] : [];
    });
    const units = settleUnits(tx, projectId, modelVersion, own, versions.settled, versions.published, webhooks, ctx.actor);
    // The search index (./search-index.ts) and the stored delivery answers (./answers.ts) of what the write changed, in the same round trip.
    const search = refreshSearchIndex(tx, projectId, changed.keys(), versions);
    const answers = keepsAnswers || dry !== null ? null : markAnswers(tx, projectId, new Set([...changed.keys(), ...deleted.keys()]), [...changes.gone, ...changes.added]);
    await Promise.all([check ? checkModel(tx, projectId, modelVersion, touched, recorded) : null, events, units, search, answers]);
    answerRevisions(out, numbers);
    answerStates(out, versions);
    if (dry) dry.changes.push(...(await dryRunChanges(tx, projectId, recorded, deleted, ctx.operation ?? "write", publishedBefore)));
    return out;
  });
  contentCommitted(db, projectId, changes);
  return result;
}

/**
 * Every node the write reported gets its next revision (number, operation, actor, its
 * state after the write), and the operation its activity entry, in this transaction; answers each
 * node's new number (a deleted node's is the revision recorded before its deletion). Outside an
 * operation, the change is named after what the service reported: a node at its first revision was
 * created, a change to one translation only is that translation's.
 */
async function recordChanges(
  tx: Db,
  ctx: WriteContext,
  projectId: string,
  changed: ReadonlyMap<string, { locales: ReadonlySet<string | undefined>; operation?: string }>,
  deleted: ReadonlyMap<string, number>,
  versions: Versions,
  snapshots: boolean,
): Promise<{ numbers: Map<string, number>; recorded: Map<string, Recorded> }> {
  const all = new Map<string, string>();
  for (const [id, c] of changed) {
    if (deleted.has(id)) continue;
    const only = c.locales.size === 1 ? [...c.locales][0] : undefined;
    all.set(id, c.operation ?? (only !== undefined ? "upsert_translation" : "write_node"));
  }
  const activityOf = new Map([...changed].map(([id, c]) => [id, c.locales]));
  const revisionOf = (id: string): SQL => {
    const gone = deleted.get(id);
    return gone !== undefined ? sql`${gone}::int` : sql`(select number from inserted where node_id = ${id}::uuid)`;
  };
  const entry = contentActivityInsert(ctx, projectId, activityOf, revisionOf);
  // Only deletions: no revision statement to ride along with.
  if (all.size === 0 && entry !== null) await tx.execute(entry);
  const recorded = await recordRevisions(tx, ctx, projectId, all, all.size === 0 ? null : entry, snapshots, versions);
  const numbers = new Map([...recorded].map(([id, r]) => [id, r.number]));
  for (const [id, n] of deleted) numbers.set(id, n);
  return { numbers, recorded };
}

/** A node a write answers (built from the rows it wrote, before the bump) carries its revision after the write. */
function answerRevisions(out: unknown, revisions: ReadonlyMap<string, number>): void {
  if (!isPlainObject(out) || typeof out.id !== "string" || typeof out.revision !== "number") return;
  const revision = revisions.get(out.id);
  if (revision !== undefined) out.revision = revision;
}

/**
 * A node or translation a write answers (built before the write recorded its changes) carries its
 * state after the write: settled ones have no unpublished changes, published ones the write edited have.
 */
function answerStates(out: unknown, versions: Versions): void {
  if (!isPlainObject(out) || typeof out.state !== "string" || typeof out.status !== "string") return;
  const key = typeof out.node_id === "string" && typeof out.locale === "string" ? `${out.node_id}/${out.locale}` : typeof out.id === "string" ? out.id : null;
  if (key === null || out.status !== "published") return;
  if (versions.settled.has(key)) out.state = "published";
  else if (versions.edited.has(key)) out.state = "changed";
}

/**
 * 400 invalid_content, one entry per violation, when a touched node fails the model. A write that
 * changed only one translation gets pointers into that translation's input (its `fields`, `blocks`).
 */
async function checkModel(tx: Db, projectId: string, version: number, touched: Map<string, Set<string | undefined>>, recorded: ReadonlyMap<string, Recorded>): Promise<void> {
  const model = await compiledModel(tx, projectId, version);
  const violations: Violation[] = [];
  // Nodes only checked (not changed) have no revision to read from: one query for those.
  const unrecorded = [...touched.keys()].filter((id) => !recorded.has(id));
  const fromRevisions = [...recorded].filter(([id]) => touched.has(id)).map(([id, r]) => ({ ...(r.snapshot as unknown as NodeSnapshot), id, parent_type: r.parentType }));
  for (const node of [...fromRevisions, ...(await nodeSnapshots(tx, projectId, unrecorded))]) {
    const locales = touched.get(node.id);
    const only = locales?.size === 1 ? [...locales][0] : undefined;
    const prefix = only === undefined ? null : `/translations/${pointerSegment(only)}`;
    for (const v of model.validateNode(node)) {
      violations.push(prefix !== null && v.pointer.startsWith(`${prefix}/`) ? { ...v, pointer: v.pointer.slice(prefix.length) } : v);
    }
  }
  if (violations.length === 0) return;
  const [first] = violations;
  const more = violations.length > 1 ? ` (and ${violations.length - 1} more)` : "";
  throw new AppError("invalid_content", `the content does not match the project's content model: ${first?.pointer}: ${first?.message}${more}`, { violations: violations.slice(0, MAX_VIOLATIONS) });
}

export async function notifyContent(db: Db, notice: string): Promise<void> {
  await notify(db, CONTENT_CHANNEL, notice);
}
