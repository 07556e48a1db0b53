import type { Db } from "../db/client";
import type { Project } from "../db/schema";
import { createNode, transitionNode, updateNode } from "./content/service";
import { createProject } from "./projects/service";
import { updateTheme } from "./theme/service";
import { upsertTranslation } from "./translations/service";

const ROOT = { kind: "admin_key", keyId: "bootstrap", scopes: [], projectIds: null } as const;

/** The `demo` project: two locales, a home page, a blog collection with entries, a theme. */
export async function seedDemo(db: Db, now: Date): Promise<Project> {
  const project = await createProject(db, { slug: "demo", name: "Demo site", default_locale: "en", locales: ["en", "fr"], public_base_url: "https://demo.example.com" }, ROOT, now);
  const published = async (input: Parameters<typeof createNode>[2]) => {
    const node = await createNode(db, project, input, now);
    await transitionNode(db, project, node.id, "publish", now);
    return node;
  };
  const inFrench = (id: string, input: Parameters<typeof upsertTranslation>[4]) => upsertTranslation(db, project, id, "fr", input, now);

  const home = await published({
    slug: "home",
    type: "page",
    title: "Welcome",
    seo: { description: "A headless content service demo." },
    blocks: [
      { type: "hero", data: { heading: "Welcome to the demo", text: "Content served fast, in every language." } },
      { type: "text", data: { text: "This page comes from the delivery API: /api/p/demo/nodes/by-path/home" } },
    ],
  });
  const [hero, text] = home.blocks;
  if (!hero || !text) throw new Error("the demo home page was created with two blocks");
  await inFrench(home.id, {
    meta: { title: "Bienvenue", slug: "accueil", description: "Une démo de service de contenu headless." },
    blocks: {
      [hero.id]: { heading: "Bienvenue dans la démo", text: "Du contenu servi vite, dans toutes les langues." },
      [text.id]: { text: "Cette page vient de l'API de diffusion." },
    },
  });

  const blog = await published({ slug: "blog", type: "collection", title: "Blog", seo: { description: "News and notes." } });
  await inFrench(blog.id, { meta: { title: "Blog", slug: "blog" } });
  const posts = [
    ["hello-world", "Hello, world", "Our first post."],
    ["release-notes", "Release notes", "What changed this month."],
    ["i18n-done-right", "i18n done right", "Localised slugs, hreflang and sitemaps."],
  ] as const;
  for (const [slug, title, text] of posts) {
    await published({ parent_id: blog.id, slug, type: "entry", title, blocks: [{ type: "text", data: { text } }] });
  }
  const draft = await createNode(db, project, { parent_id: blog.id, slug: "coming-soon", type: "entry", title: "Coming soon" }, now);
  await updateNode(db, project, draft.id, { seo: { description: "A draft: not delivered." } }, now);
  await updateTheme(db, project, { accent_color: "#3b82f6", name_override: "Demo", logo_url: "/logo.svg", favicon_url: "/favicon.ico" }, now);
  return project;
}
