// The activity log read back: every write in a project, who made it, on what, when. The entries
// are written by the write path (src/write/activity.ts).
import { and, count, desc, eq, gte, inArray, lt, type SQL, sql } from "drizzle-orm";
import type { z } from "zod";
import type { Db } from "../../db/client";
import { type Actor, activity, adminKeys, mcpTokens, oauthClients, users } from "../../db/schema";
import { AppError } from "../errors";
import { readPaging } from "../lib/paging";
import type { ActivityOut, ActivityQuery } from "./model";

type Entry = z.input<typeof ActivityOut>;

/** The project's activity, newest first, filtered; names resolved as they are now. */
export async function listActivity(db: Db, projectId: string, q: z.output<typeof ActivityQuery>): Promise<{ entries: Entry[]; total: number; page: number; per_page: number }> {
  const { page, perPage } = readPaging(q, { defaultPerPage: 50 });
  const from = q.from ? new Date(q.from) : null;
  const to = q.to ? new Date(q.to) : null;
  if (from && to && from >= to) throw new AppError("invalid_request", "from must be before to", { field: "from" });
  const conds: SQL[] = [eq(activity.projectId, projectId)];
  if (q.actor_kind) conds.push(sql`${activity.actor}->>'kind' = ${q.actor_kind}`);
  if (q.actor_id) conds.push(sql`(${activity.actor}->>'id' = ${q.actor_id} or ${activity.actor}->'user'->>'id' = ${q.actor_id} or ${activity.actor}->'client'->>'id' = ${q.actor_id})`);
  if (q.node_id) conds.push(eq(activity.nodeId, q.node_id.toLowerCase()));
  if (from) conds.push(gte(activity.createdAt, from));
  if (to) conds.push(lt(activity.createdAt, to));
  const where = and(...conds);
  const [rows, [counted]] = await Promise.all([
    db
      .select()
      .from(activity)
      .where(where)
      .orderBy(desc(activity.createdAt), desc(activity.id))
      .limit(perPage)
      .offset((page - 1) * perPage),
    db.select({ total: count() }).from(activity).where(where),
  ]);
  const names = await actorNames(
    db,
    rows.map((r) => r.actor),
  );
  const entries = rows.map((r) => ({
    id: r.id,
    operation: r.operation,
    actor: named(r.actor, names),
    target: r.target,
    node_id: r.nodeId,
    revision: r.revision,
    created_at: r.createdAt.toISOString(),
  }));
  return { entries, total: Number(counted?.total ?? 0), page, per_page: perPage };
}

interface Names {
  keys: Map<string, string>;
  tokens: Map<string, string>;
  emails: Map<string, string>;
  clients: Map<string, string | null>;
}

async function actorNames(db: Db, actors: readonly Actor[]): Promise<Names> {
  const ids = (kind: Actor["kind"]) => [...new Set(actors.flatMap((a) => (a.kind === kind && a.id ? [a.id] : [])))];
  const keyIds = ids("admin_key");
  const tokenIds = ids("mcp_token");
  const userIds = [...new Set(actors.flatMap((a) => (a.user?.id ? [a.user.id] : [])))];
  // OAuth clients only: a person's client is the studio, not a registered client.
  const clientIds = [...new Set(actors.flatMap((a) => (a.kind === "oauth" && a.client?.id ? [a.client.id] : [])))];
  const [keys, tokens, emails, clients] = await Promise.all([
    keyIds.length > 0 ? db.select({ id: adminKeys.id, name: adminKeys.name }).from(adminKeys).where(inArray(adminKeys.id, keyIds)) : [],
    tokenIds.length > 0 ? db.select({ id: mcpTokens.id, name: mcpTokens.name }).from(mcpTokens).where(inArray(mcpTokens.id, tokenIds)) : [],
    userIds.length > 0 ? db.select({ id: users.id, name: users.email }).from(users).where(inArray(users.id, userIds)) : [],
    clientIds.length > 0 ? db.select({ id: oauthClients.id, name: oauthClients.clientName }).from(oauthClients).where(inArray(oauthClients.id, clientIds)) : [],
  ]);
  const map = <V>(rows: Array<{ id: string; name: V }>) => new Map(rows.map((r) => [r.id, r.name]));
  return { keys: map(keys), tokens: map(tokens), emails: map(emails), clients: map(clients) };
}

function named(a: Actor, names: Names): Entry["actor"] {
  const name =
    a.id === null
      ? null
      : a.kind === "admin_key"
        ? (names.keys.get(a.id) ?? null)
        : a.kind === "mcp_token"
          ? (names.tokens.get(a.id) ?? null)
          : a.kind === "user"
            ? (names.emails.get(a.id) ?? a.name)
            : null;
  const out: Entry["actor"] = { kind: a.kind, id: a.id, name };
  if (a.kind === "user") {
    out.user = a.user ? { id: a.user.id, email: names.emails.get(a.user.id) ?? null } : null;
    if (a.client) out.client = { id: a.client.id, name: a.client.name };
  }
  if (a.kind === "oauth") {
    out.user = a.user ? { id: a.user.id, email: names.emails.get(a.user.id) ?? null } : null;
    out.client = a.client ? { id: a.client.id, name: names.clients.get(a.client.id) ?? null } : null;
  }
  if (a.kind === "scheduler") {
    out.name = a.name;
    out.scheduled_by = a.scheduled_by ? { kind: a.scheduled_by.kind, id: a.scheduled_by.id, name: a.scheduled_by.name } : null;
  }
  return out;
}
