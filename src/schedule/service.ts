// Scheduled publishing: setting a schedule (schedule_node, PATCH of a node) and carrying
// it out (the scheduler). Both are content writes through the one write path.
import { eq, sql } from "drizzle-orm";
import type { z } from "zod";
import type { Db } from "../../db/client";
import { type Actor, nodes, type Project, translations } from "../../db/schema";
import { publishNodeVersion, publishTranslationVersion, unpublishNodeVersion, unpublishTranslationVersion } from "../content/publish";
import { type ScheduleChange, scheduleColumns } from "../content/schedule";
import { findTranslation, getNode, projectLocale } from "../content/service";
import { AppError, notFound } from "../errors";
import { rows } from "../lib/json";
import { serviceWrite, type WriteContext } from "../write/context";
import { contentWrite } from "../write/unit";
import type { ScheduleOut } from "./model";

type ScheduleWire = z.input<typeof ScheduleOut>;
const actorWire = (a: Actor | null) => (a ? { kind: a.kind, id: a.id, name: a.name } : null);

/** Sets or clears the schedule of a node, or of its translation into `locale`. */
export async function scheduleNode(db: Db, ctx: WriteContext, project: Project, nodeId: string, locale: string | undefined, change: ScheduleChange, now: Date): Promise<ScheduleWire> {
  const loc = locale === undefined ? null : projectLocale(project, locale);
  if (loc === project.defaultLocale) throw new AppError("invalid_locale", `"${loc}" is the project's default locale: schedule the node itself (no locale)`, { field: "locale" });
  return contentWrite(db, ctx, project.id, async (tx, w) => {
    const node = await getNode(tx, project.id, nodeId);
    if (loc === null) {
      const set = scheduleColumns(node, change, ctx.actor, now);
      const [row] = await tx.update(nodes).set(set).where(eq(nodes.id, node.id)).returning();
      if (!row) throw notFound("node");
      w.changed(node.id, "schedule_node");
      return {
        node_id: row.id,
        locale: null,
        status: row.status,
        publish_at: row.publishAt?.toISOString() ?? null,
        unpublish_at: row.unpublishAt?.toISOString() ?? null,
        scheduled_by: actorWire(row.scheduledBy),
      };
    }
    const tr = await findTranslation(tx, node.id, loc);
    if (!tr) throw notFound("translation");
    const set = scheduleColumns(tr, change, ctx.actor, now);
    const [row] = await tx.update(translations).set(set).where(eq(translations.id, tr.id)).returning();
    if (!row) throw notFound("translation");
    w.changed(node.id, "schedule_node", loc);
    return {
      node_id: node.id,
      locale: loc,
      status: row.status,
      publish_at: row.publishAt?.toISOString() ?? null,
      unpublish_at: row.unpublishAt?.toISOString() ?? null,
      scheduled_by: actorWire(row.scheduledBy),
    };
  });
}

/** A schedule whose time has come. */
export interface Due {
  readonly projectId: string;
  readonly nodeId: string;
  /** null: the node itself. */
  readonly locale: string | null;
  readonly action: "publish" | "unpublish";
  readonly scheduledBy: Actor | null;
}

/** Schedules due by the database's clock (one clock for every instance), oldest first, at most `limit`. */
export async function dueSchedules(db: Db, limit = 100): Promise<Due[]> {
  const found = rows<{ project_id: string; node_id: string; locale: string | null; action: "publish" | "unpublish"; scheduled_by: Actor | null }>(
    await db.execute(sql`select * from (
      select project_id, id as node_id, null::text as locale, 'publish' as action, scheduled_by, publish_at as at from nodes where publish_at <= now()
      union all select project_id, id, null, 'unpublish', scheduled_by, unpublish_at from nodes where unpublish_at <= now()
      union all select project_id, node_id, locale, 'publish', scheduled_by, publish_at from translations where publish_at <= now()
      union all select project_id, node_id, locale, 'unpublish', scheduled_by, unpublish_at from translations where unpublish_at <= now()
    ) d order by at limit ${limit}`),
  );
  return found.map((r) => ({ projectId: r.project_id, nodeId: r.node_id, locale: r.locale, action: r.action, scheduledBy: r.scheduled_by }));
}

