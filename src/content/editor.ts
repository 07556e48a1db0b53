// The editor's view of content (any status, drafts merged in), for every transport: a node by id or
// path, in one locale; a collection's entries; the order of a node's blocks.
import { asc, desc, eq, type SQL, sql } from "drizzle-orm";
import type { z } from "zod";
import type { Db } from "../../db/client";
import { nodes, type Project } from "../../db/schema";
import { AppError } from "../errors";
import { isUuid } from "../lib/ids";
import { deepMerge } from "../lib/merge";
import { readPaging } from "../lib/paging";
import { escapeLike } from "../lib/sql";
import { compiledModel } from "../model/cache";
import { fieldFiltersOf, fieldOrder, fieldSortName, filterConditions } from "../model/field-filters";
import { ensureFieldFunctions } from "../model/indexes";
import type { WriteContext } from "../write/context";
import { contentWrite } from "../write/unit";
import { type EntriesOut, EntryOut, type EntryQuery, type EntrySort, type LocalizedNodeOut } from "./model";
import { type BlockWire, findTranslation, getBlocks, getNode, getNodeByPath, getNodeWithBlocks, type Node, nodeToWire, pageOfNodes, projectLocale, replaceBlocks } from "./service";

export async function findNode(db: Db, projectId: string, ref: { id?: string; path?: string }): Promise<Node> {
  if (ref.id && ref.path) throw new AppError("invalid_request", "give either id or path, not both", { field: "id" });
  if (ref.id) return getNode(db, projectId, ref.id);
  if (ref.path !== undefined) return getNodeByPath(db, projectId, ref.path);
  throw new AppError("missing_parameter", "give the node's id or its path", { field: "id" });
}

export const reorderBlocks = (db: Db, ctx: WriteContext, project: Project, nodeId: string, blockIds: readonly string[], now: Date): Promise<BlockWire[]> =>
  contentWrite(db, ctx, project.id, async (tx, w) => {
    const node = await getNode(tx, project.id, nodeId);
    const current = await getBlocks(tx, node.id);
    const byId = new Map(current.map((b) => [b.id, { id: b.id, type: b.type, data: b.data }]));
    const ids = blockIds.map((id) => id.toLowerCase());
    const unknown = ids.filter((id) => !byId.has(id));
    if (unknown.length > 0) throw new AppError("invalid_request", `not blocks of this node: ${unknown.join(", ")}`, { field: "block_ids" });
    if (new Set(ids).size !== ids.length) throw new AppError("invalid_request", "block_ids lists a block twice", { field: "block_ids" });
    const missing = current.filter((b) => !ids.includes(b.id)).map((b) => b.id);
    if (missing.length > 0) throw new AppError("invalid_request", `block_ids must list every block of the node; missing: ${missing.join(", ")}`, { field: "block_ids" });
    const ordered = ids.flatMap((id) => byId.get(id) ?? []);
    return replaceBlocks(tx, w, node, ordered, now);
  });

/**
 * The node with its blocks in one locale: the translation's meta, field and block overrides (draft or
 * published: this is the editor's view) deep-merged over the base content.
 */
export async function getLocalizedNode(db: Db, project: Project, nodeId: string, locale: string | undefined): Promise<z.output<typeof LocalizedNodeOut>> {
  const loc = locale === undefined ? project.defaultLocale : projectLocale(project, locale);
  const node = await getNodeWithBlocks(db, project.id, nodeId);
  const tr = loc === project.defaultLocale ? undefined : await findTranslation(db, node.id, loc);
  if (!tr) return { ...node, locale: loc, translated: false, translation_status: null, translation_state: null };
  const { title, slug: _slug, ...seoMeta } = tr.meta;
  return {
    ...node,
    title: typeof title === "string" && title !== "" ? title : node.title,
    seo: deepMerge(node.seo, seoMeta),
    fields: deepMerge(node.fields, tr.fields),
    blocks: node.blocks.map((b) => ({ ...b, data: deepMerge(b.data, tr.blocks[b.id] ?? {}) })),
    locale: loc,
    translated: true,
    translation_status: tr.status,
    translation_state: tr.status === "published" && tr.changed ? "changed" : tr.status,
  };
}

/**
 * The entries (child nodes) of a collection, in every status unless `status` filters: the
 * delivery list shows published ones only, an agent managing the project needs to see drafts too.
 * Field filters and sorts are delivery's (src/model/field-filters.ts), over the same indexes.
 */
export async function listEntries(db: Db, project: Project, query: z.output<typeof EntryQuery>): Promise<z.input<typeof EntriesOut>> {
  const collection = isUuid(query.collection) ? await getNode(db, project.id, query.collection) : await getNodeByPath(db, project.id, query.collection);
  if (collection.type !== "collection") throw new AppError("invalid_request", `node "${collection.path}" is of type "${collection.type}", not a collection`, { field: "collection" });
  const { conds, order } = await entriesSelection(db, project, collection.id, query);
  const { data, ...paging } = await pageOfNodes(db, conds, order, readPaging(query, { defaultPerPage: 20 }));
  return {
    collection: { id: collection.id, path: collection.path, title: collection.title },
    entries: data.map((n) => EntryOut.parse(nodeToWire(n))),
    ...paging,
  };
}

/** The WHERE conditions and ORDER BY of an entries page (exported for the EXPLAIN test); 400 for a filter or sort the model does not allow. */
export async function entriesSelection(db: Db, project: Project, collectionId: string, query: z.output<typeof EntryQuery>): Promise<{ conds: SQL[]; order: SQL[] }> {
  const conds: SQL[] = [eq(nodes.projectId, project.id), eq(nodes.parentId, collectionId)];
  if (query.status) conds.push(eq(nodes.status, query.status));
  const pattern = `%${escapeLike(query.q ?? "")}%`;
  if (query.q) conds.push(sql`(${nodes.title} ilike ${pattern} or ${nodes.slug} ilike ${pattern})`);
  const sort = query.sort ?? "-updated_at";
  const byField = fieldSortName(sort) !== null;
  const filters = fieldFiltersOf(query.filters ?? []);
  if (!byField && filters.length === 0) return { conds, order: entryOrder(sort as EntrySort) };
  const model = project.modelVersion > 0 ? await compiledModel(db, project.id, project.modelVersion) : null;
  const filtered = filterConditions(model, filters, "nodes");
  const sorted = byField ? fieldOrder(model, sort, "nodes") : null;
  if ([...filtered.fields, ...(sorted ? [sorted.field] : [])].some((f) => f.kind === "date")) await ensureFieldFunctions(db);
  // The project and the collection (conds) lead the shared field indexes (src/model/indexes.ts).
  if (filters.length > 0) conds.push(sql`true${filtered.where}`);
  return { conds, order: sorted ? [sorted.order] : entryOrder(sort as EntrySort) };
}

/** A leading "-" sorts descending; the id breaks ties in the same direction. */
function entryOrder(sort: EntrySort): SQL[] {
  const [dir, key] = sort.startsWith("-") ? [desc, sort.slice(1)] : [asc, sort];
  const column = key === "title" ? nodes.title : key === "created_at" ? nodes.createdAt : key === "position" ? nodes.position : nodes.updatedAt;
  return [dir(column), dir(nodes.id)];
}
