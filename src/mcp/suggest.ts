// The reads behind MCP completions and prompts: node paths and ids by prefix, collections, recent changes.
import { and, asc, count, desc, eq, gte, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { nodes } from "../../db/schema";
import type { Node } from "../content/service";
import { isStorableText } from "../lib/json";
import { oneRow } from "../lib/rows";
import { escapeLike } from "../lib/sql";

/** The MCP spec caps one completion answer at 100 values. */
const MAX_COMPLETIONS = 100;

/** Slug paths of the project's nodes ("path"), of its collections ("collection"), or node ids ("id"), starting with the prefix, in order. */
export async function suggestNodes(db: Db, projectId: string, kind: "path" | "collection" | "id", prefix: string) {
  // A prefix with NUL or an unpaired surrogate starts nothing stored (and PostgreSQL refuses it).
  if (!isStorableText(prefix)) return { values: [], total: 0, hasMore: false };
  const column = kind === "id" ? nodes.id : nodes.path;
  const like = kind === "id" ? sql`${column}::text like ${`${escapeLike(prefix.toLowerCase())}%`}` : sql`${column} like ${`${escapeLike(prefix)}%`}`;
  const where = and(eq(nodes.projectId, projectId), like, kind === "collection" ? eq(nodes.type, "collection") : undefined);
  const [rows, counted] = await Promise.all([db.select({ v: column }).from(nodes).where(where).orderBy(asc(column)).limit(MAX_COMPLETIONS), db.select({ total: count() }).from(nodes).where(where)]);
  const n = Number(oneRow(counted).total);
  return { values: rows.map((r) => String(r.v)), total: n, hasMore: n > rows.length };
}

export function suggestFrom(list: readonly string[], prefix: string) {
  const p = prefix.toLowerCase();
  const values = list.filter((v) => v.toLowerCase().startsWith(p));
  return { values: values.slice(0, MAX_COMPLETIONS), total: values.length, hasMore: values.length > MAX_COMPLETIONS };
}

/** Nodes changed since the date, newest first, optionally under a path (a collection's entries). */
export async function recentlyChanged(db: Db, projectId: string, since: Date, under: string | null, limit: number): Promise<Node[]> {
  const inside = under ? sql`${nodes.path} like ${`${escapeLike(under)}/%`}` : undefined;
  return db
    .select()
    .from(nodes)
    .where(and(eq(nodes.projectId, projectId), gte(nodes.updatedAt, since), inside))
    .orderBy(desc(nodes.updatedAt), asc(nodes.id))
    .limit(limit);
}
