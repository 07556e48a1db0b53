import { describe, expect, test } from "bun:test";
import { nodes, translations } from "../db/schema";
import { uuidv7 } from "../src/lib/ids";
import { bumpContentVersion } from "../src/write/unit";
import { get, translate, urlsOf, xmlProblem } from "./delivery.helpers";
import { harness, mirrorPublished, BASE as PUBLIC_URL, seedNode, seedProject } from "./helpers";

const SITE = "https://big.example";

describe("delivery: sitemap", async () => {
  const h = await harness();

  test("the well-formedness check used below rejects broken XML", () => {
    expect(xmlProblem('<?xml version="1.0"?>\n<a x="1"><b/>t &amp; &#38; &lt;</a>\n')).toBeNull();
    for (const bad of ["<a><b></a>", "<a>&</a>", "<a>&nope;</a>", '<a x="1" x="2"/>', "<a/><b/>", "<a>", "text", "<a x=1/>", "<a>1 < 2</a>", '<a x="<"/>']) {
      expect(xmlProblem(bad)).not.toBeNull();
    }
  });

  test("no public_base_url: 404 sitemap_unavailable for the sitemap and its shards", async () => {
    const p = await seedProject(h);
    await seedNode(h, p.slug, { slug: "page", title: "Page" }, true);
    for (const path of ["/sitemap.xml", "/sitemap-1.xml"]) {
      const res = await get(h, `/api/p/${p.slug}${path}`);
      expect(res.status).toBe(404);
      expect(res.json.error.code).toBe("sitemap_unavailable");
    }
  });

  test("a small site: one urlset, well-formed, escaped, alternates and x-default, lastmod", async () => {
    const p = await seedProject(h, { locales: ["en", "fr", "pt-BR"], public_base_url: "https://ex.example/site&co" });
    const a = await seedNode(h, p.slug, { slug: "a", title: "A" }, true);
    const b = await seedNode(h, p.slug, { slug: "b", title: "B", parent_id: a.id }, true);
    await seedNode(h, p.slug, { slug: "quiet", title: "Q", seo: { noindex: true } }, true);
    await translate(h, p.slug, a.id, "fr", { meta: { slug: "a-fr" } });
    await translate(h, p.slug, b.id, "fr", { meta: { title: "B fr" } });
    await translate(h, p.slug, b.id, "pt-BR", { meta: { slug: "b-pt" }, status: "draft" });
    // A noindex ancestor is not listed, but its localised slug still shapes its descendants' URLs.
    const docs = await seedNode(h, p.slug, { slug: "docs", title: "Docs", seo: { noindex: true } }, true);
    const guide = await seedNode(h, p.slug, { slug: "guide", title: "Guide", parent_id: docs.id }, true);
    const intro = await seedNode(h, p.slug, { slug: "intro", title: "Intro", parent_id: guide.id }, true);
    await translate(h, p.slug, docs.id, "fr", { meta: { slug: "documents" } });
    await translate(h, p.slug, guide.id, "fr", { meta: { slug: "guide-fr" } });
    await translate(h, p.slug, intro.id, "fr", { meta: { title: "Intro fr" } });
    const res = await get(h, `/api/p/${p.slug}/sitemap.xml`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/xml; charset=utf-8");
    expect(xmlProblem(res.text)).toBeNull();
    expect(res.text.startsWith('<?xml version="1.0" encoding="UTF-8"?>')).toBe(true);
    expect(res.text).toContain('<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">');
    expect(res.text).toContain("https://ex.example/site&amp;co/a");
    expect(res.text).not.toMatch(/&(?!amp;|lt;|gt;|quot;|apos;)/);
    const base = "https://ex.example/site&co";
    const urls = urlsOf(res.text);
    // noindex pages and draft translations are not listed
    expect(urls.map((u) => u.loc).sort()).toEqual(
      [
        `${base}/a`,
        `${base}/fr/a-fr`,
        `${base}/a/b`,
        `${base}/fr/a-fr/b`,
        `${base}/docs/guide`,
        `${base}/fr/documents/guide-fr`,
        `${base}/docs/guide/intro`,
        `${base}/fr/documents/guide-fr/intro`,
      ].sort(),
    );
    const bEn = urls.find((u) => u.loc === `${base}/a/b`)!;
    expect(bEn.alternates).toEqual({ en: `${base}/a/b`, fr: `${base}/fr/a-fr/b`, "x-default": `${base}/a/b` });
    expect(urls.find((u) => u.loc === `${base}/fr/a-fr/b`)!.alternates).toEqual(bEn.alternates);
    for (const u of urls) expect(new Date(u.lastmod).toISOString()).toBe(u.lastmod);
    expect((await get(h, `/api/p/${p.slug}/sitemap-2.xml`)).status).toBe(404);
    for (const bad of ["sitemap-0.xml", "sitemap-01.xml", "sitemap-x.xml", "sitemap-1.xml.gz"]) {
      const r = await get(h, `/api/p/${p.slug}/${bad}`);
      expect(r.status).toBe(404);
      expect(r.json.error.code).toBe("not_found");
    }
  });

  test("5,001 nodes: a sitemapindex of 2 shards whose URLs are exactly the published (node, locale) pairs", async () => {
    const p = await seedProject(h, { locales: ["en", "fr"], public_base_url: SITE });
    const now = new Date("2031-05-06T07:08:09.010Z");
    const row = (slug: string, path: string, parentId: string | null, status: "published" | "draft" | "archived", extra: Partial<typeof nodes.$inferInsert> = {}) => ({
      id: uuidv7(),
      projectId: p.id,
      parentId,
      slug,
      path,
      type: "page",
      title: slug,
      status,
      position: 0,
      seo: {},
      publishedAt: status === "published" ? now : null,
      createdAt: now,
      updatedAt: now,
      ...extra,
    });
    const sec = row("sec", "sec", null, "published");
    const children = Array.from({ length: 5000 }, (_, i) => {
      const slug = `n-${String(i).padStart(4, "0")}`;
      return row(slug, `sec/${slug}`, sec.id, "published");
    });
    const hiddenRoot = row("hidden", "hidden", null, "draft");
    const hiddenKids = Array.from({ length: 30 }, (_, i) => row(`k-${i}`, `hidden/k-${i}`, hiddenRoot.id, "published"));
    const extras = [row("old", "old", null, "archived"), row("secret", "secret", null, "published", { seo: { noindex: true } }), row("draft", "draft", null, "draft")];
    const all = [sec, hiddenRoot, ...extras, ...children, ...hiddenKids];
    for (let i = 0; i < all.length; i += 500) await h.deps.db.insert(nodes).values(all.slice(i, i + 500));

    const tr = (nodeId: string, meta: Record<string, unknown>, status: "published" | "draft" = "published") => ({
      id: uuidv7(),
      projectId: p.id,
      nodeId,
      locale: "fr",
      meta,
      blocks: {},
      status,
      createdAt: now,
      updatedAt: new Date("2032-01-01T00:00:00.000Z"),
    });
    const trs = [tr(sec.id, { slug: "rubrique" }), tr(hiddenKids[0]!.id, { slug: "x" })];
    children.forEach((c, i) => {
      if (i % 10 === 0) trs.push(tr(c.id, i % 20 === 0 ? { slug: `fr-${c.slug}` } : { title: "t" }));
      else if (i % 10 === 5) trs.push(tr(c.id, { slug: `draft-${c.slug}` }, "draft"));
    });
    for (let i = 0; i < trs.length; i += 500) await h.deps.db.insert(translations).values(trs.slice(i, i + 500));
    // Their published versions (and the hidden root's tombstone), as migration 0011 makes them.
    await mirrorPublished(h.deps.db, p.id);
    await bumpContentVersion(h.deps.db, p.id);

    const expected = new Set<string>([`${SITE}/sec`, `${SITE}/fr/rubrique`]);
    children.forEach((c, i) => {
      expected.add(`${SITE}/sec/${c.slug}`);
      if (i % 10 === 0) expected.add(`${SITE}/fr/rubrique/${i % 20 === 0 ? `fr-${c.slug}` : c.slug}`);
    });

    const index = await get(h, `/api/p/${p.slug}/sitemap.xml`);
    expect(index.status).toBe(200);
    expect(xmlProblem(index.text)).toBeNull();
    expect(index.text).toContain('<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">');
    // Shards are named on the site of the index (sitemaps.org), which proxies them to the API.
    const shardUrls = [...index.text.matchAll(/<sitemap><loc>([^<]+)<\/loc><\/sitemap>/g)].map((m) => m[1]);
    expect(shardUrls).toEqual([1, 2].map((n) => `${SITE}/sitemap-${n}.xml`));
    const byId = await get(h, `/api/p/${p.id}/sitemap.xml`);
    expect(byId.text).toBe(index.text);
    expect(index.text).not.toContain(PUBLIC_URL);

    const seen: string[] = [];
    const nodesPerShard: number[] = [];
    for (const shardUrl of shardUrls) {
      const res = await get(h, `/api/p/${p.slug}${shardUrl!.slice(SITE.length)}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("etag")).toMatch(/^"/);
      expect(xmlProblem(res.text)).toBeNull();
      const urls = urlsOf(res.text);
      seen.push(...urls.map((u) => u.loc));
      nodesPerShard.push(new Set(urls.map((u) => u.alternates["x-default"])).size);
      for (const u of urls) expect(u.lastmod).toMatch(/^20(31|32)-/);
    }
    expect(nodesPerShard).toEqual([5000, 1]);
    expect(seen.length).toBe(expected.size);
    expect(new Set(seen)).toEqual(expected);

    const shard1 = urlsOf((await get(h, `/api/p/${p.slug}/sitemap-1.xml`)).text);
    const translated = shard1.find((u) => u.loc === `${SITE}/sec/n-0020`)!;
    expect(translated.alternates).toEqual({ en: `${SITE}/sec/n-0020`, fr: `${SITE}/fr/rubrique/fr-n-0020`, "x-default": `${SITE}/sec/n-0020` });
    expect(shard1.find((u) => u.loc === `${SITE}/fr/rubrique/fr-n-0020`)!.lastmod).toBe("2032-01-01T00:00:00.000Z");
    expect(shard1.find((u) => u.loc === `${SITE}/sec/n-0005`)!.alternates).toEqual({ en: `${SITE}/sec/n-0005`, "x-default": `${SITE}/sec/n-0005` });
    const past = await get(h, `/api/p/${p.slug}/sitemap-3.xml`);
    expect(past.status).toBe(404);
    expect(past.json.error.code).toBe("not_found");
  }, 60_000);
});
