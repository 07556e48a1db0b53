import { describe, expect, test } from "bun:test";
import { get, patchNode, translate, urlsOf } from "./delivery.helpers";
import { harness, seedNode, seedProject, type TestHarness } from "./helpers";
import { expandSafe, schemaProblems } from "./seo-validators";

const SITE = "https://story.example";
const LOCALES = ["en", "de", "fr"];

/** The public URL a page has in a locale (the same formula as the site's router). */
const ownUrl = (locale: string, path: string): string => `${SITE}${locale === "en" ? "" : `/${locale}`}/${path}`;
const saysNoindex = (robots: string): boolean => robots.split(",").some((d) => ["noindex", "none"].includes(d.trim().toLowerCase()));

async function read(h: TestHarness, ref: string, id: string, locale: string): Promise<any> {
  const res = await get(h, `/api/p/${ref}/nodes/${id}?locale=${locale}`);
  expect(res.status).toBe(200);
  return res.json.data;
}

describe("delivery SEO: sitemap, robots, canonical and hreflang tell one story", async () => {
  const h = await harness();
  const p = await seedProject(h, { locales: LOCALES, public_base_url: SITE });
  const n: Record<string, any> = {};
  const node = async (slug: string, extra: Record<string, unknown> = {}, tr: Record<string, Record<string, unknown>> = {}) => {
    n[slug] = await seedNode(h, p.slug, { slug, title: slug, ...extra }, true);
    for (const [locale, meta] of Object.entries(tr)) await translate(h, p.slug, n[slug].id, locale, { meta: { title: `${slug} ${locale}`, ...meta } });
  };
  await node("plain", {}, { de: { slug: "schlicht" }, fr: { slug: "simple" } });
  await node("kid", { parent_id: n.plain.id }, { fr: {} });
  await node("robots-noindex", { seo: { robots: "noindex, follow" } }, { de: {}, fr: {} });
  await node("robots-none", { seo: { robots: "NONE" } });
  await node("robots-other", { seo: { robots: "max-image-preview:none, index" } }, { fr: {} });
  await node("de-robots", {}, { de: { robots: "noindex" }, fr: {} });
  await node("de-flag", {}, { de: { noindex: true }, fr: {} });
  await node("canon-away", { seo: { canonical: "https://elsewhere.example/original" } }, { de: {}, fr: {} });
  await node("canon-self", { seo: { canonical: `${SITE}/canon-self` } }, { fr: {} });
  await node("canon-rel", { seo: { canonical: "/canon-rel" } });
  await node("fr-canon", {}, { fr: { canonical: `${SITE}/plain` } });
  await node("flag-index", { seo: { noindex: true, robots: "index,follow" } });
  await node("de-unflag", { seo: { noindex: true } }, { de: { noindex: false }, fr: {} });
  await node("only-en");

  test("the sitemap lists exactly the pages that say they are indexable, with the hreflang set each page gives", async () => {
    const res = await get(h, `/api/p/${p.slug}/sitemap.xml`);
    expect(res.status).toBe(200);
    const urls = urlsOf(res.text);
    const sitemap = new Map(urls.map((u) => [u.loc, u.alternates]));
    expect(sitemap.size).toBe(urls.length);

    const indexable = new Map<string, Record<string, string>>();
    let pages = 0;
    for (const { id } of Object.values(n)) {
      for (const locale of LOCALES) {
        const d = await read(h, p.slug, id, locale);
        pages += 1;
        const url = ownUrl(locale, d.path);
        const hreflang = Object.fromEntries(d.seo.hreflang.map((x: any) => [x.locale, x.href]));
        const isVersion = locale === "en" || d.translated;
        if (isVersion && !saysNoindex(d.seo.robots) && d.seo.canonical === url) {
          indexable.set(url, hreflang);
          // A page names itself in its own cluster.
          expect(hreflang[locale]).toBe(url);
        } else {
          expect({ url, hreflang: d.seo.hreflang }).toEqual({ url, hreflang: [] });
        }
      }
    }
    expect(pages).toBe(Object.keys(n).length * LOCALES.length);
    expect([...sitemap.keys()].sort()).toEqual([...indexable.keys()].sort());
    for (const [url, hreflang] of indexable) {
      expect({ url, alternates: sitemap.get(url) }).toEqual({ url, alternates: hreflang });
      // Every URL an hreflang set names is itself indexable (and so in the sitemap).
      for (const href of Object.values(hreflang)) expect(indexable.has(href)).toBe(true);
    }
    // Guard against a vacuous pass: the site has both kinds of pages.
    expect(indexable.size).toBe(17);
  });

  test("a robots string saying noindex (flag unset) keeps the page out, in every locale that inherits it", async () => {
    const sitemap = (await get(h, `/api/p/${p.slug}/sitemap.xml`)).text;
    for (const locale of LOCALES) {
      const d = await read(h, p.slug, n["robots-noindex"].id, locale);
      expect(d.seo.robots).toBe("noindex, follow");
      expect(sitemap).not.toContain(ownUrl(locale, d.path));
    }
    expect((await read(h, p.slug, n["robots-none"].id, "en")).seo.robots).toBe("NONE");
    expect(sitemap).not.toContain(`${SITE}/robots-none`);
    // "none" as the value of another directive is not noindex.
    expect(sitemap).toContain(`<loc>${SITE}/robots-other</loc>`);
    // The noindex flag wins over a robots string that says index.
    expect((await read(h, p.slug, n["flag-index"].id, "en")).seo.robots).toBe("noindex,follow");
    expect(sitemap).not.toContain(`${SITE}/flag-index`);
  });

  test("a German translation marked noindex (flag or robots) is named by no hreflang set and not listed", async () => {
    for (const slug of ["de-flag", "de-robots"]) {
      const en = await read(h, p.slug, n[slug].id, "en");
      expect(en.seo.hreflang).toEqual([
        { locale: "en", href: `${SITE}/${slug}` },
        { locale: "fr", href: `${SITE}/fr/${slug}` },
        { locale: "x-default", href: `${SITE}/${slug}` },
      ]);
      const de = await read(h, p.slug, n[slug].id, "de");
      expect(de.translated).toBe(true);
      expect(saysNoindex(de.seo.robots)).toBe(true);
      expect(de.seo.hreflang).toEqual([]);
    }
    const sitemap = urlsOf((await get(h, `/api/p/${p.slug}/sitemap.xml`)).text);
    expect(sitemap.some((u) => u.loc.includes("/de/de-flag") || u.loc.includes("/de/de-robots"))).toBe(false);
    expect(sitemap.find((u) => u.loc === `${SITE}/de-flag`)!.alternates).toEqual({ en: `${SITE}/de-flag`, fr: `${SITE}/fr/de-flag`, "x-default": `${SITE}/de-flag` });
  });

  test("a node canonical to another URL is in no sitemap and no hreflang set, in any locale", async () => {
    const sitemap = (await get(h, `/api/p/${p.slug}/sitemap.xml`)).text;
    expect(sitemap).not.toContain("canon-away");
    expect(sitemap).not.toContain("elsewhere.example");
    for (const locale of LOCALES) {
      const d = await read(h, p.slug, n["canon-away"].id, locale);
      expect(d.seo.canonical).toBe("https://elsewhere.example/original");
      expect(d.seo.hreflang).toEqual([]);
      expect(d.seo.og.url).toBe("https://elsewhere.example/original");
    }
    // A canonical naming the page itself (absolute, or root-relative) keeps it, and its translations, listed.
    expect(sitemap).toContain(`<loc>${SITE}/canon-self</loc>`);
    expect(sitemap).toContain(`<loc>${SITE}/fr/canon-self</loc>`);
    expect((await read(h, p.slug, n["canon-self"].id, "fr")).seo.canonical).toBe(`${SITE}/fr/canon-self`);
    expect((await read(h, p.slug, n["canon-rel"].id, "en")).seo.canonical).toBe(`${SITE}/canon-rel`);
    expect(sitemap).toContain(`<loc>${SITE}/canon-rel</loc>`);
    // A translation canonical elsewhere leaves only its own URL out.
    expect(sitemap).not.toContain(`${SITE}/fr/fr-canon`);
    expect(sitemap).toContain(`<loc>${SITE}/fr-canon</loc>`);
  });

  test("a translation may lift the node's noindex for its locale: listed alone, without x-default", async () => {
    const urls = urlsOf((await get(h, `/api/p/${p.slug}/sitemap.xml`)).text).filter((u) => u.loc.includes("de-unflag"));
    expect(urls.map((u) => u.loc)).toEqual([`${SITE}/de/de-unflag`]);
    expect(urls[0]!.alternates).toEqual({ de: `${SITE}/de/de-unflag` });
    const de = await read(h, p.slug, n["de-unflag"].id, "de");
    expect(de.seo.robots).toBe("index,follow");
    expect(de.seo.hreflang).toEqual([{ locale: "de", href: `${SITE}/de/de-unflag` }]);
  });

  test("a fallback answer is canonical to the default version it shows, out of the sitemap and of hreflang", async () => {
    const res = await get(h, `/api/p/${p.slug}/nodes/by-path/only-en?locale=de`);
    expect(res.status).toBe(200);
    const d = res.json.data;
    expect(d).toMatchObject({ locale: "de", translated: false, path: "only-en" });
    expect(d.seo.canonical).toBe(`${SITE}/only-en`);
    expect(d.seo.og.url).toBe(`${SITE}/only-en`);
    expect(d.seo.og.locale).toBe("en");
    expect(d.seo.hreflang).toEqual([]);
    expect(d.seo.jsonld["@graph"][0]).toMatchObject({ url: `${SITE}/only-en`, inLanguage: "en" });
    const en = await read(h, p.slug, n["only-en"].id, "en");
    expect(en.seo.hreflang).toEqual([
      { locale: "en", href: `${SITE}/only-en` },
      { locale: "x-default", href: `${SITE}/only-en` },
    ]);
    const sitemap = (await get(h, `/api/p/${p.slug}/sitemap.xml`)).text;
    expect(sitemap).toContain(`<loc>${SITE}/only-en</loc>`);
    expect(sitemap).not.toContain("/de/only-en");
    expect(sitemap).not.toContain("/fr/only-en");
    // The child of a translated node, untranslated in de: a fallback under the localised parent path.
    const kid = await get(h, `/api/p/${p.slug}/nodes/by-path/schlicht/kid?locale=de`);
    expect(kid.status).toBe(200);
    expect(kid.json.data.seo.canonical).toBe(`${SITE}/plain/kid`);
    expect(sitemap).toContain(`<loc>${SITE}/fr/simple/kid</loc>`);
    expect(sitemap).not.toContain("/de/schlicht/kid");
  });
});

