// Reading and writing a project's content model. A write compiles the new model first
// (a model that is not one is 400), checks every node of the project against it (409 listing the
// nodes it would no longer accept, unless forced; a dry run only reports), and goes through the one
// write path, so the content version moves with it and every instance meets the new model version
// on its next write (src/write/unit.ts reads projects.model_version in the statement that locks the project).
import { and, asc, count, desc, eq, gt } from "drizzle-orm";
import type { Db } from "../../db/client";
import { blocks, contentModels, nodes, projects } from "../../db/schema";
import { AppError, notFound } from "../errors";
import type { WriteContext } from "../write/context";
import { contentWrite } from "../write/unit";
import { nodeSnapshots } from "./cache";
import { type CompiledModel, compileModelSliced, ModelError, slicer } from "./compile";
import { syncFieldIndexes } from "./indexes";
import { type BlockTypeDef, type ContentModelDefinition, ContentModelIn, EMPTY_MODEL, MAX_VIOLATIONS, type NodeTypeDef, type Violation } from "./model";

export interface StoredModel extends ContentModelDefinition {
  readonly version: number;
  readonly updated_at: string | null;
}

/** A node the model would not accept: which, where, and every way it fails. */
interface InvalidNode {
  readonly node_id: string;
  readonly path: string;
  readonly type: string;
  readonly violations: Violation[];
}

export interface ModelCheck {
  /** The first MAX_VIOLATIONS nodes the model does not accept, by id. */
  readonly invalid: InvalidNode[];
  /** How many nodes in all. */
  readonly count: number;
}

export interface ModelWrite extends ModelCheck {
  readonly model: StoredModel;
  /** false for a dry run: nothing was written. */
  readonly applied: boolean;
}

export interface WriteOptions {
  readonly force?: boolean;
  readonly dry_run?: boolean;
  /** false: build no field indexes (the caller's transaction is still open). */
  readonly indexes?: boolean;
}

/** A change of the model: the whole new definition from the current one (which it may not mutate). */
export type ModelChange = (current: ContentModelDefinition) => ContentModelDefinition;

const CHECK_PAGE = 500;

/** The project's model; version 0 and empty lists when it has none. */
export async function getModel(db: Db, projectId: string): Promise<StoredModel> {
  const [row] = await db.select().from(contentModels).where(eq(contentModels.projectId, projectId));
  if (!row) return { ...EMPTY_MODEL, version: 0, updated_at: null };
  return { ...ContentModelIn.parse(row.definition), version: row.version, updated_at: row.updatedAt.toISOString() };
}

export async function getBlockType(db: Db, projectId: string, name: string): Promise<{ block_type: BlockTypeDef; version: number }> {
  const model = await getModel(db, projectId);
  const found = model.block_types.find((t) => t.name === name);
  if (!found) throw notFound("block type");
  return { block_type: found, version: model.version };
}

export async function getNodeType(db: Db, projectId: string, name: string): Promise<{ node_type: NodeTypeDef; version: number }> {
  const model = await getModel(db, projectId);
  const found = model.node_types.find((t) => t.name === name);
  if (!found) throw notFound("node type");
  return { node_type: found, version: model.version };
}

/** Adds or replaces one type, keeping its place in the list. */
export const putType =
  <T extends { name: string }>(list: "block_types" | "node_types", def: T): ModelChange =>
  (current) => {
    const types = current[list] as unknown as T[];
    const at = types.findIndex((t) => t.name === def.name);
    const next = at < 0 ? [...types, def] : types.map((t, i) => (i === at ? def : t));
    return { ...current, [list]: next };
  };

/** Removes one type; 404 when the model has none of that name. */
export const deleteType =
  (list: "block_types" | "node_types", name: string): ModelChange =>
  (current) => {
    const types = current[list] as readonly { name: string }[];
    if (!types.some((t) => t.name === name)) throw notFound(list === "block_types" ? "block type" : "node type");
    return { ...current, [list]: types.filter((t) => t.name !== name) };
  };

/**
 * Writes the model `change` makes of the current one. The current model is read after the project
 * is locked (inside contentWrite), so two concurrent changes of one type each see the other's.
 */
