import { describe, expect, test } from "bun:test";
import { nodes, translations } from "../db/schema";
import type { DeliveryProject } from "../src/delivery/cache";
import { SHARD_LIMITS, type ShardLimits, shardXml, sitemapXml } from "../src/delivery/sitemap";
import { AppError } from "../src/errors";
import { uuidv7 } from "../src/lib/ids";
import { bumpContentVersion } from "../src/write/unit";
import { get, translate, urlsOf } from "./delivery.helpers";
import { harness, mirrorPublished, seedNode, seedProject, type TestHarness } from "./helpers";
import { xsdProblems } from "./seo-validators";

const SITE = "https://www.hundred-locales.example";
const SITEMAPS_ORG_MAX_BYTES = 50 * 1024 * 1024;
const bytes = (s: string): number => Buffer.byteLength(s, "utf8");

/** 100 locales: en, then 99 language-region tags. */
const LOCALES = ["en", ...["fr", "de", "es", "it", "pt", "nl", "sv", "da", "fi", "pl"].flatMap((l) => ["CA", "BE", "CH", "LU", "AT", "BR", "MX", "AR", "US", "GB"].map((r) => `${l}-${r}`))].slice(
  0,
  100,
);

async function bulkSite(h: TestHarness, projectId: string, count: number, locales: string[]): Promise<string[]> {
  const now = new Date("2033-03-03T03:03:03.003Z");
  const section = { slug: "international-product-documentation", title: "Docs" };
  const root = {
    id: uuidv7(),
    projectId,
    parentId: null,
    slug: section.slug,
    path: section.slug,
    type: "page",
    title: section.title,
    status: "published" as const,
    position: 0,
    seo: {},
    publishedAt: now,
    createdAt: now,
    updatedAt: now,
  };
  const pages = Array.from({ length: count }, (_, i) => {
    const slug = `how-to-configure-the-integration-step-by-step-guide-part-${String(i).padStart(3, "0")}`;
    return { ...root, id: uuidv7(), parentId: root.id, slug, path: `${root.path}/${slug}`, title: slug };
  });
  await h.deps.db.insert(nodes).values([root, ...pages]);
  const trs = [root, ...pages].flatMap((n) =>
    locales
      .filter((l) => l !== "en")
      .map((locale) => ({ id: uuidv7(), projectId, nodeId: n.id, locale, meta: { title: `${n.title} ${locale}` }, blocks: {}, status: "published" as const, createdAt: now, updatedAt: now })),
  );
  for (let i = 0; i < trs.length; i += 1000) await h.deps.db.insert(translations).values(trs.slice(i, i + 1000));
  // Their published versions, as migration 0011 makes them.
  await mirrorPublished(h.deps.db, projectId);
  await bumpContentVersion(h.deps.db, projectId);
  return [root, ...pages].map((n) => n.path);
}

async function text(gen: AsyncGenerator<string>): Promise<string> {
  let out = "";
  for await (const chunk of gen) out += chunk;
  return out;
}

