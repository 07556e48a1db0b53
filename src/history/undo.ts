// Undo an agent: every node one agent credential changed in a time range goes back to its state
// before the first of those changes, one restore per node (a new revision each, through the one
// write path). A node that anyone else changed after the agent is listed and left as it is: a
// person's later work is never overwritten. A node the agent created goes to the trash.
import { and, asc, eq, gte, lte, sql } from "drizzle-orm";
import type { z } from "zod";
import type { Db } from "../../db/client";
import { type Actor, nodes, type Project, revisions } from "../../db/schema";
import { deleteNode } from "../content/service";
import { AppError } from "../errors";
import type { WriteContext } from "../write/context";
import type { AgentIn, UndoAgentOut } from "./model";
import { restoreRevision } from "./service";

type Agent = z.output<typeof AgentIn>;
type Out = z.input<typeof UndoAgentOut>;

/** The revisions an agent credential made: an MCP token by its id; an OAuth client (for one person or any) by the client's id. */
function madeBy(agent: Agent) {
  if (agent.kind === "mcp_token") return sql`(${revisions.actor}->>'kind' = 'mcp_token' and ${revisions.actor}->>'id' = ${agent.id})`;
  const user = agent.user_id ? sql` and ${revisions.actor}->'user'->>'id' = ${agent.user_id}` : sql``;
  return sql`(${revisions.actor}->>'kind' = 'oauth' and ${revisions.actor}->'client'->>'id' = ${agent.client_id}${user})`;
}

const isAgent = (agent: Agent, a: Actor): boolean =>
  agent.kind === "mcp_token" ? a.kind === "mcp_token" && a.id === agent.id : a.kind === "oauth" && a.client?.id === agent.client_id && (!agent.user_id || a.user?.id === agent.user_id);

const MAX_NODES = 500;

export async function undoAgentChanges(db: Db, ctx: WriteContext, project: Project, input: { agent: Agent; since: string; until?: string }, now: Date): Promise<Out> {
  const since = new Date(input.since);
  const until = input.until ? new Date(input.until) : now;
  if (until.getTime() < since.getTime()) throw new AppError("invalid_request", "until is before since", { field: "until" });
  // The first revision the agent made on each node in the range.
  const firsts = await db
    .select({ nodeId: revisions.nodeId, first: sql<number>`min(${revisions.number})::int`.as("first") })
    .from(revisions)
    .where(and(eq(revisions.projectId, project.id), gte(revisions.createdAt, since), lte(revisions.createdAt, until), madeBy(input.agent)))
    .groupBy(revisions.nodeId)
    .limit(MAX_NODES + 1);
  if (firsts.length > MAX_NODES) throw new AppError("invalid_request", `the agent changed more than ${MAX_NODES} nodes in this range: undo a shorter range`, { field: "since" });
  const out: Out = { restored: [], deleted: [], left: [] };
  for (const { nodeId, first } of firsts) {
    const later = await db
      .select({ number: revisions.number, actor: revisions.actor, operation: revisions.operation })
      .from(revisions)
      .where(and(eq(revisions.nodeId, nodeId), sql`${revisions.number} > ${first}`))
      .orderBy(asc(revisions.number));
    const [live] = await db
      .select({ title: nodes.title })
      .from(nodes)
      .where(and(eq(nodes.projectId, project.id), eq(nodes.id, nodeId)));
    const someoneElse = later.find((r) => !isAgent(input.agent, r.actor));
    if (someoneElse) {
      out.left.push({ node_id: nodeId, title: live?.title ?? null, reason: "changed after the agent by someone else", revision: someoneElse.number, by: someoneElse.actor });
      continue;
    }
    // Each node is its own write, held to the revision read above: a person's change landing between
    // that read and the write is a conflict, and the node is left, never overwritten. Its own state,
    // so each write checks its expectation and records its activity entry.
    const last = later.at(-1)?.number ?? first;
    const write: WriteContext = { ...ctx, expected: live ? { nodeId, revision: last } : null, state: { checked: false, recorded: false } };
    try {
      if (first === 1) {
        // The agent created it: before its change the node did not exist.
        if (live) {
          await deleteNode(db, write, project, nodeId);
          out.deleted.push({ node_id: nodeId, title: live.title });
        }
        continue;
      }
      const r = await restoreRevision(db, write, project, nodeId, first - 1, now);
      out.restored.push({ node_id: nodeId, title: live?.title ?? null, to_revision: first - 1, revision: r.revision });
    } catch (err) {
      if (!(err instanceof AppError && err.code === "conflict" && err.message.includes("changed since it was read"))) throw err;
      out.left.push({ node_id: nodeId, title: live?.title ?? null, reason: "changed while it was being undone", revision: last + 1, by: ctx.actor });
    }
  }
  // Each node's write recorded its own activity entry: the operation adds none of its own then.
  if (out.restored.length + out.deleted.length > 0) ctx.state.recorded = true;
  return out;
}