export async function writeModel(db: Db, ctx: WriteContext, projectId: string, change: ModelChange, opts: WriteOptions): Promise<ModelWrite> {
  if (opts.dry_run) {
    const current = await getModel(db, projectId);
    const definition = change(current);
    const check = await checkContent(db, projectId, await compile(definition, current.version + 1));
    return { model: { ...definition, version: current.version, updated_at: current.updated_at }, applied: false, ...check };
  }
  let compiled: CompiledModel | undefined;
  const written = await contentWrite(db, ctx, projectId, async (tx) => {
    const current = await getModel(tx, projectId);
    const definition = change(current);
    const version = current.version + 1;
    compiled = await compile(definition, version);
    const check = await checkContent(tx, projectId, compiled);
    if (check.count > 0 && !opts.force) {
      const message = `${check.count} node${check.count > 1 ? "s" : ""} would no longer match the content model; fix ${check.count > 1 ? "them" : "it"} first, or force=true applies the model anyway (dry_run=true only reports)`;
      throw new AppError("conflict", message, check);
    }
    const { strict, block_types, node_types } = definition;
    const stored = { strict, block_types, node_types };
    const [row] = await tx
      .insert(contentModels)
      .values({ projectId, version, definition: stored })
      .onConflictDoUpdate({ target: contentModels.projectId, set: { version, definition: stored, updatedAt: new Date() } })
      .returning({ updatedAt: contentModels.updatedAt });
    await tx.update(projects).set({ modelVersion: version }).where(eq(projects.id, projectId));
    return { model: { ...stored, version, updated_at: row?.updatedAt.toISOString() ?? null }, applied: true, ...check };
  });
  // The indexes behind entries filters and sorts (index: true), built once the model has committed:
  // CREATE INDEX CONCURRENTLY runs outside any transaction and does not block the project's writes.
  // A model written inside a larger transaction (the first start's demo seed) builds none: its
  // filters work without (a scan), and the project's next model write builds them.
  if (compiled && opts.indexes !== false) await syncFieldIndexes(db, projectId, compiled);
  return written;
}

/** compileModel, its ModelError as 400 invalid_content with pointers into the model. */
async function compile(definition: ContentModelDefinition, version: number): Promise<CompiledModel> {
  try {
    return await compileModelSliced(definition, version);
  } catch (err) {
    if (!(err instanceof ModelError)) throw err;
    const [first] = err.violations;
    const more = err.violations.length > 1 ? ` (and ${err.violations.length - 1} more)` : "";
    throw new AppError("invalid_content", `the content model is not valid: ${first?.pointer}: ${first?.message}${more}`, { violations: err.violations });
  }
}

/** Every node of the project checked against `model`, a page of nodes at a time (one snapshot query each). */
export async function checkContent(db: Db, projectId: string, model: CompiledModel): Promise<ModelCheck> {
  const invalid: InvalidNode[] = [];
  let count = 0;
  let after = "";
  const pause = slicer();
  for (;;) {
    const page = await db
      .select({ id: nodes.id, path: nodes.path })
      .from(nodes)
      .where(and(eq(nodes.projectId, projectId), after === "" ? undefined : gt(nodes.id, after)))
      .orderBy(asc(nodes.id))
      .limit(CHECK_PAGE);
    if (page.length === 0) break;
    const paths = new Map(page.map((n) => [n.id, n.path]));
    const snapshots = await nodeSnapshots(db, projectId, [...paths.keys()]);
    snapshots.sort((a, b) => (a.id < b.id ? -1 : 1));
    for (const node of snapshots) {
      await pause(); // a page of nodes checked at once could hold the loop for seconds
      const violations = model.validateNode(node);
      if (violations.length === 0) continue;
      count += 1;
      if (invalid.length < MAX_VIOLATIONS) invalid.push({ node_id: node.id, path: paths.get(node.id) ?? "", type: node.type, violations });
    }
    after = page[page.length - 1]?.id ?? after;
    if (page.length < CHECK_PAGE) break;
  }
  return { invalid, count };
}

/** The node types and block types the project's content uses, most used first (at most 100 of each). */
export async function typesInUse(db: Db, projectId: string): Promise<{ node_types: { type: string; count: number }[]; block_types: { type: string; count: number }[] }> {
  const n = count();
  const nodeTypes = await db.select({ type: nodes.type, count: n }).from(nodes).where(eq(nodes.projectId, projectId)).groupBy(nodes.type).orderBy(desc(n), asc(nodes.type)).limit(100);
  const b = count();
  const blockTypes = await db
    .select({ type: blocks.type, count: b })
    .from(blocks)
    .innerJoin(nodes, eq(nodes.id, blocks.nodeId))
    .where(eq(nodes.projectId, projectId))
    .groupBy(blocks.type)
    .orderBy(desc(b), asc(blocks.type))
    .limit(100);
  return { node_types: nodeTypes, block_types: blockTypes };
}