describe("sitemap limits and XSD validity", async () => {
  const h = await harness();

  test("a small multi-locale site: the urlset is valid against the sitemaps.org XSD (with xhtml:link), and the check can fail", async () => {
    const p = await seedProject(h, { locales: ["en", "fr", "pt-BR"], public_base_url: "https://ex.example/site&co" });
    const a = await seedNode(h, p.slug, { slug: "a", title: "A" }, true);
    const b = await seedNode(h, p.slug, { slug: "b", title: "B", parent_id: a.id }, true);
    await seedNode(h, p.slug, { slug: "quiet", title: "Q", seo: { robots: "noindex" } }, true);
    await translate(h, p.slug, a.id, "fr", { meta: { slug: "a-fr" } });
    await translate(h, p.slug, b.id, "pt-BR", { meta: { title: "B pt" } });
    const res = await get(h, `/api/p/${p.slug}/sitemap.xml`);
    expect(res.status).toBe(200);
    expect(urlsOf(res.text)).toHaveLength(4);
    expect(await xsdProblems(res.text, "urlset")).toEqual([]);
    const broken = res.text.replace("<lastmod>", "<lastmod>yesterday ").replace(' hreflang="en"', "");
    const problems = await xsdProblems(broken, "urlset");
    expect(problems.join("\n")).toContain("lastmod");
    expect(problems.join("\n")).toContain("hreflang");
    expect(await xsdProblems(res.text.replace(/<loc>https:\/\/ex\.example/, "<loc>"), "urlset")).not.toEqual([]);
  });

  test("100 locales: cut by size (no file over 50 MB), an index on the public site, every shard XSD-valid, every indexable URL once", async () => {
    const p = await seedProject(h, { locales: LOCALES, public_base_url: SITE });
    expect(LOCALES).toHaveLength(100);
    const paths = await bulkSite(h, p.id, 44, LOCALES);
    const index = await get(h, `/api/p/${p.slug}/sitemap.xml`);
    expect(index.status).toBe(200);
    expect(index.text).toContain("<sitemapindex");
    expect(await xsdProblems(index.text, "index")).toEqual([]);
    const shardUrls = [...index.text.matchAll(/<loc>([^<]+)<\/loc>/g)].map((m) => m[1]);
    expect(shardUrls.length).toBeGreaterThanOrEqual(2);
    expect(shardUrls).toEqual(shardUrls.map((_, i) => `${SITE}/sitemap-${i + 1}.xml`));

    const seen = new Set<string>();
    let total = 0;
    for (const [i, url] of shardUrls.entries()) {
      const res = await get(h, `/api/p/${p.slug}${url!.slice(SITE.length)}`);
      expect(res.status).toBe(200);
      const size = bytes(res.text);
      total += size;
      expect(size).toBeLessThanOrEqual(SHARD_LIMITS.bytes);
      expect(size).toBeLessThan(SITEMAPS_ORG_MAX_BYTES);
      const urls = urlsOf(res.text);
      expect(urls.length).toBeLessThanOrEqual(50_000);
      for (const u of urls) {
        expect(seen.has(u.loc)).toBe(false);
        seen.add(u.loc);
        expect(Object.keys(u.alternates)).toHaveLength(101);
      }
      if (i === 0) expect(await xsdProblems(res.text, "urlset")).toEqual([]);
    }
    // The same site in one file would pass the 50 MB limit: the cut is what keeps it valid.
    expect(total).toBeGreaterThan(SITEMAPS_ORG_MAX_BYTES);
    const expected = new Set(paths.flatMap((path) => LOCALES.map((l) => `${SITE}${l === "en" ? "" : `/${l}`}/${path}`)));
    expect(seen.size).toBe(expected.size);
    expect(seen).toEqual(expected);
    expect((await get(h, `/api/p/${p.slug}/sitemap-${shardUrls.length + 1}.xml`)).status).toBe(404);
  }, 180_000);

  test("every limit cuts: nodes, URLs and bytes; shards tile the site in path order; bytes are counted exactly", async () => {
    const p = await seedProject(h, { locales: ["en", "fr", "de"], public_base_url: "https://cut.example" });
    const made: any[] = [];
    for (let i = 0; i < 9; i++) {
      made.push(await seedNode(h, p.slug, { slug: `page-${i}`, title: `P${i}` }, true));
      if (i % 3 !== 0) await translate(h, p.slug, made[i].id, "fr", { meta: { title: `P${i} fr`, slug: `seite-${i}` } });
    }
    const project: DeliveryProject = { id: p.id, slug: p.slug, name: p.slug, defaultLocale: "en", locales: ["en", "fr", "de"], publicBaseUrl: "https://cut.example", siteName: p.slug, version: 1 };
    const whole = urlsOf(await text(await sitemapXml(h.deps.db, project, { nodes: 100, urls: 1000, bytes: 1e9 })));
    expect(whole).toHaveLength(15);

    const shardsOf = async (limits: ShardLimits): Promise<string[]> => {
      const index = await text(await sitemapXml(h.deps.db, project, limits));
      const count = [...index.matchAll(/<sitemap>/g)].length;
      const out: string[] = [];
      for (let n = 1; n <= count; n++) out.push(await text(await shardXml(h.deps.db, project, n, limits)));
      await expect(shardXml(h.deps.db, project, count + 1, limits)).rejects.toBeInstanceOf(AppError);
      // Together, in order, the shards are the whole site.
      expect(out.flatMap((s) => urlsOf(s))).toEqual(whole);
      return out;
    };
    const byNodes = await shardsOf({ nodes: 4, urls: 1000, bytes: 1e9 });
    expect(byNodes.map((s) => new Set(urlsOf(s).map((u) => u.alternates["x-default"])).size)).toEqual([4, 4, 1]);
    const byUrls = await shardsOf({ nodes: 100, urls: 5, bytes: 1e9 });
    // 1 + 2 + 2 URLs per run of three pages: exactly 5 each.
    expect(byUrls.map((s) => urlsOf(s).length)).toEqual([5, 5, 5]);
    const tighter = await shardsOf({ nodes: 100, urls: 4, bytes: 1e9 });
    expect(tighter.map((s) => urlsOf(s).length)).toEqual([3, 3, 4, 3, 2]);
    const limit = 1500;
    const byBytes = await shardsOf({ nodes: 100, urls: 1000, bytes: limit });
    const largestNode = 2 * Math.max(...whole.map((u) => bytes(`<url>${u.loc}</url>`) + 400));
    for (const s of byBytes) {
      expect(bytes(s)).toBeLessThanOrEqual(limit);
      expect(await xsdProblems(s, "urlset")).toEqual([]);
    }
    // Packed tight: every shard but the last is within one node of the limit (the sizes are exact, not guessed).
    for (const s of byBytes.slice(0, -1)) expect(bytes(s)).toBeGreaterThan(limit - largestNode);
    expect(byBytes.length).toBeGreaterThan(3);
  });
});
