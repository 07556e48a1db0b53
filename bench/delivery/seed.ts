// Bench data, inserted directly with drizzle (the admin API would take minutes for this much).
import { eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { blocks, nodes, projects, translations } from "../../db/schema";
import { mirrorPublishedVersions } from "../../src/content/publish";
import { uuidv7 } from "../../src/lib/ids";

type NodeRow = typeof nodes.$inferInsert;
type BlockRow = typeof blocks.$inferInsert;
type TranslationRow = typeof translations.$inferInsert;

const LOREM = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation.";

async function insertAll<T>(db: Db, table: typeof nodes | typeof blocks | typeof translations, rows: T[], batch = 1000): Promise<void> {
  for (let i = 0; i < rows.length; i += batch) await db.insert(table).values(rows.slice(i, i + batch) as never);
}

async function createProject(db: Db, slug: string, locales: string[]): Promise<string> {
  await db.delete(projects).where(eq(projects.slug, slug));
  const id = uuidv7();
  const now = new Date();
  await db.insert(projects).values({ id, slug, name: `Bench ${slug}`, defaultLocale: locales[0]!, locales, publicBaseUrl: "https://bench.example", createdAt: now, updatedAt: now });
  return id;
}

function node(projectId: string, slug: string, path: string, parentId: string | null, type: string, position: number, at: Date): NodeRow {
  return { id: uuidv7(), projectId, parentId, slug, path, type, title: `${slug} title`, status: "published", position, seo: {}, publishedAt: at, createdAt: at, updatedAt: at };
}

/**
 * The data set: 1,000 pages of 20 blocks (10 sections of 1 + 99 pages) with a French
 * translation each (localised slug, half the blocks overridden), and a 10,000-entry collection.
 * `chainLocale` (e.g. fr-CA, which falls back to fr by RFC 4647 lookup): a third locale, each page
 * translated partly into it (its title and two blocks, no slug).
 */
export async function seedSite(db: Db, slug: string, chainLocale?: string): Promise<{ projectId: string; pagePaths: string[]; frPaths: string[] }> {
  const projectId = await createProject(db, slug, chainLocale ? ["en", "fr", chainLocale] : ["en", "fr"]);
  const base = Date.UTC(2025, 0, 1);
  const nodeRows: NodeRow[] = [];
  const blockRows: BlockRow[] = [];
  const trRows: TranslationRow[] = [];
  const pagePaths: string[] = [];
  const frPaths: string[] = [];
  let t = 0;
  const at = (): Date => new Date(base + 1000 * t++);
  for (let s = 0; s < 10; s++) {
    const section = node(projectId, `section-${s}`, `section-${s}`, null, "page", s, at());
    const pages = [section];
    for (let i = 0; i < 99; i++) pages.push(node(projectId, `page-${i}`, `section-${s}/page-${i}`, section.id, "page", i, at()));
    for (const page of pages) {
      nodeRows.push(page);
      pagePaths.push(page.path);
      const overrides: Record<string, Record<string, unknown>> = {};
      for (let b = 0; b < 20; b++) {
        const id = uuidv7();
        const type = b === 0 ? "heading" : b % 5 === 0 ? "image" : "text";
        const data = type === "image" ? { url: `/media/${page.slug}-${b}.jpg`, alt: `Picture ${b}` } : { text: `${LOREM} (${page.slug} #${b})`, level: b === 0 ? 1 : undefined };
        blockRows.push({ id, nodeId: page.id!, type, order: b, data });
        if (b % 2 === 0) overrides[id] = { text: `Texte traduit ${b} pour ${page.slug}` };
      }
      trRows.push({
        id: uuidv7(),
        projectId,
        nodeId: page.id!,
        locale: "fr",
        meta: { title: `${page.slug} titre`, slug: `${page.slug}-fr`, description: "Description française" },
        blocks: overrides,
        status: "published",
        createdAt: page.createdAt,
        updatedAt: page.updatedAt,
      });
      if (chainLocale) {
        const [first, second] = Object.keys(overrides);
        trRows.push({
          id: uuidv7(),
          projectId,
          nodeId: page.id!,
          locale: chainLocale,
          meta: { title: `${page.slug} titre (${chainLocale})` },
          blocks: { [first!]: { text: `Texte ${chainLocale} pour ${page.slug}` }, [second!]: { text: `Autre texte ${chainLocale}` } },
          status: "published",
          createdAt: page.createdAt,
          updatedAt: page.updatedAt,
        });
      }
    }
    for (const page of pages) {
      const frSlug = (p: NodeRow): string => `${p.slug}-fr`;
      frPaths.push(page.parentId ? `${frSlug(section)}/${frSlug(page)}` : frSlug(page));
    }
  }
  const blog = node(projectId, "blog", "blog", null, "collection", 10, at());
  nodeRows.push(blog);
  for (let i = 0; i < 10_000; i++) {
    const e = node(projectId, `entry-${String(i).padStart(5, "0")}`, `blog/entry-${String(i).padStart(5, "0")}`, blog.id, "entry", i, at());
    e.title = `Entry ${(i * 7919) % 10_000}`;
    nodeRows.push(e);
  }
  await insertAll(db, nodes, nodeRows);
  await insertAll(db, blocks, blockRows);
  await insertAll(db, translations, trRows, 500);
  await mirrorPublishedVersions(db, projectId);
  return { projectId, pagePaths, frPaths };
}

/** A flat 100,000-node site (one locale plus 10% French) for the sitemap memory run. */
export async function seedBigSite(db: Db, slug: string, count: number): Promise<string> {
  const projectId = await createProject(db, slug, ["en", "fr"]);
  const at = new Date(Date.UTC(2025, 5, 1));
  const sections = Math.ceil(count / 1000);
  const rows: NodeRow[] = [];
  const trs: TranslationRow[] = [];
  for (let s = 0; s < sections; s++) {
    const section = node(projectId, `s-${s}`, `s-${s}`, null, "page", s, at);
    rows.push(section);
    for (let i = 0; i < 999 && rows.length < count; i++) rows.push(node(projectId, `n-${i}`, `s-${s}/n-${i}`, section.id, "page", i, at));
  }
  rows.forEach((r, i) => {
    if (i % 10 === 0) trs.push({ id: uuidv7(), projectId, nodeId: r.id!, locale: "fr", meta: { slug: `${r.slug}-fr` }, blocks: {}, status: "published", createdAt: at, updatedAt: at });
  });
  await insertAll(db, nodes, rows);
  await insertAll(db, translations, trs);
  await mirrorPublishedVersions(db, projectId);
  return projectId;
}
