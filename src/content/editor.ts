// The editor's view of content (any status, drafts merged in), for every transport: a node by id or
// path, in one locale; a collection's entries; the order of a node's blocks.
import { and, asc, count, desc, eq, type SQL, sql } from "drizzle-orm";
import type { z } from "zod";
import type { Db } from "../../db/client";
import { nodes, translations } from "../../db/schema";
import { AppError } from "../errors";
import { committed } from "../lib/commits";
import { isUuid } from "../lib/ids";
import { deepMerge } from "../lib/merge";
import { readPaging } from "../lib/paging";
import { oneRow } from "../lib/rows";
import { bumpContentVersion, type Project } from "../projects/service";
import { projectLocale } from "../translations/service";
import type { EntryOut, EntryQuery, LocalizedNodeOut } from "./operations";
import { type BlockWire, type EntrySort, escapeLike, getBlocks, getNode, getNodeByPath, getNodeWithBlocks, type Node, setNodeBlocks } from "./service";

/** A node by id or by its slug path (any status). */
export async function findNode(db: Db, projectId: string, ref: { id?: string; path?: string }): Promise<Node> {
  if (ref.id && ref.path) throw new AppError("invalid_request", "give either id or path, not both", { field: "id" });
  if (ref.id) return getNode(db, projectId, ref.id);
  if (ref.path !== undefined) return getNodeByPath(db, projectId, ref.path);
  throw new AppError("missing_parameter", "give the node's id or its path", { field: "id" });
}

/** Puts a node's blocks in the given order; the ids must be exactly the node's current blocks. */
export async function reorderBlocks(db: Db, project: Project, nodeId: string, blockIds: readonly string[], now: Date): Promise<BlockWire[]> {
  return db
    .transaction(async (tx) => {
      await bumpContentVersion(tx, project.id);
      const node = await getNode(tx, project.id, nodeId);
      const current = await getBlocks(tx, node.id);
      const byId = new Map(current.map((b) => [b.id, b]));
      const ids = blockIds.map((id) => id.toLowerCase());
      const unknown = ids.filter((id) => !byId.has(id));
      if (unknown.length > 0) throw new AppError("invalid_request", `not blocks of this node: ${unknown.join(", ")}`, { field: "block_ids" });
      if (new Set(ids).size !== ids.length) throw new AppError("invalid_request", "block_ids lists a block twice", { field: "block_ids" });
      const missing = current.filter((b) => !ids.includes(b.id)).map((b) => b.id);
      if (missing.length > 0) {
        throw new AppError("invalid_request", `block_ids must list every block of the node; missing: ${missing.join(", ")}`, { field: "block_ids" });
      }
      const ordered = ids.flatMap((id) => {
        const b = byId.get(id);
        return b ? [{ id, type: b.type, data: b.data }] : [];
      });
      return setNodeBlocks(tx, project, node.id, ordered, now);
    })
    .then(committed(db, project.id));
}

export type LocalizedNode = z.output<typeof LocalizedNodeOut>;

/**
 * The node with its blocks in one locale: the translation's meta and block overrides (draft or
 * published: this is the editor's view) deep-merged over the base content.
 */
export async function getLocalizedNode(db: Db, project: Project, nodeId: string, locale: string | undefined): Promise<LocalizedNode> {
  const loc = locale === undefined ? project.defaultLocale : projectLocale(project, locale);
  const node = await getNodeWithBlocks(db, project.id, nodeId);
  if (loc === project.defaultLocale) return { ...node, locale: loc, translated: false, translation_status: null };
  const [tr] = await db
    .select()
    .from(translations)
    .where(and(eq(translations.nodeId, node.id), eq(translations.locale, loc)))
    .limit(1);
  if (!tr) return { ...node, locale: loc, translated: false, translation_status: null };
  const { title, slug: _slug, ...seoMeta } = tr.meta;
  return {
    ...node,
    title: typeof title === "string" && title !== "" ? title : node.title,
    seo: deepMerge(node.seo, seoMeta),
    blocks: node.blocks.map((b) => {
      const override = tr.blocks[b.id];
      return override ? { ...b, data: deepMerge(b.data, override) } : b;
    }),
    locale: loc,
    translated: true,
    translation_status: tr.status,
  };
}

type EntryFilter = z.output<typeof EntryQuery>;

type EntryWire = z.output<typeof EntryOut>;

/**
 * The entries (child nodes) of a collection, in every status unless `status` filters: the
 * delivery list shows published ones only, an agent managing the project needs to see drafts too.
 */
export async function listEntries(db: Db, projectId: string, query: EntryFilter): Promise<{ collection: Node; data: EntryWire[]; total: number; page: number; per_page: number }> {
  const collection = isUuid(query.collection) ? await getNode(db, projectId, query.collection) : await getNodeByPath(db, projectId, query.collection);
  if (collection.type !== "collection") {
    throw new AppError("invalid_request", `node "${collection.path}" is of type "${collection.type}", not a collection`, { field: "collection" });
  }
  const conds: SQL[] = [eq(nodes.projectId, projectId), eq(nodes.parentId, collection.id)];
  if (query.status) conds.push(eq(nodes.status, query.status));
  if (query.q) {
    const pattern = `%${escapeLike(query.q)}%`;
    conds.push(sql`(${nodes.title} ilike ${pattern} or ${nodes.slug} ilike ${pattern})`);
  }
  const { page, perPage } = readPaging(query, { defaultPerPage: 20 });
  const where = and(...conds);
  const [data, counted] = await Promise.all([
    db
      .select()
      .from(nodes)
      .where(where)
      .orderBy(...entryOrder(query.sort ?? "-updated_at"))
      .limit(perPage)
      .offset((page - 1) * perPage),
    db.select({ total: count() }).from(nodes).where(where),
  ]);
  return {
    collection,
    data: data.map((n) => ({
      id: n.id,
      slug: n.slug,
      title: n.title,
      path: n.path,
      status: n.status,
      position: n.position,
      created_at: n.createdAt.toISOString(),
      updated_at: n.updatedAt.toISOString(),
    })),
    total: Number(oneRow(counted).total),
    page,
    per_page: perPage,
  };
}

function entryOrder(sort: EntrySort): SQL[] {
  switch (sort) {
    case "updated_at":
      return [asc(nodes.updatedAt), asc(nodes.id)];
    case "-updated_at":
      return [desc(nodes.updatedAt), desc(nodes.id)];
    case "title":
      return [asc(nodes.title), asc(nodes.id)];
    case "-title":
      return [desc(nodes.title), desc(nodes.id)];
    case "created_at":
      return [asc(nodes.createdAt), asc(nodes.id)];
    case "-created_at":
      return [desc(nodes.createdAt), desc(nodes.id)];
    case "position":
      return [asc(nodes.position), asc(nodes.id)];
  }
}
