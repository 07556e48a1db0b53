import { z } from "zod";
import { ActorOut } from "../activity/model";
import { Id, Timestamp } from "../lib/schemas";

export const ScheduleOut = z.object({
  node_id: Id,
  locale: z.string().nullable().describe("the translation scheduled; null for the node itself"),
  status: z.string(),
  publish_at: Timestamp.nullable(),
  unpublish_at: Timestamp.nullable(),
  scheduled_by: ActorOut.pick({ kind: true, id: true, name: true }).nullable().describe("who set the schedule"),
});
