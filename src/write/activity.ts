// The activity entry of every write: a content write's in its transaction (contentActivityInsert,
// run by the write unit with the statement recording the revisions); every other write operation's
// once it has succeeded (recordOperationActivity, run by the operation registry). Only ids are
// stored from a write's input or answer, never the input itself: secrets (provider keys, tokens)
// cannot leak.
import { type SQL, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { activity } from "../../db/schema";
import { isForeignKeyViolation } from "../errors";
import { uuidv7 } from "../lib/ids";
import { isPlainObject } from "../lib/merge";
import type { WriteContext } from "./context";

/**
 * One entry for a content write that changed nodes, in its transaction: the node (the one the
 * operation names when it changed several), its new revision; a write that changed only
 * translations names the translation. Answers the statement that records it, given the SQL of the
 * named node's new revision number (the write path runs it with the statement recording the
 * revisions), or null when the operation has its entry already.
 */
export function contentActivityInsert(ctx: WriteContext, projectId: string, changed: ReadonlyMap<string, ReadonlySet<string | undefined>>, revisionOf: (nodeId: string) => SQL): SQL | null {
  // One entry per operation, however many content writes it makes.
  if (changed.size === 0 || ctx.state.recorded) return null;
  const named = ctx.expected?.nodeId;
  const nodeId = named !== undefined && changed.has(named) ? named : [...changed.keys()][0];
  if (nodeId === undefined) return null;
  const locales = [...(changed.get(nodeId) ?? [])];
  const translated = locales.every((l) => l !== undefined);
  const target: Record<string, unknown> = translated ? { kind: "translation", id: nodeId, locale: locales[0] ?? null } : { kind: "node", id: nodeId };
  const others = [...changed.keys()].filter((id) => id !== nodeId);
  if (others.length > 0) target.nodes = others.slice(0, 50);
  ctx.state.recorded = true;
  return sql`insert into activity (id, project_id, operation, actor, target, node_id, revision)
    values (${uuidv7()}, ${projectId}, ${ctx.operation ?? "system"}, ${JSON.stringify(ctx.actor)}::jsonb, ${JSON.stringify(target)}::jsonb, ${nodeId}, ${revisionOf(nodeId)})`;
}

/** What the activity entry of an operation names: its name, whether it writes, the kind of its target. */
export interface OperationActivity {
  readonly name: string;
  readonly write: boolean;
  readonly kind?: string;
}

/**
 * After a project write operation succeeded, unless the write path recorded it: its target is the
 * declared kind (else the name without its verb) and the id the input or the answer names.
 */
export async function recordOperationActivity(db: Db, ctx: WriteContext, op: OperationActivity, projectId: string, input: unknown, output: unknown): Promise<void> {
  if (!op.write || ctx.state.recorded) return;
  const target = { kind: op.kind ?? op.name.replace(/^[a-z]+_/, ""), id: targetId(input, output) };
  try {
    await db.insert(activity).values({ id: uuidv7(), projectId, operation: op.name, actor: ctx.actor, target, nodeId: null, revision: null });
  } catch (err) {
    if (!isForeignKeyViolation(err)) throw err; // the write deleted the project: nothing left to log in
  }
  ctx.state.recorded = true;
}

const ID_KEY = /^(id|[a-z_]+_id)$/;
function targetId(input: unknown, output: unknown): string | null {
  const fromInput = isPlainObject(input) ? Object.entries(input).find(([k, v]) => ID_KEY.test(k) && typeof v === "string") : undefined;
  if (fromInput) return fromInput[1] as string;
  if (!isPlainObject(output)) return null;
  if (typeof output.id === "string") return output.id;
  for (const v of Object.values(output)) if (isPlainObject(v) && typeof v.id === "string") return v.id;
  return null;
}
