// The compiled content model of each project, kept per process and compiled once per version. A
// content write reads the project's model version in the statement that locks the project
// (src/write/unit.ts), so every instance checks a write against the model version it commits under:
// a new version is compiled by the first write that meets it, on whichever instance.
import { and, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { contentModels, nodes } from "../../db/schema";
import { type CompiledModel, compileModelSliced, type NodeSnapshot } from "./compile";
import { ContentModelIn, EMPTY_MODEL } from "./model";

const compiled = new Map<string, CompiledModel>();
/** Compilations under way (they yield to the event loop between types), by project and version. */
const compiling = new Map<string, Promise<CompiledModel>>();

/** The project's model at `version` (0: none, everything free-form). */
export async function compiledModel(db: Db, projectId: string, version: number): Promise<CompiledModel> {
  const hit = compiled.get(projectId);
  if (hit?.version === version) return hit;
  const key = `${projectId}:${version}`;
  const pending = compiling.get(key) ?? compile(db, projectId, version).finally(() => compiling.delete(key));
  compiling.set(key, pending);
  return pending;
}

async function compile(db: Db, projectId: string, version: number): Promise<CompiledModel> {
  const [row] = version === 0 ? [] : await db.select().from(contentModels).where(eq(contentModels.projectId, projectId));
  // stored: a model written before a limit existed still checks what it can, and never fails a write with a 500.
  const model = await compileModelSliced(row ? ContentModelIn.parse(row.definition) : EMPTY_MODEL, row?.version ?? 0, { stored: true });
  const hit = compiled.get(projectId);
  if (!hit || hit.version <= model.version) compiled.set(projectId, model);
  return model;
}

/** What the model checks of each of `ids` (nodes of the project; ids of others are skipped), in one query. */
export async function nodeSnapshots(db: Db, projectId: string, ids: readonly string[]): Promise<(NodeSnapshot & { id: string })[]> {
  if (ids.length === 0) return [];
  const parent = sql`(select p.type from nodes p where p.id = ${nodes.parentId})`;
  const blockList = sql`coalesce((select jsonb_agg(jsonb_build_object('id', b.id, 'type', b.type, 'data', b.data) order by b."order", b.id) from blocks b where b.node_id = ${nodes.id}), '[]'::jsonb)`;
  const translationList = sql`coalesce((select jsonb_agg(jsonb_build_object('locale', t.locale, 'fields', t.fields, 'blocks', t.blocks) order by t.locale) from translations t where t.node_id = ${nodes.id}), '[]'::jsonb)`;
  const rows = await db
    .select({
      id: nodes.id,
      type: nodes.type,
      parent_type: sql<string | null>`${parent}`,
      fields: nodes.fields,
      blocks: sql<NodeSnapshot["blocks"]>`${blockList}`,
      translations: sql<NodeSnapshot["translations"]>`${translationList}`,
    })
    .from(nodes)
    .where(and(eq(nodes.projectId, projectId), inArray(nodes.id, [...ids])));
  return rows;
}
