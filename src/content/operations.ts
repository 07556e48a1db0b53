import { z } from "zod";
import { IDEMPOTENT_WRITE, projectOperation, READ_ONLY, WRITE } from "../core/operation";
import { AppError } from "../errors";
import { Empty, Id, Locale, NodeId, Slug } from "../lib/schemas";
import { PUBLISH_SCOPES } from "../lib/scopes";
import { parseFieldFilters } from "../model/field-filters";
import { findNode, getLocalizedNode, listEntries, reorderBlocks } from "./editor";
import { BlockOut, BlocksIn, EntriesOut, EntryQuery, FieldsIn, LocalizedNodeOut, NewNodeIn, NodeOut, NodeQuery, NodeWithBlocksOut, PageInfo, Position, PublishedVersionOut, SeoIn } from "./model";
import { ScheduleIn } from "./schedule";
import { createNode, deleteNode, discardNodeChanges, getNodeWithBlocks, getPublishedVersion, listNodes, nodeToWire, setNodeBlocks, type Transition, transitionNode, updateNode } from "./service";

const NodeRef = { node_id: NodeId };
const nodeRoute = (method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE", tail: string) => ({ method, path: `/admin/p/:ref/nodes/:id${tail}`, params: { id: "node_id" }, tag: "content" }) as const;

const listNodesOp = projectOperation({
  name: "list_nodes",
  title: "List nodes",
  description:
    "List the project's content nodes (pages, collections, entries) in every status, ordered by path. " +
    'Filters combine: type, status, parent_id (a node id, or "root" for top-level nodes) and path_prefix (a slug path such as "blog": the node at that path and everything below it). ' +
    "Returns node rows without blocks; use get_node for blocks. Paginated: page (from 1) and per_page (1-100, default 50), with the total count.",
  scopes: ["content:read"],
  input: NodeQuery,
  output: z.object({ nodes: z.array(NodeOut), ...PageInfo }),
  tool: READ_ONLY,
  http: { method: "GET", path: "/admin/p/:ref/nodes", data: "nodes", tag: "content", summary: "List nodes (any status), filtered by type, status, parent or path prefix" },
  run: ({ deps, project }, args) => listNodes(deps.db, project.id, args).then(({ data, ...paging }) => ({ nodes: data.map(nodeToWire), ...paging })),
});

const getNodeOp = projectOperation({
  name: "get_node",
  title: "Read a node",
  description:
    "Read one node with its ordered blocks, in any status, by id or by slug path (give exactly one). " +
    "With locale (one of the project's locales), the locale's translation (draft or published) is merged over the base content: " +
    "translated is true when one exists, translation_status says whether it is a draft.",
  scopes: ["content:read"],
  input: z.object({
    id: NodeId.optional(),
    path: z.string().min(1).max(2048).optional().describe('slug path from the root, e.g. "blog/hello-world"'),
    locale: Locale.optional(),
  }),
  output: z.object({ node: LocalizedNodeOut }),
  tool: READ_ONLY,
  http: { method: "GET", path: "/admin/p/:ref/node", data: "node", tag: "content", summary: "Read a node by id or slug path, optionally in one locale (its translation merged in)" },
  run: async ({ deps, project }, args) => ({ node: await getLocalizedNode(deps.db, project, (await findNode(deps.db, project.id, args)).id, args.locale) }),
});

const createNodeOp = projectOperation({
  name: "create_node",
  title: "Create a node",
  description:
    "Create a content node as a draft (publish it with publish_node). Its path is the parent's path plus slug; the slug must be unique among its siblings. " +
    'For a collection entry, set parent_id to the collection\'s id and type "entry". Blocks are an ordered array of { type, data }. ' +
    "Read the project's content model first (get_content_model, or the resource cms://{project slug}/model): it says which node types, block types and data each allows; " +
    "content that does not match answers invalid_content listing each violation with a JSON Pointer into your input, to correct and call again.",
  scopes: ["content:write"],
  input: NewNodeIn,
  output: z.object({ node: NodeWithBlocksOut }),
  tool: WRITE,
  http: { method: "POST", path: "/admin/p/:ref/nodes", status: 201, data: "node", tag: "content", summary: "Create a node (as a draft), optionally with its blocks", errors: [409] },
  run: async ({ deps, project, now, write }, args) => ({ node: await createNode(deps.db, write, project, args, now) }),
});

const readPublishedOp = projectOperation({
  name: "read_published_version",
  title: "Read a node's published version",
  description:
    "Read the version of a node that delivery serves (title, slug, path, fields, SEO, blocks and published translations), to compare with the working copy get_node answers. not_found when the node has no published version.",
  scopes: ["content:read"],
  input: z.object(NodeRef),
  output: z.object({ version: PublishedVersionOut }),
  // An admin route only: the MCP tool list is the interface's (agents read revisions with get_revision).
  http: { ...nodeRoute("GET", "/published"), data: "version", summary: "Read a node's published version (what delivery serves)" },
  run: async ({ deps, project }, args) => ({ version: await getPublishedVersion(deps.db, project.id, args.node_id) }),
});

const readNodeOp = projectOperation({
  name: "read_node",
  title: "Read a node with its blocks",
  description: "Read a node by id with its ordered blocks, in any status.",
  scopes: ["content:read"],
  input: z.object(NodeRef),
  output: z.object({ node: NodeWithBlocksOut }),
  http: { ...nodeRoute("GET", ""), data: "node", summary: "Read a node with its blocks" },
  run: async ({ deps, project }, args) => ({ node: await getNodeWithBlocks(deps.db, project.id, args.node_id) }),
});

const updateNodeOp = projectOperation({
  name: "update_node",
  title: "Update a node",
  description:
    "Change a node's working copy: title, slug, parent (moving it), type, position, SEO fields or blocks; omitted fields are kept. " +
    "On a published node nothing a reader sees changes (its state becomes changed) until publish_node. " +
    "A new slug or parent rewrites the paths of everything below it. seo replaces the whole SEO object. " +
    "blocks replaces the whole ordered block list: pass existing blocks with their id to keep them (and their translations); blocks left out are deleted. To only reorder, use reorder_blocks. " +
    "The result must match the project's content model (get_content_model, or the resource cms://{project slug}/model); otherwise invalid_content lists each violation with a JSON Pointer into your input. " +
    "publish_at / unpublish_at schedule the node's publication or unpublication (ISO 8601 with offset, in the future; null clears), as schedule_node does.",
  nodeWrite: true,
  // publish_at / unpublish_at also need content:publish (checked in run: the rest of an update does not).
  scopes: ["content:write"],
  input: z.object({
    node_id: NodeId,
    title: z.string().min(1).max(500).optional(),
    slug: Slug.optional(),
    parent_id: NodeId.nullable().optional().describe("new parent id; null moves the node to the top level"),
    type: z.string().min(1).max(64).optional(),
    position: Position.optional(),
    seo: SeoIn.optional(),
    fields: FieldsIn.optional(),
    blocks: BlocksIn.optional(),
    ...ScheduleIn,
  }),
  output: z.object({ node: NodeWithBlocksOut }),
  tool: IDEMPOTENT_WRITE,
  http: { ...nodeRoute("PATCH", ""), data: "node", summary: "Update a node; a new slug or parent rewrites the paths below it", errors: [409] },
  async run({ deps, project, now, caller, write }, { node_id, publish_at, unpublish_at, ...changes }) {
    if (Object.values(changes).every((v) => v === undefined) && publish_at === undefined && unpublish_at === undefined)
      throw new AppError("missing_parameter", "nothing to update: give at least one of title, slug, parent_id, type, position, seo, fields, blocks, publish_at, unpublish_at");
    if ((publish_at !== undefined || unpublish_at !== undefined) && !caller.scopes.includes("content:publish"))
      throw new AppError("insufficient_scope", "publish_at and unpublish_at schedule a publication: they need content:publish (the rest of an update needs content:write only)", {
        required: ["content:publish"],
      });
    return { node: await updateNode(deps.db, write, project, node_id, changes, now, { publish_at, unpublish_at }) };
  },
});

const setBlocksOp = projectOperation({
  name: "set_blocks",
  title: "Replace a node's blocks",
  description: "Replace a node's ordered blocks (ids kept for existing blocks).",
  nodeWrite: true,
  scopes: ["content:write"],
  input: z.object({ ...NodeRef, blocks: BlocksIn }),
  output: z.object({ blocks: z.array(BlockOut) }),
  http: { ...nodeRoute("PUT", "/blocks"), body: "blocks", data: "blocks", summary: "Replace a node's ordered blocks (ids kept for existing blocks)" },
  run: async ({ deps, project, now, write }, args) => ({ blocks: await setNodeBlocks(deps.db, write, project, args.node_id, args.blocks, now) }),
});

const reorderBlocksOp = projectOperation({
  name: "reorder_blocks",
  title: "Reorder a node's blocks",
  description: "Put a node's blocks in a new order without changing their content. block_ids must list every block id of the node exactly once, in the wanted order (see get_node).",
  nodeWrite: true,
  scopes: ["content:write"],
  input: z.object({ ...NodeRef, block_ids: z.array(z.uuid()).max(500) }),
  output: z.object({ node_id: Id, blocks: z.array(BlockOut) }),
  tool: IDEMPOTENT_WRITE,
  http: { ...nodeRoute("PUT", "/blocks/order"), summary: "Reorder a node's blocks (block_ids: every block id, in the wanted order)" },
  run: async ({ deps, project, now, write }, args) => ({ node_id: args.node_id, blocks: await reorderBlocks(deps.db, write, project, args.node_id, args.block_ids, now) }),
});

/** Action, title, description, and the change of status the route's summary names after the title. */
const TRANSITIONS: ReadonlyArray<[Transition, string, string, string]> = [
  [
    "publish",
    "Publish a node",
    "Make a node's working copy its published version, which the public delivery API serves (draft or changed → published), with the changes of its published translations. " +
      "With locale, publish that translation alone (delivered once the node is published). A page is published under a published parent: otherwise conflict, naming what to publish first. " +
      "A new slug or parent takes effect on delivery (its URL and those below it) now. Publishing an already published node keeps its published_at.",
    "draft or changed → published",
  ],
  [
    "unpublish",
    "Unpublish a node",
    "Take a node's published version off the public delivery API (published → draft); with locale, that translation's alone. The working copy is kept.",
    "published → draft",
  ],
  ["archive", "Archive a node", "Archive a node (any status → archived): hidden from delivery and kept for reference. restore_node brings it back as a draft.", "any → archived"],
  ["restore", "Restore an archived node", "Bring an archived node back as a draft (archived → draft).", "archived → draft"],
];

const transitionOps = TRANSITIONS.map(([action, title, description, change]) =>
  projectOperation({
    name: `${action}_node`,
    title,
    description,
    nodeWrite: true,
    scopes: PUBLISH_SCOPES,
    input: action === "publish" || action === "unpublish" ? z.object({ ...NodeRef, locale: Locale.optional().describe("a translation's locale: act on that translation alone") }) : z.object(NodeRef),
    output: z.object({ node: NodeOut }),
    tool: IDEMPOTENT_WRITE,
    http: { ...nodeRoute("POST", `/${action}`), data: "node", summary: `${title} (${change})`, errors: [409] },
    run: async ({ deps, project, now, write }, args: { node_id: string; locale?: string }) => ({
      node: await transitionNode(deps.db, write, project, args.node_id, action, now, args.locale),
    }),
  }),
);

const discardChangesOp = projectOperation({
  name: "discard_changes",
  title: "Discard unpublished changes",
  description:
    "Bring a published node's working copy back to its published version (changed → published): title, slug, parent, position, SEO, fields, blocks, and the translations that have a published version. " +
    "With locale, that translation alone. Nothing a reader sees changes. Conflict when there is no published version to go back to.",
  nodeWrite: true,
  scopes: ["content:write"],
  input: z.object({ ...NodeRef, locale: Locale.optional() }),
  output: z.object({ node: NodeWithBlocksOut }),
  tool: IDEMPOTENT_WRITE,
  http: { ...nodeRoute("POST", "/discard"), data: "node", summary: "Discard a node's unpublished changes (changed → published)", errors: [409] },
  run: async ({ deps, project, now, write }, args) => ({ node: await discardNodeChanges(deps.db, write, project, args.node_id, now, args.locale) }),
});

const deleteNodeOp = projectOperation({
  name: "delete_node",
  title: "Delete a node",
  description: "Delete a node and its descendants.",
  nodeWrite: true,
  scopes: PUBLISH_SCOPES,
  input: z.object(NodeRef),
  output: Empty,
  tool: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  http: { ...nodeRoute("DELETE", ""), status: 204, summary: "Delete a node and its descendants" },
  run: ({ deps, project, write }, args) => deleteNode(deps.db, write, project, args.node_id).then(() => ({})),
});

const listEntriesOp = projectOperation({
  name: "list_entries",
  title: "List collection entries",
  description:
    "List the entries (child nodes) of a collection node with their fields, in every status unless status is given. " +
    'collection is the collection\'s slug path (e.g. "blog") or its id. q matches title or slug, case-insensitively. ' +
    "sort: -updated_at (default), updated_at, title, -title, created_at, -created_at, position, or field.<name> / -field.<name>. " +
    'filters: [{ field, op, value }], all of which must hold, e.g. { "field": "date", "op": "gte", "value": "2026-01-01" } or { "field": "category", "op": "in", "value": ["news", "tech"] }; ' +
    "op is eq (default), in, or gt/gte/lt/lte for number and date-time fields. Filters and field sorts take top-level fields marked index: true in the content model (get_content_model); " +
    "an error names a filter as field.<name>[op]. per_page 1-100 (default 20).",
  scopes: ["content:read"],
  input: EntryQuery,
  output: EntriesOut,
  tool: READ_ONLY,
  http: {
    method: "GET",
    path: "/admin/p/:ref/entries",
    data: "entries",
    tag: "content",
    summary: "List a collection's entries in every status (search, field filters, sort, paging)",
    description:
      "Field filters as on delivery: field.<name>=v, field.<name>[in]=a,b, field.<name>[gt|gte|lt|lte]=v (numbers and date-times); sort=field.<name> or -field.<name>. " +
      "Only top-level fields with index: true in the project's content model; anything else is 400 invalid_request naming the parameter (invalid_sort for the sort).",
    queryInput: { field: "filters", prefix: "field.", read: (query) => restFieldFilters(query) },
  },
  run: ({ deps, project }, args) => listEntries(deps.db, project, args),
});

/** The REST query's field.<name>[op]=v parameters as the tool's filters (delivery's syntax and errors). */
const restFieldFilters = (query: URLSearchParams) => parseFieldFilters(query).map((f) => ({ field: f.name, op: f.op, value: f.op === "in" ? f.value.split(",") : f.value }));

/** In the order tools/list shows the tools. */
export const contentOperations = [
  listNodesOp,
  getNodeOp,
  createNodeOp,
  updateNodeOp,
  reorderBlocksOp,
  ...transitionOps,
  discardChangesOp,
  listEntriesOp,
  readNodeOp,
  readPublishedOp,
  setBlocksOp,
  deleteNodeOp,
];
