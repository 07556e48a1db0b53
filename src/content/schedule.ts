// What a schedule may be, checked where it is set: PATCH of a node (update_node) and schedule_node.
// Pure: the caller names who sets it.

import { z } from "zod";
import type { Actor } from "../../db/schema/index";
import { AppError } from "../errors";

const When = (what: string) =>
  z.iso.datetime({ offset: true }).nullable().optional().describe(`${what}: ISO 8601 date-time with an offset (e.g. 2026-12-01T09:00:00+01:00), stored in UTC, must be in the future; null clears it`);

/** The schedule fields of update_node and schedule_node. */
export const ScheduleIn = {
  publish_at: When("when the scheduler publishes it (draft → published)"),
  unpublish_at: When("when the scheduler unpublishes it (published → draft)"),
};

/** The change a caller asks for: an ISO 8601 time with offset, null to clear, undefined to keep. */
export interface ScheduleChange {
  readonly publish_at?: string | null;
  readonly unpublish_at?: string | null;
}

/** What a node or translation carries now. */
interface Scheduled {
  readonly status: string;
  readonly publishAt: Date | null;
  readonly unpublishAt: Date | null;
  readonly scheduledBy: Actor | null;
}

export interface ScheduleColumns {
  publishAt: Date | null;
  unpublishAt: Date | null;
  scheduledBy: Actor | null;
}

const parseTime = (value: string, field: string, now: Date): Date => {
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) throw new AppError("invalid_request", `${field} must be an ISO 8601 date-time with an offset`, { field });
  if (at.getTime() <= now.getTime()) throw new AppError("invalid_request", `${field} must be in the future (it is ${at.toISOString()}, now is ${now.toISOString()})`, { field });
  return at;
};

export const changesSchedule = (change: ScheduleChange): boolean => change.publish_at !== undefined || change.unpublish_at !== undefined;

/**
 * The columns after `change`, or 400 / 409 when it cannot be: a time in the past, a publication
 * after the unpublication, a publication scheduled for what is already published (it would be
 * public before its time) or for an archived node.
 */
export function scheduleColumns(current: Scheduled, change: ScheduleChange, actor: Actor, now: Date): ScheduleColumns {
  const publishAt = change.publish_at === undefined ? current.publishAt : change.publish_at === null ? null : parseTime(change.publish_at, "publish_at", now);
  const unpublishAt = change.unpublish_at === undefined ? current.unpublishAt : change.unpublish_at === null ? null : parseTime(change.unpublish_at, "unpublish_at", now);
  if (change.publish_at) {
    if (current.status === "published") throw new AppError("conflict", "already published: publish_at would not hold it back; unpublish it first", { field: "publish_at", status: current.status });
    if (current.status === "archived") throw new AppError("conflict", "an archived node cannot be scheduled for publication; restore it first", { field: "publish_at", status: current.status });
  }
  if (publishAt && unpublishAt && unpublishAt.getTime() <= publishAt.getTime())
    throw new AppError("invalid_request", "unpublish_at must be after publish_at", { field: change.unpublish_at !== undefined ? "unpublish_at" : "publish_at" });
  const scheduledBy = publishAt === null && unpublishAt === null ? null : changesSchedule(change) ? actor : current.scheduledBy;
  return { publishAt, unpublishAt, scheduledBy };
}