describe("delivery SEO: descriptions and JSON-LD", async () => {
  const h = await harness();
  const p = await seedProject(h, { locales: ["en", "fr"], public_base_url: SITE });
  const TYPES = ["page", "collection", "entry", "article", "post", "news", "blog-post", "landing"];
  const ARTICLES = new Set(["entry", "article", "post", "news", "blog-post"]);
  const parent = await seedNode(h, p.slug, { slug: "types", title: "Types" }, true);
  const made: Record<string, any> = {};
  for (const type of TYPES) {
    made[type] = await seedNode(
      h,
      p.slug,
      {
        slug: `t-${type}`,
        title: `A ${type} "quoted" <title>`,
        type,
        parent_id: parent.id,
        blocks: [
          { type: "image", data: { url: "/img/cover.jpg" } },
          { type: "text", data: { html: "<p>Fish &amp; chips &lt;3 &mdash; &eacute;t&eacute;&nbsp;2024 &#x263A; <script>x()</script></p>" } },
        ],
      },
      true,
    );
    await translate(h, p.slug, made[type].id, "fr", { meta: { title: `Un ${type}`, slug: `fr-${type}` } });
  }

  test("descriptions derived from text blocks are plain text: tags and scripts gone, entities decoded (og, twitter, JSON-LD)", async () => {
    const d = await read(h, p.slug, made.entry.id, "en");
    const plain = "Fish & chips <3 — été 2024 ☺";
    expect(d.seo.og.description).toBe(plain);
    expect(d.seo.twitter.description).toBe(plain);
    for (const item of d.seo.jsonld["@graph"]) expect(item.description).toBe(plain);
    // An explicit description is the author's text, kept as written.
    await patchNode(h, p.slug, made.page.id, { seo: { description: "R&amp;D as typed" } });
    expect((await read(h, p.slug, made.page.id, "en")).seo.og.description).toBe("R&amp;D as typed");
  });

  test("every node type, in the default locale, a translation and a fallback: valid for jsonld (safe mode) and schema.org", async () => {
    const q = await seedProject(h, { locales: ["en", "fr", "de"], public_base_url: SITE });
    const checked: string[] = [];
    for (const type of TYPES) {
      const one = await seedNode(h, q.slug, { slug: `x-${type}`, title: `X ${type}`, type, blocks: [{ type: "text", data: { text: "Body" } }] }, true);
      await translate(h, q.slug, one.id, "fr", { meta: { title: `Fr ${type}` } });
      for (const [ref, id] of [
        [p.slug, made[type].id],
        [q.slug, one.id],
      ]) {
        for (const locale of ref === q.slug ? ["en", "fr", "de"] : ["en", "fr"]) {
          const d = await read(h, ref, id, locale);
          const doc = d.seo.jsonld;
          const expanded = await expandSafe(doc);
          const graph = doc["@graph"];
          // Nothing dropped: each graph node expands with all its properties.
          expect(expanded).toHaveLength(graph.length);
          expanded.forEach((e: any, i: number) => {
            const props = Object.keys(graph[i]).filter((k) => !k.startsWith("@"));
            expect(Object.keys(e).filter((k) => !k.startsWith("@")).length).toBe(props.length);
          });
          expect(schemaProblems(doc)).toEqual([]);
          const [page, article] = graph;
          expect(page["@type"]).toBe("WebPage");
          expect(page).toMatchObject({ url: d.seo.canonical, name: d.title });
          expect(page.breadcrumb.itemListElement.map((x: any) => x.item)).toEqual(d.seo.breadcrumbs.map((b: any) => b.href));
          if (ARTICLES.has(type)) {
            expect(graph).toHaveLength(2);
            expect(article["@type"]).toBe("Article");
            expect(page.mainEntity).toEqual({ "@id": article["@id"] });
            expect(article.mainEntityOfPage).toEqual({ "@id": page["@id"] });
            expect(article.breadcrumb).toBeUndefined();
          } else {
            expect(graph).toHaveLength(1);
            expect(page.mainEntity).toBeUndefined();
          }
          checked.push(`${type}/${locale}`);
        }
      }
    }
    expect(checked).toHaveLength(TYPES.length * 5);
  });

  test("without public_base_url the JSON-LD still expands in safe mode (blank node ids, no relative @id)", async () => {
    const q = await seedProject(h, { locales: ["en"] });
    const one = await seedNode(h, q.slug, { slug: "post", title: "Post", type: "post" }, true);
    const d = await read(h, q.slug, one.id, "en");
    expect(d.seo.jsonld["@graph"].map((x: any) => x["@id"])).toEqual(["_:webpage", "_:article"]);
    await expandSafe(d.seo.jsonld);
  });

  test("the validators used above reject what they must (the old Article-with-breadcrumb shape, dropped terms, relative @id)", async () => {
    const old = {
      "@context": "https://schema.org",
      "@type": "Article",
      headline: "x",
      breadcrumb: { "@type": "BreadcrumbList", itemListElement: [{ "@type": "ListItem", position: 1, name: "x", item: `${SITE}/x` }] },
    };
    expect(schemaProblems(old).join()).toContain("breadcrumb: not a property of Article");
    expect(schemaProblems({ "@context": "https://schema.org", "@type": "WebPage", headlines: "x" }).join()).toContain("not a schema.org property");
    expect(schemaProblems({ "@context": "https://schema.org", "@type": "WebPage", url: "/relative" }).join()).toContain("not an absolute URL");
    expect(schemaProblems({ "@context": "https://schema.org", "@type": "WebSite", mainEntity: { "@type": "ListItem" }, breadcrumb: "x" }).join()).toContain("breadcrumb: not a property of WebSite");
    // jsonld's safe mode names what it refused (details.event.code).
    const refusal = (doc: unknown) =>
      expandSafe(doc).then(
        () => null,
        (e: { name?: string; details?: { event?: { code?: string } } }) => [e.name, e.details?.event?.code],
      );
    expect(await refusal({ "@context": "https://schema.org", "@type": "WebPage", "@foo": 1 })).toEqual(["jsonld.ValidationError", "invalid property"]);
    expect(await refusal({ "@context": "https://schema.org", "@type": "WebPage", "@id": "relative" })).toEqual(["jsonld.ValidationError", "relative @id reference"]);
  });
});

