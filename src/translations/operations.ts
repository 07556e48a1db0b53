import { z } from "zod";
import { ProviderId } from "../ai/model";
import { IDEMPOTENT_WRITE, projectOperation, READ_ONLY } from "../core/operation";
import { notFound } from "../errors";
import { Empty, Id, Json, Locale, NodeId, Page, PerPage, Slug } from "../lib/schemas";
import { translateNode } from "./machine";
import { TranslationOut, TranslationStatus } from "./model";
import { deleteTranslation, getTranslation, listTranslations, translationToWire, upsertTranslation, withFieldStatus } from "./service";
import { listStale } from "./status";

const NodeLocale = { node_id: NodeId, locale: Locale };
const route = (method: "GET" | "PUT" | "DELETE" | "POST", tail: string) => ({ method, path: `/admin/p/:ref/nodes/:id/translations${tail}`, params: { id: "node_id" }, tag: "translations" }) as const;

const listTranslationsOp = projectOperation({
  name: "list_translations",
  title: "List a node's translations",
  description: "List a node's translations into every locale, drafts included.",
  scopes: ["content:read"],
  input: z.object({ node_id: NodeId }),
  output: z.object({ translations: z.array(TranslationOut) }),
  http: { ...route("GET", ""), data: "translations", summary: "List a node's translations" },
  run: async ({ deps, project }, args) => ({ translations: await withFieldStatus(deps.db, project.id, await listTranslations(deps.db, project, args.node_id)) }),
});

const getTranslationOp = projectOperation({
  name: "get_translation",
  title: "Read a translation",
  description:
    "Read a node's stored translation into one locale: meta (title, slug, description, og_image…) and blocks (block id → partial data overriding the base block). " +
    "Fails with not_found when the node has no translation into that locale.",
  scopes: ["content:read"],
  input: z.object(NodeLocale),
  output: z.object({ translation: TranslationOut }),
  tool: READ_ONLY,
  http: { ...route("GET", "/:locale"), data: "translation", summary: "Read a node's translation into one locale" },
  run: async ({ deps, project }, args) => {
    const [translation] = await withFieldStatus(deps.db, project.id, [await getTranslation(deps.db, project, args.node_id, args.locale)]);
    if (!translation) throw notFound("translation");
    return { translation };
  },
});

const upsertTranslationOp = projectOperation({
  name: "upsert_translation",
  title: "Write a translation",
  description:
    "Create or replace a node's translation into a locale other than the project's default. meta holds the localised title, slug (a localised path segment), description, og_image, canonical, robots and noindex; " +
    "blocks maps block ids (from get_node) to partial data deep-merged over the base block. " +
    "This writes the translation's working copy: status published also publishes it (delivered with its node), for a caller holding content:publish; without it, or with status draft or none, " +
    "the write is a draft and nothing a reader sees changes (a published translation's state becomes changed until publish_node with locale). The whole translation is replaced. " +
    "Where the project has a content model (get_content_model, or the resource cms://{project slug}/model), a translation may override only the properties it marks translatable; " +
    "an invalid write answers invalid_content listing each violation with a JSON Pointer into your input.",
  nodeWrite: true,
  scopes: ["content:write"],
  input: z.object({
    ...NodeLocale,
    meta: z
      .object({
        title: z.string().max(500).optional(),
        slug: Slug.optional(),
        description: z.string().max(1000).optional(),
        og_image: z.string().max(2048).optional().describe("the share image in this locale: an image URL, or the id of one of the project's media items (list_media)"),
        canonical: z.string().max(2048).nullable().optional().describe("overrides the canonical URL in this locale"),
        robots: z.string().max(200).nullable().optional(),
        noindex: z.boolean().optional().describe("robots noindex in this locale; also leaves it out of the sitemap"),
      })
      .optional()
      .describe("localised title, slug and SEO fields (other fields are ignored)"),
    fields: Json.optional().describe("overrides of the node's translatable fields (the content model's translatable: true), deep-merged over the node's fields on read"),
    blocks: z.record(z.uuid(), Json).optional().describe("block id → partial block data, deep-merged over the block on read"),
    status: TranslationStatus.optional().describe("published: publish it too (needs content:publish; otherwise the write stays a draft); default: write the working copy only"),
  }),
  output: z.object({ translation: TranslationOut }),
  tool: IDEMPOTENT_WRITE,
  http: { ...route("PUT", "/:locale"), data: "translation", summary: "Create or replace a node's translation (meta and per-block overrides)" },
  run: async ({ deps, project, now, write, caller }, { node_id, locale, ...input }) => {
    const written = await upsertTranslation(deps.db, write, project, node_id, locale, input, now, caller.scopes.includes("content:publish"));
    // A dry run answers what would be written, without reading the state back.
    if (write.dryRun) return { translation: translationToWire(written) };
    const [translation] = await withFieldStatus(deps.db, project.id, [written]);
    return { translation: translation ?? translationToWire(written) };
  },
});

