import type { Db } from "../db/client";
import type { Project } from "../db/schema";
import { createNode, transitionNode } from "./content/service";
import type { ContentModelDefinition } from "./model/model";
import { writeModel } from "./model/service";
import { createProject } from "./projects/service";
import { updateTheme } from "./theme/service";
import { upsertTranslation } from "./translations/service";
import { systemWrite } from "./write/context";

const ROOT = { kind: "admin_key", keyId: "bootstrap", scopes: [], projectIds: null } as const;

const prose = (description: string) => ({ type: "string", format: "markdown", translatable: true, description });
const label = (description: string) => ({ type: "string", minLength: 1, maxLength: 200, translatable: true, description });
const object = (properties: Record<string, unknown>, required: string[]) => ({ type: "object", properties, required, additionalProperties: false });
const ANY_SECTION = [{ type: "hero", max: 1 }, { type: "text" }, { type: "image" }, { type: "call_to_action" }];

/** The demo's content model: a first start shows one, and every demo node meets it. */
const DEMO_MODEL: ContentModelDefinition = {
  strict: false,
  block_types: [
    {
      name: "hero",
      description: "The big opening of a page: a heading and a line under it.",
      schema: object({ heading: label("the page's main heading"), text: prose("one or two sentences under the heading") }, ["heading"]),
    },
    { name: "text", description: "A run of prose (Markdown).", schema: object({ text: prose("the text, in Markdown") }, ["text"]) },
    {
      name: "image",
      description: "One picture with its alternative text.",
      schema: object(
        { src: { type: "string", format: "uri", description: "the image's URL" }, alt: label("what the image shows, for readers who cannot see it"), caption: prose("shown under the image") },
        ["src", "alt"],
      ),
    },
    {
      name: "call_to_action",
      description: "A button that sends the reader somewhere.",
      schema: object({ label: label("the button's text"), url: { type: "string", format: "uri", description: "where it leads" }, style: { enum: ["primary", "secondary"] } }, ["label", "url"]),
    },
  ],
  node_types: [
    { name: "page", description: "A page of the site, made of sections.", fields: { type: "object", additionalProperties: false }, blocks: ANY_SECTION, children: null },
    {
      name: "collection",
      description: "A list of posts (the blog); an intro may come first.",
      fields: { type: "object", additionalProperties: false },
      blocks: [{ type: "text", max: 1 }],
      children: ["post"],
    },
    {
      name: "post",
      description: "A blog post: who wrote it, when, about what.",
      fields: object(
        {
          author: { type: "string", minLength: 1, maxLength: 200, description: "the writer's name" },
          date: { type: "string", format: "date-time", index: true, description: "when it was (or will be) published" },
          category: { enum: ["news", "release", "guide"], index: true, description: "the post's section of the blog" },
          tags: { type: "array", items: { type: "string", minLength: 1, maxLength: 50 }, maxItems: 20, uniqueItems: true },
        },
        ["author", "date", "category"],
      ),
      blocks: [{ type: "text" }, { type: "image" }, { type: "call_to_action" }],
      children: [],
    },
  ],
};

/** The `demo` project: two locales, a home page, a blog collection with posts, a theme, a content model they all meet. */
export async function seedDemo(db: Db, now: Date): Promise<Project> {
  const ctx = systemWrite();
  const project = await createProject(db, { slug: "demo", name: "Demo site", default_locale: "en", locales: ["en", "fr"], public_base_url: "https://demo.example.com" }, ROOT, now);
  const published = async (input: Parameters<typeof createNode>[3]) => {
    const node = await createNode(db, ctx, project, input, now);
    await transitionNode(db, ctx, project, node.id, "publish", now);
    return node;
  };
  const inFrench = (id: string, input: Parameters<typeof upsertTranslation>[5]) => upsertTranslation(db, ctx, project, id, "fr", { status: "published", ...input }, now, true);

  const home = await published({
    slug: "home",
    type: "page",
    title: "Welcome",
    seo: { description: "A headless content service demo." },
    blocks: [
      { type: "hero", data: { heading: "Welcome to the demo", text: "Content served fast, in every language." } },
      { type: "text", data: { text: "This page comes from the delivery API: /api/p/demo/nodes/by-path/home" } },
      { type: "call_to_action", data: { label: "Read the blog", url: "https://demo.example.com/blog", style: "primary" } },
    ],
  });
  const [hero, text, cta] = home.blocks;
  if (!hero || !text || !cta) throw new Error("the demo home page was created with three blocks");
  await inFrench(home.id, {
    meta: { title: "Bienvenue", slug: "accueil", description: "Une démo de service de contenu headless." },
    blocks: {
      [hero.id]: { heading: "Bienvenue dans la démo", text: "Du contenu servi vite, dans toutes les langues." },
      [text.id]: { text: "Cette page vient de l'API de diffusion." },
      [cta.id]: { label: "Lire le blog" },
    },
  });

  const blog = await published({ slug: "blog", type: "collection", title: "Blog", seo: { description: "News and notes." } });
  await inFrench(blog.id, { meta: { title: "Blog", slug: "blog" } });
  const posts = [
    ["hello-world", "Hello, world", "Our first post.", { author: "Ada", date: "2026-01-05T09:00:00Z", category: "news", tags: ["welcome"] }],
    ["release-notes", "Release notes", "What changed this month.", { author: "Grace", date: "2026-02-02T09:00:00Z", category: "release", tags: ["changelog"] }],
    ["i18n-done-right", "i18n done right", "Localised slugs, hreflang and sitemaps.", { author: "Ada", date: "2026-03-10T09:00:00Z", category: "guide", tags: ["i18n", "seo"] }],
  ] as const;
  for (const [slug, title, text, fields] of posts) {
    await published({ parent_id: blog.id, slug, type: "post", title, fields, blocks: [{ type: "text", data: { text } }] });
  }
  const fields = { author: "Grace", date: "2026-12-01T09:00:00Z", category: "news", tags: [] };
  await createNode(db, ctx, project, { parent_id: blog.id, slug: "coming-soon", type: "post", title: "Coming soon", fields, seo: { description: "A draft: not delivered." } }, now);
  await updateTheme(db, ctx, project, { accent_color: "#3b82f6", name_override: "Demo", logo_url: "/logo.svg", favicon_url: "/favicon.ico" }, now);
  // Last and unforced: should any demo node not meet the model, the seed fails (409) rather than ship it.
  await writeModel(db, ctx, project.id, () => DEMO_MODEL, { indexes: false }); // seeded inside the first start's transaction
  return project;
}