describe("delivery: error answers get their own short Cache-Control", async () => {
  const CC = "public, max-age=60";
  test("404s, 400s and sitemap_unavailable carry DELIVERY_ERROR_CACHE_CONTROL (default public, max-age=5); 200s keep theirs; both with stale-if-error", async () => {
    for (const [env, expected] of [
      [{}, "public, max-age=5, stale-if-error=86400"],
      [{ DELIVERY_ERROR_CACHE_CONTROL: "public, max-age=2, must-revalidate" }, "public, max-age=2, must-revalidate, stale-if-error=86400"],
    ] as const) {
      const h = await harness({ DELIVERY_CACHE_CONTROL: CC, ...env });
      const p = await seedProject(h, { public_base_url: SITE });
      const bare = await seedProject(h);
      await seedNode(h, p.slug, { slug: "here", title: "Here" }, true);
      const errors: [string, number, string][] = [
        [`/api/p/${p.slug}/nodes/by-path/missing`, 404, "not_found"],
        [`/api/p/${p.slug}/nodes/by-path/here?locale=xx`, 400, "invalid_locale"],
        [`/api/p/no-such-project/nodes/by-path/here`, 404, "not_found"],
        [`/api/p/${bare.slug}/sitemap.xml`, 404, "sitemap_unavailable"],
        [`/api/p/${p.slug}/sitemap-9.xml`, 404, "not_found"],
        [`/api/p/${p.slug}/entries`, 400, "missing_parameter"],
      ];
      for (const [path, status, code] of errors) {
        const res = await get(h, path);
        expect({ path, status: res.status, code: res.json?.error?.code, cc: res.headers.get("cache-control") }).toEqual({ path, status, code, cc: expected });
      }
      for (const path of [`/api/p/${p.slug}/nodes/by-path/here`, `/api/p/${p.slug}/sitemap.xml`, `/api/p/${p.slug}/robots.txt`]) {
        const res = await get(h, path);
        expect(res.status).toBe(200);
        expect(res.headers.get("cache-control")).toBe(`${CC}, stale-if-error=86400`);
      }
      // A page published after a 404 was served is found at once (and the 404 told caches 5 s at most).
      const later = await seedNode(h, p.slug, { slug: "missing", title: "Now here" }, true);
      const now = await get(h, `/api/p/${p.slug}/nodes/by-path/missing`);
      expect(now.status).toBe(200);
      expect(now.json.data.id).toBe(later.id);
    }
  });
});
