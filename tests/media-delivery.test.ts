// Media in content (issue 26): a field or block property of format `media` holds a media id;
// delivery expands it to { id, url, width, height, alt, srcset, placeholder } with alt in the
// request's locale, and a change of the item's alt text reaches delivery at once.
import { beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { get, translate } from "./delivery.helpers";
import { setModel } from "./delivery-model.helpers";
import { harness, seedNode, seedProject, type TestHarness } from "./helpers";
import { twoColourPng, uploadForm } from "./media.helpers";

const MODEL = {
  block_types: [{ name: "figure", description: "", schema: { type: "object", properties: { image: { type: "string", format: "media" }, caption: { type: "string", translatable: true } } } }],
  node_types: [
    {
      name: "post",
      description: "",
      fields: { type: "object", properties: { hero: { type: "string", format: "media" }, gallery: { type: "array", items: { type: "string", format: "media" } } } },
      blocks: null,
      children: null,
    },
  ],
};

describe("delivery: media references", () => {
  let h: TestHarness;
  let slug: string;
  let item: any;
  let svg: any;
  let post: any;

  beforeAll(async () => {
    h = await harness({ DATA_DIR: mkdtempSync(join(tmpdir(), "media-delivery-")), MEDIA_WIDTHS: "320,640,1024,2048" });
    const p = await seedProject(h);
    slug = p.slug;
    await setModel(h.deps.db, p.id, MODEL);
    item = (await uploadForm(h, slug, await twoColourPng(1280, 320), "hero.png", { alt: "A red and blue banner" })).json.data;
    await h.request("PATCH", `/admin/p/${slug}/media/${item.id}`, { body: { alt: { fr: "Une bannière rouge et bleue" } } });
    const logo = new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 40 20"><rect width="40" height="20"/></svg>');
    svg = (await uploadForm(h, slug, logo, "logo.svg", { alt: "Logo" })).json.data;
    post = await seedNode(
      h,
      slug,
      { slug: "hello", type: "post", fields: { hero: item.id, gallery: [svg.id, item.id] }, blocks: [{ type: "figure", data: { image: item.id, caption: "Banner" } }] },
      true,
    );
    await translate(h, slug, post.id, "fr", { meta: { title: "Bonjour" } });
  }, 120_000);

  test("expanded with alt in the request's locale, srcset of the configured widths up to the image's", async () => {
    const en = await get(h, `/api/p/${slug}/nodes/by-path/hello`);
    expect(en.status).toBe(200);
    const hero = en.json.data.fields.hero;
    expect(hero).toEqual({
      id: item.id,
      url: item.url,
      type: "image/png",
      width: 1280,
      height: 320,
      alt: "A red and blue banner",
      srcset: `${item.url}&w=320&fm=auto 320w, ${item.url}&w=640&fm=auto 640w, ${item.url}&w=1024&fm=auto 1024w`,
      placeholder: item.placeholder,
    });
    expect(en.json.data.fields.gallery.map((g: any) => g.id)).toEqual([svg.id, item.id]);
    expect(en.json.data.fields.gallery[0]).toMatchObject({ type: "image/svg+xml", width: 40, height: 20, alt: "Logo", srcset: null });
    expect(en.json.data.blocks[0].data.image.alt).toBe("A red and blue banner");
    const fr = await get(h, `/api/p/${slug}/nodes/by-path/hello?locale=fr`);
    expect(fr.json.data.fields.hero.alt).toBe("Une bannière rouge et bleue");
    expect(fr.json.data.blocks[0].data.image.alt).toBe("Une bannière rouge et bleue");
    // A srcset entry is served.
    const first = hero.srcset.split(", ")[0].split(" ")[0];
    const res = await h.app.handle(new Request(first, { headers: { accept: "image/webp" } }));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/webp");
  });

  test("a change of alt text reaches delivery at once; a deleted item answers null", async () => {
    expect((await h.request("PATCH", `/admin/p/${slug}/media/${item.id}`, { body: { alt: { en: "Banner, red and blue" } } })).status).toBe(200);
    const en = await get(h, `/api/p/${slug}/nodes/by-path/hello`);
    expect(en.json.data.fields.hero.alt).toBe("Banner, red and blue");
    expect((await h.request("DELETE", `/admin/p/${slug}/media/${svg.id}?force=true`)).status).toBe(204);
    const after = await get(h, `/api/p/${slug}/nodes/by-path/hello`);
    expect(after.json.data.fields.gallery[0]).toBeNull();
    const entries = await get(h, `/api/p/${slug}/nodes`);
    const listed = entries.json.data.find((n: any) => n.id === post.id);
    expect(listed.fields.hero.alt).toBe("Banner, red and blue");
  });
});
