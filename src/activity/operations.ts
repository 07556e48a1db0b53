import { z } from "zod";
import { projectOperation, READ_ONLY } from "../core/operation";
import { ActivityOut, ActivityQuery } from "./model";
import { listActivity } from "./service";

const listActivityOp = projectOperation({
  name: "list_activity",
  title: "List the project's activity",
  description:
    "List every write in the project, newest first: the operation, who made it (actor: admin key, MCP token, OAuth user and client, or the system), what it acted on (target; node_id and the node's revision after the write for content writes) and when. " +
    "Filters combine: actor_kind, actor_id, node_id, and a time range from (inclusive) to (exclusive), ISO 8601. Paginated: page (from 1) and per_page (1-100, default 50), with the total count. " +
    "Use it to see what changed since you last read a node before you write it.",
  scopes: ["content:read"],
  input: ActivityQuery,
  output: z.object({ activity: z.array(ActivityOut), total: z.number().int(), page: z.number().int(), per_page: z.number().int() }),
  tool: READ_ONLY,
  http: { method: "GET", path: "/admin/p/:ref/activity", data: "activity", tag: "activity", summary: "List the project's writes, newest first (filters: actor, node, time range)" },
  run: ({ deps, project }, args) => listActivity(deps.db, project.id, args).then(({ entries, ...paging }) => ({ activity: entries, ...paging })),
});

export const activityOperations = [listActivityOp];
