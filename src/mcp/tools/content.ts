import { z } from "zod";
import { projectToWire } from "../../projects/service";
import { getTheme, updateTheme } from "../../theme/service";
import { getTranslation, translationToWire, upsertTranslation } from "../../translations/service";
import { ENTRY_SORTS } from "../../content/service";
import { listEntries } from "../service";
import { Locale, NodeId, NodeStatus, Page, PerPage, ProjectOut, Slug, ThemeOut, TranslationOut } from "./schemas";
import { defineTool, IDEMPOTENT_WRITE, READ_ONLY } from "./tool";

export const listEntriesTool = defineTool({
  name: "list_entries",
  title: "List collection entries",
  description:
    "List the entries (child nodes) of a collection node, in every status unless status is given. " +
    "collection is the collection's slug path (e.g. \"blog\") or its id. q matches title or slug, case-insensitively. " +
    "sort: -updated_at (default), updated_at, title, -title, created_at, -created_at, position. per_page 1-100 (default 20).",
  scopes: ["content:read"],
  input: z.object({
    collection: z.string().min(1).max(2048).describe("slug path or id of a node of type collection"),
    q: z.string().max(200).optional(),
    sort: z.enum(ENTRY_SORTS).optional(),
    status: NodeStatus.optional(),
    page: Page,
    per_page: PerPage(20),
  }),
  output: z.object({
    collection: z.object({ id: z.string(), path: z.string(), title: z.string() }),
    entries: z.array(
      z.object({
        id: z.string(),
        slug: z.string(),
        title: z.string(),
        path: z.string(),
        status: NodeStatus,
        position: z.number().int(),
        created_at: z.string(),
        updated_at: z.string(),
      }),
    ),
    total: z.number().int(),
    page: z.number().int(),
    per_page: z.number().int(),
  }),
  annotations: READ_ONLY,
  async run({ db, project }, args) {
    const r = await listEntries(db, project.id, args);
    return { collection: { id: r.collection.id, path: r.collection.path, title: r.collection.title }, entries: r.data, total: r.total, page: r.page, per_page: r.per_page };
  },
});

export const getTranslationTool = defineTool({
  name: "get_translation",
  title: "Read a translation",
  description:
    "Read a node's stored translation into one locale: meta (title, slug, description, og_image…) and blocks (block id → partial data overriding the base block). " +
    "Fails with not_found when the node has no translation into that locale.",
  scopes: ["content:read"],
  input: z.object({ node_id: NodeId, locale: Locale }),
  output: z.object({ translation: TranslationOut }),
  annotations: READ_ONLY,
  async run({ db, project }, args) {
    return { translation: translationToWire(await getTranslation(db, project, args.node_id, args.locale)) };
  },
});

export const upsertTranslationTool = defineTool({
  name: "upsert_translation",
  title: "Write a translation",
  description:
    "Create or replace a node's translation into a locale other than the project's default. meta holds the localised title, slug (a localised path segment), description, og_image, canonical, robots and noindex; " +
    "blocks maps block ids (from get_node) to partial data deep-merged over the base block. " +
    "status: published (default, delivered to readers) or draft (stored for review, not delivered). The whole translation is replaced.",
  scopes: ["content:write"],
  input: z.object({
    node_id: NodeId,
    locale: Locale,
    meta: z
      .looseObject({
        title: z.string().max(500).optional(),
        slug: Slug.optional(),
        description: z.string().max(1000).optional(),
        og_image: z.string().max(2048).optional(),
        canonical: z.string().max(2048).nullable().optional(),
        robots: z.string().max(200).nullable().optional(),
        noindex: z.boolean().optional(),
      })
      .optional(),
    blocks: z.record(z.uuid(), z.record(z.string(), z.unknown())).optional().describe("block id → partial block data"),
    status: z.enum(["draft", "published"]).optional(),
  }),
  output: z.object({ translation: TranslationOut }),
  annotations: IDEMPOTENT_WRITE,
  async run({ db, project, now }, { node_id, locale, ...input }) {
    return { translation: translationToWire(await upsertTranslation(db, project, node_id, locale, input, now)) };
  },
});

export const getThemeTool = defineTool({
  name: "get_theme",
  title: "Read the theme",
  description: "Read the project's brand settings: logo_url, favicon_url, accent_color (#rrggbb) and name_override (null when unset).",
  scopes: ["content:read"],
  input: z.object({}),
  output: z.object({ theme: ThemeOut }),
  annotations: READ_ONLY,
  async run({ db, project }) {
    return { theme: await getTheme(db, project.id) };
  },
});

const AssetUrl = z.string().max(2048).nullable().optional().describe("absolute http(s) URL or a site-relative path; null clears");

export const updateThemeTool = defineTool({
  name: "update_theme",
  title: "Update the theme",
  description: "Change the project's brand settings. Omitted fields are kept; null clears a field. accent_color is #rrggbb.",
  scopes: ["content:write"],
  input: z.object({
    logo_url: AssetUrl,
    favicon_url: AssetUrl,
    accent_color: z.string().regex(/^#[0-9a-fA-F]{6}$/, "#rrggbb").nullable().optional(),
    name_override: z.string().max(200).nullable().optional(),
  }),
  output: z.object({ theme: ThemeOut }),
  annotations: IDEMPOTENT_WRITE,
  async run({ db, project, now }, args) {
    return { theme: await updateTheme(db, project, args, now) };
  },
});

export const getProjectTool = defineTool({
  name: "get_project",
  title: "Read the project settings",
  description:
    "Read the settings of the project this token is bound to: id, slug, name, default_locale, locales (valid values for every locale argument) and public_base_url.",
  scopes: ["content:read"],
  input: z.object({}),
  output: z.object({ project: ProjectOut }),
  annotations: READ_ONLY,
  async run({ project }) {
    return { project: projectToWire(project) };
  },
});