const deleteTranslationOp = projectOperation({
  name: "delete_translation",
  title: "Delete a translation",
  description: "Delete a node's translation into one locale. A published one goes off delivery too, which needs content:publish.",
  nodeWrite: true,
  scopes: ["content:write"],
  input: z.object(NodeLocale),
  output: Empty,
  http: { ...route("DELETE", "/:locale"), status: 204, summary: "Delete a node's translation" },
  run: ({ deps, project, write, caller }, args) => deleteTranslation(deps.db, write, project, args.node_id, args.locale, caller.scopes.includes("content:publish")).then(() => ({})),
});

const translateNodeOp = projectOperation({
  name: "translate_node",
  title: "Machine-translate a node",
  description:
    "Translate a node's title, SEO description and the text of its blocks into one of the project's other locales with the project's AI provider, " +
    "through the pipeline that keeps markup, URLs, placeholders and do-not-translate terms, follows the glossary and checks each answer (one that fails twice is stored as needs_review), " +
    "reusing the translation memory; fields a person wrote, approved or published are kept unless force, and fields already translated from the same source are not sent again. " +
    "It stores the result as the translation's working copy, a draft (nothing a reader sees changes; a published translation's state becomes changed): " +
    'review it with get_translation or get_node with locale, then publish it with publish_node and locale (or upsert_translation with status "published"). ' +
    "Existing translated fields that were not re-translated (a localised slug, say) are kept. Reports every field translated.",
  nodeWrite: true,
  scopes: ["content:write", "ai:read"],
  input: z.object({
    ...NodeLocale,
    provider_id: ProviderId,
    force: z.boolean().optional().describe("re-translate fields a person wrote, approved or published too (never without it)"),
  }),
  output: z.object({
    translation: TranslationOut,
    translated_fields: z.array(
      z.object({
        field: z.string(),
        pointer: z.string(),
        chars: z.number().int(),
        status: z.enum(["machine", "needs_review", "approved"]).describe("needs_review: the answer failed its checks twice (failures say why)"),
        from_memory: z.boolean().describe("reused from the translation memory: no vendor call"),
        failures: z.array(z.string()),
      }),
    ),
    skipped: z.array(z.object({ field: z.string(), pointer: z.string(), reason: z.string() })).describe("fields kept as they are, and why"),
    provider: z.string().nullable(),
    model: z.string().nullable(),
  }),
  tool: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  http: {
    ...route("POST", "/:locale/translate"),
    summary: "Machine-translate a node into a locale, stored as a draft translation",
    description: "Needs content:write and ai:read. Upstream faults answer as POST /admin/p/{ref}/ai/translate does.",
    errors: [409, 429, 500, 502, 504],
  },
  run: ({ deps, project, now, progress, write }, args) => translateNode(deps, write, project, args, now, progress),
});

const listStaleOp = projectOperation({
  name: "list_stale_translations",
  title: "List stale translations",
  description:
    "The translated fields whose source changed since they were translated, per node and locale (pointers into the node: /title, /fields/…, /blocks/{blockId}/data/…), by the node's path: what a team has to translate again. " +
    "Filter with locale. Machine-translate a node again with translate_node, or write the fields with upsert_translation.",
  scopes: ["content:read"],
  input: z.object({ locale: Locale.optional().describe("only this locale"), page: Page, per_page: PerPage(50) }),
  output: z.object({
    stale: z.array(z.object({ node_id: Id, locale: z.string(), path: z.string(), pointers: z.array(z.string()) })),
    total: z.number().int(),
    page: z.number().int(),
    per_page: z.number().int(),
  }),
  tool: READ_ONLY,
  http: { method: "GET", path: "/admin/p/:ref/translations/stale", data: "stale", tag: "translations", summary: "List translated fields whose source changed since" },
  run: ({ deps, project }, args) => listStale(deps.db, project, args),
});

/** In the order tools/list shows the tools. */
export const translationOperations = [getTranslationOp, upsertTranslationOp, translateNodeOp, listStaleOp, listTranslationsOp, deleteTranslationOp];
