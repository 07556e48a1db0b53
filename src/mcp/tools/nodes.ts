import { z } from "zod";
import { createNode, listNodes, nodeToWire, type Transition, transitionNode, updateNode } from "../../content/service";
import { AppError } from "../../errors";
import { findNode, getLocalizedNode, reorderBlocks } from "../service";
import { BlockOut, BlocksIn, Locale, NodeId, NodeOut, NodeStatus, NodeWithBlocksOut, Page, PerPage, SeoIn, Slug } from "./schemas";
import { defineTool, IDEMPOTENT_WRITE, READ_ONLY, type ToolDef, WRITE } from "./tool";

export const listNodesTool = defineTool({
  name: "list_nodes",
  title: "List nodes",
  description:
    "List the project's content nodes (pages, collections, entries) in every status, ordered by path. " +
    "Filters combine: type, status, parent_id (a node id, or \"root\" for top-level nodes) and path_prefix (a slug path such as \"blog\": the node at that path and everything below it). " +
    "Returns node rows without blocks; use get_node for blocks. Paginated: page (from 1) and per_page (1-100, default 50), with the total count.",
  scopes: ["content:read"],
  input: z.object({
    type: z.string().max(64).optional().describe('node type, e.g. "page", "collection", "entry"'),
    status: NodeStatus.optional(),
    parent_id: z.union([NodeId, z.literal("root")]).optional().describe('children of this node id, or "root" for top-level nodes'),
    path_prefix: z.string().max(2048).optional().describe('slug path, e.g. "blog" or "docs/guides"'),
    page: Page,
    per_page: PerPage(50),
  }),
  output: z.object({ nodes: z.array(NodeOut), total: z.number().int(), page: z.number().int(), per_page: z.number().int() }),
  annotations: READ_ONLY,
  async run({ db, project }, args) {
    const r = await listNodes(db, project.id, { ...args, per_page: args.per_page ?? 50 });
    return { nodes: r.data.map(nodeToWire), total: r.total, page: r.page, per_page: r.per_page };
  },
});

export const getNodeTool = defineTool({
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
  output: z.object({
    node: NodeWithBlocksOut.extend({ locale: z.string(), translated: z.boolean(), translation_status: z.enum(["draft", "published"]).nullable() }),
  }),
  annotations: READ_ONLY,
  async run({ db, project }, args) {
    const node = await findNode(db, project.id, args);
    return { node: await getLocalizedNode(db, project, node.id, args.locale) };
  },
});

export const createNodeTool = defineTool({
  name: "create_node",
  title: "Create a node",
  description:
    "Create a content node as a draft (publish it with publish_node). Its path is the parent's path plus slug; the slug must be unique among its siblings. " +
    "For a collection entry, set parent_id to the collection's id and type \"entry\". Blocks are an ordered array of { type, data }.",
  scopes: ["content:write"],
  input: z.object({
    slug: Slug,
    title: z.string().min(1).max(500),
    type: z.string().min(1).max(64).optional().describe('default "page"; "collection" nodes hold entries'),
    parent_id: NodeId.nullable().optional().describe("parent node id; omit or null for a top-level node"),
    position: z.number().int().min(0).max(1_000_000).optional().describe("order among siblings; default after the last"),
    seo: SeoIn.optional(),
    blocks: BlocksIn.optional(),
  }),
  output: z.object({ node: NodeWithBlocksOut }),
  annotations: WRITE,
  async run({ db, project, now }, args) {
    return { node: await createNode(db, project, args, now) };
  },
});

export const updateNodeTool = defineTool({
  name: "update_node",
  title: "Update a node",
  description:
    "Change a node's title, slug, parent (moving it), type, position, SEO fields or blocks; omitted fields are kept. " +
    "A new slug or parent rewrites the paths of everything below it. seo replaces the whole SEO object. " +
    "blocks replaces the whole ordered block list: pass existing blocks with their id to keep them (and their translations); blocks left out are deleted. To only reorder, use reorder_blocks.",
  scopes: ["content:write"],
  input: z.object({
    node_id: NodeId,
    title: z.string().min(1).max(500).optional(),
    slug: Slug.optional(),
    parent_id: NodeId.nullable().optional().describe("new parent id; null moves the node to the top level"),
    type: z.string().min(1).max(64).optional(),
    position: z.number().int().min(0).max(1_000_000).optional(),
    seo: SeoIn.optional(),
    blocks: BlocksIn.optional(),
  }),
  output: z.object({ node: NodeWithBlocksOut }),
  annotations: IDEMPOTENT_WRITE,
  async run({ db, project, now }, { node_id, ...changes }) {
    if (Object.values(changes).every((v) => v === undefined)) {
      throw new AppError("missing_parameter", "nothing to update: give at least one of title, slug, parent_id, type, position, seo, blocks");
    }
    return { node: await updateNode(db, project, node_id, changes, now) };
  },
});

export const reorderBlocksTool = defineTool({
  name: "reorder_blocks",
  title: "Reorder a node's blocks",
  description: "Put a node's blocks in a new order without changing their content. block_ids must list every block id of the node exactly once, in the wanted order (see get_node).",
  scopes: ["content:write"],
  input: z.object({ node_id: NodeId, block_ids: z.array(z.uuid()).max(500) }),
  output: z.object({ node_id: z.string(), blocks: z.array(BlockOut) }),
  annotations: IDEMPOTENT_WRITE,
  async run({ db, project, now }, args) {
    return { node_id: args.node_id, blocks: await reorderBlocks(db, project, args.node_id, args.block_ids, now) };
  },
});

const TRANSITIONS: ReadonlyArray<[Transition, string, string]> = [
  ["publish", "Publish a node", "Publish a node (draft → published) so the public delivery API serves it. Publishing an already published node keeps its published_at."],
  ["unpublish", "Unpublish a node", "Take a node off the public delivery API (published → draft). Its content is kept."],
  ["archive", "Archive a node", "Archive a node (any status → archived): hidden from delivery and kept for reference. restore_node brings it back as a draft."],
  ["restore", "Restore an archived node", "Bring an archived node back as a draft (archived → draft)."],
];

export const transitionTools: ToolDef[] = TRANSITIONS.map(([action, title, description]) =>
  defineTool({
    name: `${action}_node`,
    title,
    description,
    scopes: ["content:write"],
    input: z.object({ node_id: NodeId }),
    output: z.object({ node: NodeOut }),
    annotations: IDEMPOTENT_WRITE,
    async run({ db, project, now }, args) {
      return { node: await transitionNode(db, project, args.node_id, action, now) };
    },
  }) as unknown as ToolDef,
);
