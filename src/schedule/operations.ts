import { z } from "zod";
import { ScheduleIn } from "../content/schedule";
import { IDEMPOTENT_WRITE, projectOperation } from "../core/operation";
import { Locale, NodeId } from "../lib/schemas";
import { PUBLISH_SCOPES } from "../lib/scopes";
import { ScheduleOut } from "./model";
import { scheduleNode } from "./service";

const scheduleNodeOp = projectOperation({
  name: "schedule_node",
  title: "Schedule a node's publication",
  description:
    "Schedule when a node (or, with locale, its translation into that locale) is published and/or unpublished: publish_at and unpublish_at are ISO 8601 date-times with an offset, " +
    "in the future (stored in UTC); null clears one, an omitted one is kept. The scheduler carries the change out within about a second of the time, as a revision of its own. " +
    "A node already published cannot get a publish_at (it would be public before its time): unpublish it first, or schedule only unpublish_at. Read the schedule back with get_node (publish_at, unpublish_at).",
  nodeWrite: true,
  // Scheduling is publishing later; a caller with content:write alone asks a person (src/approvals/).
  scopes: PUBLISH_SCOPES,
  input: z.object({ node_id: NodeId, locale: Locale.optional().describe("schedule this translation instead of the node (not the default locale)"), ...ScheduleIn }),
  output: z.object({ schedule: ScheduleOut }),
  tool: IDEMPOTENT_WRITE,
  http: {
    method: "POST",
    path: "/admin/p/:ref/nodes/:id/schedule",
    params: { id: "node_id" },
    data: "schedule",
    tag: "content",
    summary: "Schedule a node's (or a translation's) publication and unpublication",
    errors: [409],
  },
  run: async ({ deps, project, now, write }, { node_id, locale, ...change }) => ({ schedule: await scheduleNode(deps.db, write, project, node_id, locale, change, now) }),
});

export const scheduleOperations = [scheduleNodeOp];
