// Zod schemas shared by the MCP tools: the same limits as the admin REST models (src/*/model.ts).
import { z } from "zod";
import { SLUG_RE } from "../../lib/ids";
import { MAX_PAGE, MAX_PER_PAGE, pagingMessage } from "../../lib/paging";

export const NodeId = z.uuid().describe("node id (UUID)");
export const Slug = z.string().regex(SLUG_RE, "lowercase letters, digits and inner hyphens, 1-64 characters");
export const Locale = z.string().min(2).max(35).describe("BCP 47 locale tag, one of the project's locales (see get_project)");
export const NodeStatus = z.enum(["draft", "published", "archived"]);
const Json = z.record(z.string(), z.unknown());

export const SeoIn = z
  .looseObject({
    description: z.string().max(1000).optional(),
    canonical: z.string().max(2048).nullable().optional(),
    robots: z.string().max(200).nullable().optional(),
    og_image: z.string().max(2048).nullable().optional(),
    noindex: z.boolean().optional(),
  })
  .describe("SEO fields: description, canonical, robots, og_image, noindex (other keys are kept as given)");

export const BlockIn = z.object({
  id: z.uuid().optional().describe("an existing block's id, to keep it (and its translations); omit for a new block"),
  type: z.string().min(1).max(64).describe('block type, e.g. "hero", "text", "image"'),
  data: Json.optional().describe("the block's content object"),
});
export const BlocksIn = z
  .array(BlockIn)
  .max(500)
  .describe("the node's complete ordered block list: blocks left out are deleted, order is the array order");

export const BlockOut = z.object({ id: z.string(), type: z.string(), order: z.number().int(), data: Json });

const nodeShape = {
  id: z.string(),
  project_id: z.string(),
  parent_id: z.string().nullable(),
  slug: z.string(),
  path: z.string(),
  type: z.string(),
  title: z.string(),
  status: NodeStatus,
  position: z.number().int(),
  seo: Json,
  published_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
};
export const NodeOut = z.object(nodeShape);
export const NodeWithBlocksOut = z.object({ ...nodeShape, blocks: z.array(BlockOut) });

export const TranslationOut = z.object({
  id: z.string(),
  node_id: z.string(),
  locale: z.string(),
  meta: Json,
  blocks: z.record(z.string(), Json),
  status: z.enum(["draft", "published"]),
  created_at: z.string(),
  updated_at: z.string(),
});

export const ThemeOut = z.object({
  logo_url: z.string().nullable(),
  favicon_url: z.string().nullable(),
  accent_color: z.string().nullable(),
  name_override: z.string().nullable(),
});

export const ProjectOut = z.object({
  id: z.string(),
  slug: z.string(),
  name: z.string(),
  default_locale: z.string(),
  locales: z.array(z.string()),
  public_base_url: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

// The one paging bound (src/lib/paging.ts), with its message naming the limit.
export const Page = z.number().int(pagingMessage("page")).min(1, pagingMessage("page")).max(MAX_PAGE, pagingMessage("page")).optional().describe(`page number, from 1 to ${MAX_PAGE} (default 1)`);
export const PerPage = (byDefault: number) =>
  z.number().int(pagingMessage("per_page")).min(1, pagingMessage("per_page")).max(MAX_PER_PAGE, pagingMessage("per_page")).optional().describe(`1-${MAX_PER_PAGE}, default ${byDefault}`);
