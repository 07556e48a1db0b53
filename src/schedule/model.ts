import { z } from "zod";
import { ActorOut } from "../activity/model";
import { Id, Timestamp } from "../lib/schemas";

const When = (what: string) =>
  z.iso.datetime({ offset: true }).nullable().optional().describe(`${what}: ISO 8601 date-time with an offset (e.g. 2026-12-01T09:00:00+01:00), stored in UTC, must be in the future; null clears it`);

/** The schedule fields of update_node and schedule_node. */
export const ScheduleIn = {
  publish_at: When("when the scheduler publishes it (draft → published)"),
  unpublish_at: When("when the scheduler unpublishes it (published → draft)"),
};

export const ScheduleOut = z.object({
  node_id: Id,
  locale: z.string().nullable().describe("the translation scheduled; null for the node itself"),
  status: z.string(),
  publish_at: Timestamp.nullable(),
  unpublish_at: Timestamp.nullable(),
  scheduled_by: ActorOut.pick({ kind: true, id: true, name: true }).nullable().describe("who set the schedule"),
});
