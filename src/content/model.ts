import { z } from "zod";
import { Id, Json, NodeId, Page, PerPage, Slug, Timestamp } from "../lib/schemas";
import { FIELD_OPS, FIELD_SORT } from "../model/field-filters";

/** The orders a collection's entries can be listed in (delivery and MCP); the id breaks ties. */
export const ENTRY_SORTS = ["updated_at", "-updated_at", "title", "-title", "created_at", "-created_at", "position"] as const;
export type EntrySort = (typeof ENTRY_SORTS)[number];

const NodeStatus = z.enum(["draft", "published", "archived"]);
/** draft: never published (or unpublished); published: what delivery serves is the working copy; changed: published, with unpublished changes in the working copy; archived. */
const ContentState = z.enum(["draft", "published", "changed", "archived"]);
export const SeoIn = z
  .looseObject({
    description: z.string().max(1000).optional(),
    canonical: z.string().max(2048).nullable().optional(),
    robots: z.string().max(200).nullable().optional(),
    og_image: z
      .string()
      .max(2048)
      .nullable()
      .optional()
      .describe("the share image (og:image): an image URL, or the id of one of the project's media items (list_media), whose size, type and alt text delivery then gives too"),
    noindex: z.boolean().optional(),
  })
  .describe("SEO fields: description, canonical, robots, og_image, noindex (other keys are kept as given)");
export const BlockIn = z.object({
  id: z.uuid().optional().describe("an existing block's id, to keep it (and its translations); omit for a new block"),
  type: z.string().min(1).max(64).describe('block type, e.g. "hero", "text", "image"'),
  data: Json.optional().describe("the block's content object"),
});
export const BlocksIn = z.array(BlockIn).max(500).describe("the node's complete ordered block list: blocks left out are deleted, order is the array order");
export const BlockOut = z.object({ id: Id, type: z.string(), order: z.number().int(), data: Json });
/** A node's typed values (author, date, category…), checked against its node type's `fields` schema when the content model declares one. */
export const FieldsIn = Json.describe("the node's fields: an object of values, checked against the content model's schema for its type; on update the whole object replaces the old one");
export const NodeOut = z.object({
  id: Id,
  project_id: Id,
  parent_id: Id.nullable(),
  slug: z.string(),
  path: z.string(),
  type: z.string(),
  title: z.string(),
  status: NodeStatus.describe("draft, published (it has a published version, which delivery serves) or archived"),
  state: ContentState.describe("published with unpublished changes in the working copy is changed: publish_node makes them live, discard_changes drops them"),
  position: z.number().int(),
  seo: Json,
  fields: Json,
  revision: z.number().int().describe("the node's current revision: send it back as expected_revision (REST: If-Match) so that a write never overwrites a change made since"),
  published_at: Timestamp.nullable(),
  publish_at: Timestamp.nullable().describe("scheduled publication (UTC); null when none"),
  unpublish_at: Timestamp.nullable().describe("scheduled unpublication (UTC); null when none"),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export const NodeWithBlocksOut = NodeOut.extend({ blocks: z.array(BlockOut) });
export const LocalizedNodeOut = NodeWithBlocksOut.extend({
  locale: z.string(),
  translated: z.boolean(),
  translation_status: z.enum(["draft", "published"]).nullable(),
  translation_state: ContentState.nullable(),
});
/** A node's published version as its revision snapshot records it (src/write/record.ts). */
export const PublishedVersionOut = z.object({
  id: Id,
  parent_id: Id.nullable(),
  slug: z.string(),
  path: z.string(),
  type: z.string(),
  title: z.string(),
  position: z.number().int(),
  seo: Json,
  fields: Json,
  published_at: z.string().nullable(),
  blocks: z.array(z.object({ id: Id, type: z.string(), data: Json })),
  translations: z.array(z.object({ locale: z.string(), meta: Json, fields: Json, blocks: Json })),
});
export const EntryOut = NodeOut.pick({ id: true, slug: true, title: true, path: true, status: true, position: true, fields: true, created_at: true, updated_at: true });
export const Position = z.number().int().min(0).max(1_000_000);
export const PageInfo = { total: z.number().int(), page: z.number().int(), per_page: z.number().int() };
export const NodeQuery = z.object({
  type: z.string().max(64).optional().describe('node type, e.g. "page", "collection", "entry"'),
  status: NodeStatus.optional(),
  state: ContentState.optional().describe("changed: published pages with unpublished changes"),
  parent_id: NodeId.or(z.literal("root")).optional().describe('children of this node id, or "root" for top-level nodes'),
  path_prefix: z.string().max(2048).optional().describe('slug path, e.g. "blog" or "docs/guides"'),
  q: z.string().max(200).optional().describe("nodes whose title contains this text, in any case"),
  agent_changes: z.boolean().optional().describe("true: only nodes an agent (MCP token, OAuth client) changed after the last change a person made"),
  sort: z.enum(["path", "position"]).optional().describe("path (default), or position: siblings in their order (a content tree)"),
  page: Page,
  per_page: PerPage(50),
});
export const NewNodeIn = z.object({
  slug: Slug,
  title: z.string().min(1).max(500),
  type: z.string().min(1).max(64).optional().describe('default "page"; "collection" nodes hold entries'),
  parent_id: NodeId.nullable().optional().describe("parent node id; omit or null for a top-level node"),
  position: Position.optional().describe("order among siblings; default after the last"),
  seo: SeoIn.optional(),
  fields: FieldsIn.optional(),
  blocks: BlocksIn.optional(),
});
const FilterValue = z.union([z.string().max(200), z.number(), z.boolean()]);
/** A filter on an indexed field (src/model/field-filters.ts); REST writes it as field.<name>[op]=value. */
const FieldFilterIn = z.object({
  field: z.string().min(1).max(64).describe('a top-level field marked index: true in the content model, e.g. "date"'),
  op: z.enum(FIELD_OPS).optional().describe("eq (default), in (value is an array), or gt/gte/lt/lte for number and date-time fields"),
  value: FilterValue.or(z.array(FilterValue).min(1).max(50)).describe("dates as RFC 3339 with an offset, or YYYY-MM-DD (00:00 UTC)"),
});
export const EntryQuery = z.object({
  collection: z.string().min(1).max(2048).describe("slug path or id of a node of type collection"),
  q: z.string().max(200).optional(),
  sort: z
    .enum(ENTRY_SORTS)
    .or(z.string().regex(FIELD_SORT, "field.<name> or -field.<name>"))
    .optional()
    .describe(`${ENTRY_SORTS.join(", ")}, or field.<name> / -field.<name> for an indexed field of the content model`),
  filters: z.array(FieldFilterIn).max(10).optional().describe("field filters, all of which must hold; only top-level fields with index: true in the project's content model (get_content_model)"),
  status: NodeStatus.optional(),
  page: Page,
  per_page: PerPage(20),
});
export const EntriesOut = z.object({
  collection: z.object({ id: Id, path: z.string(), title: z.string() }),
  entries: z.array(EntryOut),
  ...PageInfo,
});
