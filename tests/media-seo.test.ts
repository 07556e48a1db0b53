// A node's SEO image as a media item (issue 26): `og_image` (node seo, translation meta) holds a
// media id of the project; delivery answers og:image with the item's URL, width, height, type and
// alt text in the answer's language, the sitemap lists it as image:image, and bad ids are 400.
import { beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { nodes, translations } from "../db/schema";
import { get, translate } from "./delivery.helpers";
import { setModel } from "./delivery-model.helpers";
import { harness, seedNode, seedProject, type TestHarness } from "./helpers";
import { twoColourPng, uploadForm } from "./media.helpers";
import { xsdProblems } from "./seo-validators";

const BASE = "https://www.example.com";

/** The image:loc of each <url> of a urlset, by its loc (null: none). */
function imagesOf(xml: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const m of xml.matchAll(/<url><loc>([^<]*)<\/loc>([\s\S]*?)<\/url>/g))
    out[m[1]!.replaceAll("&amp;", "&")] = [...m[2]!.matchAll(/<image:image><image:loc>([^<]*)<\/image:loc><\/image:image>/g)].map((i) => i[1]!.replaceAll("&amp;", "&"));
  return out;
}

describe("SEO image as a media item", () => {
  let h: TestHarness;
  let slug: string;
  let banner: any;
  let square: any;
  let foreign: any;
  let pdf: any;
  let page: any;

  beforeAll(async () => {
    h = await harness({ DATA_DIR: mkdtempSync(join(tmpdir(), "media-seo-")) });
    const p = await seedProject(h, { locales: ["en", "fr", "de"], public_base_url: BASE });
    slug = p.slug;
    banner = (await uploadForm(h, slug, await twoColourPng(1280, 320), "banner.png", { alt: "A red and blue banner" })).json.data;
    expect((await h.request("PATCH", `/admin/p/${slug}/media/${banner.id}`, { body: { alt: { fr: "Une bannière rouge et bleue" } } })).status).toBe(200);
    square = (await uploadForm(h, slug, await twoColourPng(600, 600), "square.png", { alt: "Ein Quadrat", locale: "de" })).json.data;
    pdf = (await uploadForm(h, slug, new TextEncoder().encode("%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"), "terms.pdf")).json.data;
    expect(pdf.type).toBe("application/pdf");
    const other = await seedProject(h);
    foreign = (await uploadForm(h, other.slug, await twoColourPng(320, 80), "theirs.png")).json.data;
    page = await seedNode(h, slug, { slug: "about", title: "About", seo: { description: "About us", og_image: banner.id } }, true);
    await translate(h, slug, page.id, "fr", { meta: { title: "À propos", slug: "a-propos" } });
    await translate(h, slug, page.id, "de", { meta: { title: "Über uns", slug: "ueber-uns", og_image: square.id } });
  }, 120_000);

  test("og:image is the item's absolute URL with its width, height, type and alt text in the answer's language", async () => {
    const en = await get(h, `/api/p/${slug}/nodes/by-path/about`);
    expect(en.status).toBe(200);
    expect(banner.url).toStartWith("http");
    expect(en.json.data.seo.og).toMatchObject({ image: banner.url, image_width: 1280, image_height: 320, image_type: "image/png", image_alt: "A red and blue banner" });
    expect(en.json.data.seo.twitter).toMatchObject({ card: "summary_large_image", image: banner.url, image_alt: "A red and blue banner" });
    expect(en.json.data.seo.jsonld["@graph"][0].image).toBe(banner.url);
    // French: the node's image, its French alt text.
    const fr = await get(h, `/api/p/${slug}/nodes/by-path/a-propos?locale=fr`);
    expect(fr.json.data.seo.og).toMatchObject({ image: banner.url, image_alt: "Une bannière rouge et bleue", locale: "fr" });
    // German: the translation's own image; its alt text exists in German only.
    const de = await get(h, `/api/p/${slug}/nodes/by-path/ueber-uns?locale=de`);
    expect(de.json.data.seo.og).toMatchObject({ image: square.url, image_width: 600, image_height: 600, image_alt: "Ein Quadrat" });
  });

  test("alt text falls back to the default locale's; a fallback answer shows the default version's", async () => {
    const de = await seedNode(h, slug, { slug: "team", seo: { og_image: banner.id } }, true);
    await translate(h, slug, de.id, "de", { meta: { title: "Team" } });
    const res = await get(h, `/api/p/${slug}/nodes/by-path/team?locale=de`);
    expect(res.json.data.seo.og.image_alt).toBe("A red and blue banner");
    const fallback = await get(h, `/api/p/${slug}/nodes/by-path/team?locale=fr`);
    expect(fallback.json.data.translated).toBe(false);
    expect(fallback.json.data.seo.og).toMatchObject({ image: banner.url, image_alt: "A red and blue banner" });
  });

  test("a URL og_image works as before, without the media keys", async () => {
    const n = await seedNode(h, slug, { slug: "by-url", seo: { og_image: "/img/share.png" } }, true);
    const res = await get(h, `/api/p/${slug}/nodes/by-path/by-url`);
    expect(res.json.data.seo.og.image).toBe(`${BASE}/img/share.png`);
    expect(Object.keys(res.json.data.seo.og).filter((k) => k.startsWith("image_"))).toEqual([]);
    expect(Object.keys(res.json.data.seo.twitter)).not.toContain("image_alt");
    expect(n.seo.og_image).toBe("/img/share.png");
  });

  test("an unknown media id or another project's item is 400 invalid_request; nothing is written", async () => {
    const unknown = "01900000-0000-7000-8000-000000000000";
    for (const id of [unknown, foreign.id, foreign.id.toUpperCase()]) {
      const created = await h.request("POST", `/admin/p/${slug}/nodes`, { body: { slug: `bad-${Date.now()}`, title: "Bad", seo: { og_image: id } } });
      expect(created.status).toBe(400);
      expect(created.json.error).toMatchObject({ code: "invalid_request", details: { field: "seo.og_image", media_id: id.toLowerCase() } });
    }
    const patched = await h.request("PATCH", `/admin/p/${slug}/nodes/${page.id}`, { body: { seo: { og_image: foreign.id } } });
    expect(patched.status).toBe(400);
    expect(patched.json.error.code).toBe("invalid_request");
    const tr = await h.request("PUT", `/admin/p/${slug}/nodes/${page.id}/translations/fr`, { body: { meta: { title: "À propos", og_image: unknown } } });
    expect(tr.status).toBe(400);
    expect(tr.json.error).toMatchObject({ code: "invalid_request", details: { field: "meta.og_image" } });
    const [row] = await h.deps.db.select({ seo: nodes.seo }).from(nodes).where(eq(nodes.id, page.id));
    expect(row?.seo).toEqual({ description: "About us", og_image: banner.id });
    const metas = await h.deps.db.select({ locale: translations.locale, meta: translations.meta }).from(translations).where(eq(translations.nodeId, page.id)).orderBy(translations.locale);
    expect(metas).toEqual([
      { locale: "de", meta: { title: "Über uns", slug: "ueber-uns", og_image: square.id } },
      { locale: "fr", meta: { title: "À propos", slug: "a-propos" } },
    ]);
    expect((await h.request("GET", `/admin/p/${slug}/nodes?path_prefix=bad-`)).json.data).toEqual([]);
  });

  test("the sitemap declares the image namespace and lists each version's SEO image (valid against the XSDs)", async () => {
    const plain = await seedNode(h, slug, { slug: "plain" }, true);
    const withPdf = await seedNode(h, slug, { slug: "with-pdf", seo: { og_image: pdf.id } }, true);
    // Another kind of file is a media item of the project: the write keeps it (the sitemap below lists no image for it).
    expect(await h.deps.db.select({ seo: nodes.seo }).from(nodes).where(eq(nodes.id, withPdf.id))).toEqual([{ seo: { og_image: pdf.id } }]);
    const res = await get(h, `/api/p/${slug}/sitemap.xml`);
    expect(res.status).toBe(200);
    expect(res.text).toContain('xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"');
    expect(await xsdProblems(res.text, "urlset")).toEqual([]);
    const images = imagesOf(res.text);
    expect(images[`${BASE}/about`]).toEqual([banner.url]);
    expect(images[`${BASE}/fr/a-propos`]).toEqual([banner.url]);
    expect(images[`${BASE}/de/ueber-uns`]).toEqual([square.url]);
    expect(images[`${BASE}/${plain.path}`]).toEqual([]);
    expect(images[`${BASE}/by-url`]).toEqual([]); // a URL og_image is no media item: not listed
    expect(images[`${BASE}/with-pdf`]).toEqual([]); // not an image
  });

  test("the sitemap lists the images of media fields and blocks too (content model), after the SEO image, each once; other files are not images", async () => {
    const q = await seedProject(h, { public_base_url: BASE });
    await setModel(h.deps.db, q.id, {
      block_types: [{ name: "figure", description: "", schema: { type: "object", properties: { image: { type: "string", format: "media" } } } }],
      node_types: [
        {
          name: "post",
          description: "",
          fields: { type: "object", properties: { hero: { type: "string", format: "media" }, files: { type: "array", items: { type: "string", format: "media" } } } },
          blocks: null,
          children: null,
        },
      ],
    });
    const share = (await uploadForm(h, q.slug, await twoColourPng(1200, 630), "share.png")).json.data;
    const hero = (await uploadForm(h, q.slug, await twoColourPng(1600, 400), "hero.png")).json.data;
    const figure = (await uploadForm(h, q.slug, await twoColourPng(800, 600), "figure.png")).json.data;
    const doc = (await uploadForm(h, q.slug, new TextEncoder().encode("%PDF-1.4\n%%EOF\n"), "doc.pdf")).json.data;
    await seedNode(
      h,
      q.slug,
      {
        slug: "post",
        type: "post",
        seo: { og_image: share.id },
        fields: { hero: hero.id, files: [doc.id, share.id] },
        blocks: [
          { type: "figure", data: { image: figure.id } },
          { type: "figure", data: { image: hero.id } },
        ],
      },
      true,
    );
    await seedNode(h, q.slug, { slug: "bare", type: "post", fields: { hero: figure.id } }, true);
    const res = await get(h, `/api/p/${q.slug}/sitemap.xml`);
    expect(await xsdProblems(res.text, "urlset")).toEqual([]);
    const images = imagesOf(res.text);
    expect(images[`${BASE}/post`]?.[0]).toBe(share.url);
    expect(new Set(images[`${BASE}/post`])).toEqual(new Set([share.url, hero.url, figure.url]));
    expect(images[`${BASE}/post`]).toHaveLength(3);
    expect(images[`${BASE}/bare`]).toEqual([figure.url]);
  });

  test("a media write reaches the cached page and sitemap at once; a force-deleted item is dropped, never a 500", async () => {
    expect((await get(h, `/api/p/${slug}/nodes/by-path/about`)).json.data.seo.og.image_alt).toBe("A red and blue banner");
    await get(h, `/api/p/${slug}/sitemap.xml`);
    const moved = await h.request("PATCH", `/admin/p/${slug}/media/${banner.id}`, { body: { alt: { en: "Banner" }, focal_point: { x: 0.2, y: 0.5 } } });
    expect(moved.status).toBe(200);
    const url = moved.json.data.url;
    expect(url).not.toBe(banner.url);
    const page1 = await get(h, `/api/p/${slug}/nodes/by-path/about`);
    expect(page1.json.data.seo.og).toMatchObject({ image: url, image_alt: "Banner" });
    expect(imagesOf((await get(h, `/api/p/${slug}/sitemap.xml`)).text)[`${BASE}/about`]).toEqual([url]);
    // Referenced by SEO: deleting it is refused unless forced.
    const refused = await h.request("DELETE", `/admin/p/${slug}/media/${square.id}`);
    expect(refused.status).toBe(409);
    expect(refused.json.error.details.nodes.map((n: any) => n.id)).toContain(page.id);
    expect((await h.request("DELETE", `/admin/p/${slug}/media/${square.id}?force=true`)).status).toBe(204);
    const de = await get(h, `/api/p/${slug}/nodes/by-path/ueber-uns?locale=de`);
    expect(de.status).toBe(200);
    expect(de.json.data.seo.og.image).toBeNull();
    expect(de.json.data.seo.og.image_alt).toBeUndefined();
    const sitemap = await get(h, `/api/p/${slug}/sitemap.xml`);
    expect(imagesOf(sitemap.text)[`${BASE}/de/ueber-uns`]).toEqual([]);
    // The deleted id is no item any more: a new write naming it is refused.
    const again = await h.request("PUT", `/admin/p/${slug}/nodes/${page.id}/translations/de`, { body: { meta: { title: "Über uns", og_image: square.id } } });
    expect(again.status).toBe(400);
    expect(again.json.error).toMatchObject({ code: "invalid_request", details: { field: "meta.og_image", media_id: square.id } });
  });
});
