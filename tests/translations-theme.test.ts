import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { publishedTranslations, themes, translations } from "../db/schema";
import { harness, keyWith, seedNode, seedProject } from "./helpers";

describe("translations admin API", async () => {
  const h = await harness();

  test("upsert, read, list and delete a translation with block overrides", async () => {
    const p = await seedProject(h, { locales: ["en", "fr", "de"] });
    const n = await seedNode(h, p.slug, { slug: "page", blocks: [{ type: "text", data: { text: "Hello", style: { bold: true } } }] });
    const blockId = n.blocks[0].id;
    const put = await h.request("PUT", `/admin/p/${p.slug}/nodes/${n.id}/translations/fr`, {
      body: { meta: { title: "Bonjour", slug: "page-fr" }, blocks: { [blockId]: { text: "Salut" } }, status: "published" },
    });
    expect(put.status).toBe(200);
    expect(put.json.data).toMatchObject({ locale: "fr", meta: { title: "Bonjour", slug: "page-fr" }, blocks: { [blockId]: { text: "Salut" } }, status: "published", state: "published" });
    // A draft write over a published translation changes its working copy only: still published, state changed (issue 37).
    const again = await h.request("PUT", `/admin/p/${p.slug}/nodes/${n.id}/translations/FR`, { body: { meta: { title: "Bonjour 2" }, status: "draft" } });
    expect(again.json.data.id).toBe(put.json.data.id);
    expect(again.json.data).toMatchObject({ status: "published", state: "changed" });
    expect((await h.request("GET", `/admin/p/${p.slug}/nodes/${n.id}/translations/fr`)).json.data.meta.title).toBe("Bonjour 2");
    expect((await h.request("GET", `/admin/p/${p.slug}/nodes/${n.id}/translations`)).json.data).toHaveLength(1);
    expect((await h.request("GET", `/admin/p/${p.slug}/nodes/${n.id}/translations/de`)).status).toBe(404);
    expect((await h.request("DELETE", `/admin/p/${p.slug}/nodes/${n.id}/translations/fr`)).status).toBe(204);
    expect(await h.deps.db.select().from(translations).where(eq(translations.nodeId, n.id))).toHaveLength(0);
    // Its published version went with it.
    expect(await h.deps.db.select().from(publishedTranslations).where(eq(publishedTranslations.nodeId, n.id))).toHaveLength(0);
  });

  test("translation meta keeps its SEO fields (canonical, robots, noindex) and refuses unknown ones", async () => {
    const p = await seedProject(h);
    const n = await seedNode(h, p.slug, { slug: "seo" });
    const meta = { title: "t", canonical: "https://example.com/fr/seo", robots: "noindex,nofollow", noindex: true };
    const refused = await h.request("PUT", `/admin/p/${p.slug}/nodes/${n.id}/translations/fr`, { body: { meta: { ...meta, unknown_field: 1 } } });
    expect([refused.status, refused.json.error.code, refused.json.error.details.fields]).toEqual([400, "invalid_input", ["meta.unknown_field"]]);
    expect(await h.deps.db.select().from(translations).where(eq(translations.nodeId, n.id))).toEqual([]);
    const r = await h.request("PUT", `/admin/p/${p.slug}/nodes/${n.id}/translations/fr`, { body: { meta } });
    expect(r.status).toBe(200);
    expect(r.json.data.meta).toEqual(meta);
    const [row] = await h.deps.db.select().from(translations).where(eq(translations.nodeId, n.id));
    expect(row!.meta).toEqual(meta);
  });

  test("a locale outside the project is 400 invalid_locale and writes nothing", async () => {
    const p = await seedProject(h);
    const n = await seedNode(h, p.slug, { slug: "page", blocks: [{ type: "text" }] });
    for (const loc of ["es", "xx-!!", "en"]) {
      const r = await h.request("PUT", `/admin/p/${p.slug}/nodes/${n.id}/translations/${loc}`, { body: { meta: { title: "x" } } });
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe("invalid_locale");
    }
    const unknownBlock = await h.request("PUT", `/admin/p/${p.slug}/nodes/${n.id}/translations/fr`, { body: { blocks: { [crypto.randomUUID()]: { text: "x" } } } });
    expect(unknownBlock.status).toBe(400);
    const badSlug = await h.request("PUT", `/admin/p/${p.slug}/nodes/${n.id}/translations/fr`, { body: { meta: { slug: "Not OK" } } });
    expect(badSlug.status).toBe(400);
    expect(await h.deps.db.select().from(translations).where(eq(translations.nodeId, n.id))).toHaveLength(0);
  });
});

describe("theme admin API", async () => {
  const h = await harness();

  test("read defaults, partial update, validation", async () => {
    const p = await seedProject(h);
    const empty = await h.request("GET", `/admin/p/${p.slug}/theme`);
    expect(empty.json.data).toEqual({ logo_url: null, favicon_url: null, accent_color: null, name_override: null });
    const put = await h.request("PUT", `/admin/p/${p.slug}/theme`, { body: { accent_color: "#AABBCC", logo_url: "https://cdn.example.com/logo.png" } });
    expect(put.status).toBe(200);
    expect(put.json.data).toEqual({ logo_url: "https://cdn.example.com/logo.png", favicon_url: null, accent_color: "#aabbcc", name_override: null });
    const patch = await h.request("PATCH", `/admin/p/${p.slug}/theme`, { body: { name_override: "Brand", logo_url: null } });
    expect(patch.json.data).toEqual({ logo_url: null, favicon_url: null, accent_color: "#aabbcc", name_override: "Brand" });
    for (const body of [{ accent_color: "blue" }, { accent_color: "#abc" }, { logo_url: "javascript:alert(1)" }, { favicon_url: "not a url" }]) {
      const r = await h.request("PUT", `/admin/p/${p.slug}/theme`, { body });
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe("invalid_request");
    }
    const [row] = await h.deps.db.select().from(themes).where(eq(themes.projectId, p.id));
    expect(row).toMatchObject({ accentColor: "#aabbcc", nameOverride: "Brand", logoUrl: null });
  });

  test("the theme needs theme:write or projects:write, never content:write alone (issue 37)", async () => {
    const p = await seedProject(h);
    const editor = await keyWith(h, ["projects:read", "content:read", "content:write", "content:publish"]);
    for (const method of ["PUT", "PATCH"]) {
      const denied = await h.request(method, `/admin/p/${p.slug}/theme`, { key: editor, body: { accent_color: "#000000" } });
      expect({ status: denied.status, code: denied.json.error.code }).toEqual({ status: 403, code: "insufficient_scope" });
    }
    expect(await h.deps.db.select().from(themes).where(eq(themes.projectId, p.id))).toEqual([]);
    for (const [scope, color] of [
      ["theme:write", "#111111"],
      ["projects:write", "#222222"],
    ] as const) {
      const r = await h.request("PATCH", `/admin/p/${p.slug}/theme`, { key: await keyWith(h, ["projects:read", scope]), body: { accent_color: color } });
      expect({ scope, status: r.status, accent: r.json.data?.accent_color }).toEqual({ scope, status: 200, accent: color });
    }
  });
});