/** Thrown inside the write to roll it back (content version included) when another instance fired the schedule first. */
class AlreadyFired extends Error {}

/**
 * Carries out one due schedule as a write of the scheduler (who set it recorded with it): the
 * conditional UPDATE … RETURNING claims it, so however many instances try, one changes the node
 * and records one revision; the others find nothing to claim and roll back. True when this call
 * made the change.
 */
export async function fireSchedule(db: Db, due: Due): Promise<boolean> {
  const node = due.locale === null;
  const operation = `${due.action}_${node ? "node" : "translation"}`;
  const actor: Actor = { kind: "scheduler", id: null, name: "scheduler", scheduled_by: due.scheduledBy };
  try {
    return await contentWrite(db, serviceWrite(operation, actor), due.projectId, async (tx, w) => {
      const claimed = node ? await claimNode(tx, due) : await claimTranslation(tx, due);
      if (claimed === null) throw new AlreadyFired();
      const row = await getNode(tx, due.projectId, due.nodeId);
      const now = new Date();
      if (due.locale !== null) {
        // The translation's working copy as it is now is published (or its published version goes).
        if (due.action === "publish" ? claimed.status === "published" && !claimed.changed : claimed.status !== "published") return false;
        w.changed(due.nodeId, operation, due.locale);
        if (due.action === "publish") await publishTranslationVersion(tx, w, row, due.locale);
        else await unpublishTranslationVersion(tx, w, row, due.locale);
        return true;
      }
      // Nothing to change (published with no changes, archived…): the schedule is cleared.
      if (due.action === "publish" ? row.status === "archived" || (row.status === "published" && !row.changed) : row.status !== "published") return false;
      w.changed(due.nodeId, operation);
      if (due.action === "publish") await publishNodeVersion(tx, w, row, now);
      else {
        await unpublishNodeVersion(tx, w, row, "draft");
        await tx.update(nodes).set({ status: "draft", updatedAt: now }).where(eq(nodes.id, row.id));
      }
      return true;
    });
  } catch (err) {
    if (err instanceof AlreadyFired) return false;
    throw err;
  }
}

type Claimed = { status: string; changed: boolean } | null;

/** Clears the due schedule (the one claim: another instance finds nothing); answers the node's state before. */
async function claimNode(tx: Db, due: Due): Promise<Claimed> {
  const column = sql.raw(due.action === "publish" ? "publish_at" : "unpublish_at");
  const other = sql.raw(due.action === "publish" ? "unpublish_at" : "publish_at");
  const [row] = rows<{ status: string; changed: boolean }>(
    await tx.execute(sql`with old as (
        select id from nodes where id = ${due.nodeId} and project_id = ${due.projectId} and ${column} <= now() for update
      )
      update nodes n set ${column} = null, scheduled_by = case when n.${other} is null then null else n.scheduled_by end
      from old where n.id = old.id
      returning n.status, n.changed`),
  );
  return row ?? null;
}

async function claimTranslation(tx: Db, due: Due): Promise<Claimed> {
  const column = sql.raw(due.action === "publish" ? "publish_at" : "unpublish_at");
  const other = sql.raw(due.action === "publish" ? "unpublish_at" : "publish_at");
  const [row] = rows<{ status: string; changed: boolean }>(
    await tx.execute(sql`with old as (
        select t.id from translations t
        where t.node_id = ${due.nodeId} and t.locale = ${due.locale} and t.project_id = ${due.projectId} and t.${column} <= now() for update of t
      )
      update translations t set ${column} = null, scheduled_by = case when t.${other} is null then null else t.scheduled_by end, updated_at = now()
      from old where t.id = old.id
      returning t.status, t.changed`),
  );
  return row ?? null;
}
