import { t } from "elysia";
import { Slug, Timestamp, Uuid } from "../lib/model";
import { MAX_PAGE, MAX_PER_PAGE } from "../lib/paging";

const Seo = t.Object(
  {
    description: t.Optional(t.String({ maxLength: 1000 })),
    canonical: t.Optional(t.Nullable(t.String({ maxLength: 2048 }))),
    robots: t.Optional(t.Nullable(t.String({ maxLength: 200 }))),
    og_image: t.Optional(t.Nullable(t.String({ maxLength: 2048 }))),
    noindex: t.Optional(t.Boolean()),
  },
  { additionalProperties: true, description: "SEO fields: description, canonical?, robots?, og_image?, noindex?" },
);

const BlockIn = t.Object({
  id: t.Optional(t.String({ format: "uuid", description: "keep an existing block (and its translations) by passing its id" })),
  type: t.String({ minLength: 1, maxLength: 64 }),
  data: t.Optional(t.Record(t.String(), t.Unknown())),
});

const Block = t.Object({ id: Uuid, type: t.String(), order: t.Integer(), data: t.Record(t.String(), t.Unknown()) });

const NodeStatus = t.Union([t.Literal("draft"), t.Literal("published"), t.Literal("archived")]);

const node = t.Object({
  id: Uuid,
  project_id: Uuid,
  parent_id: t.Nullable(Uuid),
  slug: t.String(),
  path: t.String(),
  type: t.String(),
  title: t.String(),
  status: NodeStatus,
  position: t.Integer(),
  seo: t.Record(t.String(), t.Unknown()),
  published_at: t.Nullable(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const ContentModel = {
  seo: Seo,
  node,
  nodeWithBlocks: t.Composite([node, t.Object({ blocks: t.Array(Block) })]),
  block: Block,
  blocksIn: t.Array(BlockIn, { maxItems: 500 }),
  status: NodeStatus,
  create: t.Object({
    parent_id: t.Optional(t.Nullable(t.String({ format: "uuid" }))),
    slug: Slug,
    type: t.Optional(t.String({ minLength: 1, maxLength: 64, default: "page" })),
    title: t.String({ minLength: 1, maxLength: 500 }),
    position: t.Optional(t.Integer({ minimum: 0, maximum: 1_000_000 })),
    seo: t.Optional(Seo),
    blocks: t.Optional(t.Array(BlockIn, { maxItems: 500 })),
  }),
  update: t.Object({
    parent_id: t.Optional(t.Nullable(t.String({ format: "uuid" }))),
    slug: t.Optional(Slug),
    type: t.Optional(t.String({ minLength: 1, maxLength: 64 })),
    title: t.Optional(t.String({ minLength: 1, maxLength: 500 })),
    position: t.Optional(t.Integer({ minimum: 0, maximum: 1_000_000 })),
    seo: t.Optional(Seo),
    blocks: t.Optional(t.Array(BlockIn, { maxItems: 500 })),
  }),
  listQuery: t.Object({
    type: t.Optional(t.String({ maxLength: 64 })),
    status: t.Optional(NodeStatus),
    parent_id: t.Optional(t.String({ description: "a node id, or `root` for top-level nodes", maxLength: 36 })),
    path_prefix: t.Optional(t.String({ maxLength: 2048 })),
    // Read as text and bounded by readPaging, so every list answers the same 400 naming the limit.
    page: t.Optional(t.String({ description: `page number, an integer from 1 to ${MAX_PAGE} (default 1)`, examples: ["1"] })),
    per_page: t.Optional(t.String({ description: `an integer from 1 to ${MAX_PER_PAGE} (default 50)`, examples: ["50"] })),
  }),
};
