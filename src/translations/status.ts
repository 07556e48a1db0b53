// The state of every translated unit (docs/translation.md, "The state of every translated field"):
// written with the translation that carries it, marked stale by the write that changes its source,
// set to published by the write that publishes it, each in that write's transaction.
import { and, asc, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { type Actor, nodes, type Project, projects, type TranslationUnitRow, translationMemory, translationUnits, type UnitOrigin, type UnitStatus } from "../../db/schema";
import { getBlocks, getNode } from "../content/service";
import { readPaging } from "../lib/paging";
import { compiledModel } from "../model/cache";
import type { CompiledModel } from "../model/compile";
import { sourceUnits, type TranslationValues, translatedUnits, type Unit, type UnitSource } from "../model/units";
import { publishUnits, textArray } from "../write/translation-units";

/** Who writes a translation through an operation: a person (the studio, an admin key) or an agent (MCP). */
export function originOf(actor: Actor): UnitOrigin {
  const who = { kind: actor.kind, id: actor.id, name: actor.name } as Actor;
  return { kind: actor.kind === "mcp_token" || actor.kind === "oauth" ? "agent" : "person", actor: who };
}

/** A unit's state other than its write's: a machine answer that failed its checks, one from the memory, an import's. */
export interface UnitState {
  readonly status?: UnitStatus;
  readonly origin?: UnitOrigin;
  readonly humanEdited?: boolean;
}

/** The status a unit's new text gets from its origin: a person's is approved; anything else awaits review. */
const statusOf = (origin: UnitOrigin): UnitStatus => (origin.kind === "person" ? "approved" : "machine");

export async function modelOf(db: Db, projectId: string): Promise<CompiledModel> {
  const [p] = await db.select({ version: projects.modelVersion }).from(projects).where(eq(projects.id, projectId));
  return compiledModel(db, projectId, p?.version ?? 0);
}

/**
 * A translation written (inside its content write): each unit whose text is new or changed gets
 * its origin, the source hash and revision it was made from (the node as it is), and its status;
 * units it no longer carries lose their row; unchanged ones keep theirs. `published`: the write
 * publishes the translation too.
 */
export async function recordUnits(
  tx: Db,
  projectId: string,
  node: UnitSource & { readonly id: string; readonly revision: number },
  locale: string,
  before: TranslationValues | null,
  after: TranslationValues,
  origin: UnitOrigin,
  published: boolean,
  now: Date,
  perUnit?: (pointer: string) => UnitState | undefined,
): Promise<void> {
  const units = sourceUnits(node, await modelOf(tx, projectId));
  const was = before ? translatedUnits(before, units) : new Map<string, string>();
  const is = translatedUnits(after, units);
  const changed = units.filter((u) => is.has(u.pointer) && is.get(u.pointer) !== was.get(u.pointer));
  const kept = units.filter((u) => is.has(u.pointer)).map((u) => u.pointer);
  await tx.execute(sql`delete from translation_units where node_id = ${node.id} and locale = ${locale} and not (pointer = any(${textArray(kept)}))`);
  if (changed.length > 0) {
    const values = changed.map((u) => {
      const own = perUnit?.(u.pointer);
      const from = own?.origin ?? origin;
      const status = own?.status ?? statusOf(from);
      return {
        projectId,
        nodeId: node.id,
        locale,
        pointer: u.pointer,
        status: published && status !== "needs_review" ? ("published" as const) : status,
        sourceHash: u.hash,
        sourceRevision: node.revision,
        origin: from,
        humanEdited: own?.humanEdited ?? from.kind === "person",
        staleSince: null,
        updatedAt: now,
      };
    });
    await tx
      .insert(translationUnits)
      .values(values)
      .onConflictDoUpdate({
        target: [translationUnits.nodeId, translationUnits.locale, translationUnits.pointer],
        set: {
          status: sql`excluded.status`,
          sourceHash: sql`excluded.source_hash`,
          sourceRevision: sql`excluded.source_revision`,
          origin: sql`excluded.origin`,
          humanEdited: sql`excluded.human_edited`,
          staleSince: null,
          updatedAt: now,
        },
      });
  }
  // The memory learns every text that is not known to be wrong, for the next time this source comes (any node).
  const learned = changed.filter((u) => (perUnit?.(u.pointer)?.status ?? "") !== "needs_review");
  if (learned.length > 0) {
    const entries = new Map(learned.map((u) => [u.hash, { projectId, locale, sourceHash: u.hash, target: is.get(u.pointer) ?? "", origin: perUnit?.(u.pointer)?.origin ?? origin, updatedAt: now }]));
    await tx
      .insert(translationMemory)
      .values([...entries.values()])
      .onConflictDoUpdate({
        target: [translationMemory.projectId, translationMemory.locale, translationMemory.sourceHash],
        set: { target: sql`excluded.target`, origin: sql`excluded.origin`, updatedAt: now },
      });
  }
  if (published) await publishUnits(tx, node.id, [locale]);
}

export interface FieldStatus {
  status: UnitStatus | "missing";
  source_hash: string | null;
  source_revision: number | null;
  origin: UnitOrigin | null;
  human_edited: boolean;
  /** stale: when its source changed. */
  stale_since?: string;
}

/**
 * A translation's field_status: every translatable unit of the node, keyed by its pointer. A unit
 * the translation does not carry is missing; one it carries without a row (written before this
 * record existed, or its working copy discarded) is approved, of unknown origin.
 */
export function fieldStatus(units: readonly Unit[], values: TranslationValues, rowsOf: readonly TranslationUnitRow[]): Record<string, FieldStatus> {
  const carried = translatedUnits(values, units);
  const byPointer = new Map(rowsOf.map((r) => [r.pointer, r]));
  const out: Record<string, FieldStatus> = {};
  for (const u of units) {
    const row = byPointer.get(u.pointer);
    if (!carried.has(u.pointer)) out[u.pointer] = { status: "missing", source_hash: u.hash, source_revision: null, origin: null, human_edited: false };
    else if (!row) out[u.pointer] = { status: "approved", source_hash: null, source_revision: null, origin: null, human_edited: false };
    else
      out[u.pointer] = {
        status: row.status,
        source_hash: row.sourceHash,
        source_revision: row.sourceRevision,
        origin: row.origin,
        human_edited: row.humanEdited,
        ...(row.staleSince ? { stale_since: row.staleSince.toISOString() } : {}),
      };
  }
  return out;
}

export const unitRows = (db: Db, nodeId: string, locale?: string): Promise<TranslationUnitRow[]> =>
  db
    .select()
    .from(translationUnits)
    .where(and(eq(translationUnits.nodeId, nodeId), locale === undefined ? undefined : eq(translationUnits.locale, locale)))
    .orderBy(asc(translationUnits.pointer));

/** list_stale_translations: per node and locale, the pointers whose source changed since they were translated, by node path. */
export async function listStale(db: Db, project: Project, q: { locale?: string; page?: number; per_page?: number }) {
  const { page, perPage } = readPaging(q, { defaultPerPage: 50 });
  const where = and(eq(translationUnits.projectId, project.id), eq(translationUnits.status, "stale"), q.locale ? sql`lower(${translationUnits.locale}) = lower(${q.locale})` : undefined);
  const [found, [total]] = await Promise.all([
    db
      .select({
        node_id: translationUnits.nodeId,
        locale: translationUnits.locale,
        path: nodes.path,
        pointers: sql<string[]>`array_agg(${translationUnits.pointer} order by ${translationUnits.pointer})`,
      })
      .from(translationUnits)
      .innerJoin(nodes, eq(nodes.id, translationUnits.nodeId))
      .where(where)
      .groupBy(translationUnits.nodeId, translationUnits.locale, nodes.path)
      .orderBy(asc(nodes.path), asc(translationUnits.locale))
      .limit(perPage)
      .offset((page - 1) * perPage),
    db
      .select({ n: sql<number>`count(distinct (${translationUnits.nodeId}, ${translationUnits.locale}))` })
      .from(translationUnits)
      .where(where),
  ]);
  return { stale: found.map((r) => ({ node_id: r.node_id, locale: r.locale, path: r.path, pointers: r.pointers })), total: Number(total?.n ?? 0), page, per_page: perPage };
}

/** field_status of each of a node's translations, keyed by locale (one read of the node, its blocks, the model and the rows). */
export async function fieldStatuses(db: Db, projectId: string, nodeId: string, trs: ReadonlyArray<{ locale: string } & TranslationValues>): Promise<Map<string, Record<string, FieldStatus>>> {
  if (trs.length === 0) return new Map();
  const [node, nodeBlocks, model, all] = await Promise.all([getNode(db, projectId, nodeId), getBlocks(db, nodeId), modelOf(db, projectId), unitRows(db, nodeId)]);
  const units = sourceUnits({ ...node, blocks: nodeBlocks }, model);
  return new Map(
    trs.map((t) => [
      t.locale,
      fieldStatus(
        units,
        t,
        all.filter((r) => r.locale === t.locale),
      ),
    ]),
  );
}
