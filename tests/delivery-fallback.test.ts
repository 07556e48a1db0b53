// Fallback chains on delivery (docs/translation.md#fallback-chains): a field a locale's published
// translation lacks comes from the first chain locale that has it published, else from the base
// content, and the answer names where (`fallback`); `?fallback=none` answers only what the locale has.
import { beforeAll, describe, expect, test } from "bun:test";
import { countingDb, get, translate, until } from "./delivery.helpers";
import { setModel } from "./delivery-model.helpers";
import { harness, seedNode, seedProject, testDb } from "./helpers";

const MODEL = {
  block_types: [{ name: "text", description: "", schema: { type: "object", properties: { text: { type: "string", translatable: true }, style: { type: "string" } } } }],
  node_types: [
    {
      name: "post",
      description: "",
      fields: {
        type: "object",
        properties: {
          author: { type: "string" },
          summary: { type: "string", translatable: true },
          subtitle: { type: "string", translatable: true },
          tags: { type: "array", items: { type: "string" }, translatable: true },
          related: { type: "string", format: "node" },
        },
      },
      blocks: null,
      children: null,
    },
  ],
};

describe("delivery: fallback chains", async () => {
  const h = await harness();
  const db = h.deps.db;
  // de-AT → de → en, configured; fr falls back to the default locale alone.
  const p = await seedProject(h, { locales: ["en", "de", "de-AT", "fr"], public_base_url: "https://www.example.com" });
  const api = (rest: string): string => `/api/p/${p.slug}${rest}`;
  const settings = async (ref: string, fallbacks: Record<string, string[]>): Promise<void> => {
    const res = await h.request("PATCH", `/admin/projects/${ref}`, { body: { fallbacks } });
    expect(res.status).toBe(200);
  };
  let docs: any;
  let guide: any;
  let b1: string;
  let b2: string;

  beforeAll(async () => {
    await setModel(db, p.id, MODEL);
    await settings(p.slug, { "de-AT": ["de", "en"] });
    docs = await seedNode(h, p.slug, { slug: "docs", title: "Docs" }, true);
    await translate(h, p.slug, docs.id, "de", { meta: { title: "Dokumente", slug: "dokumente" } });
    guide = await seedNode(
      h,
      p.slug,
      {
        slug: "guide",
        title: "Guide",
        type: "post",
        parent_id: docs.id,
        seo: { description: "An English guide" },
        fields: { author: "Ada", summary: "Summary EN", subtitle: "Subtitle EN", tags: ["one", "two"], related: docs.id },
        blocks: [
          { type: "text", data: { text: "one EN", style: "lead" } },
          { type: "text", data: { text: "two EN" } },
        ],
      },
      true,
    );
    [b1, b2] = guide.blocks.map((b: { id: string }) => b.id);
    await translate(h, p.slug, guide.id, "de", {
      meta: { title: "Anleitung", slug: "anleitung", description: "Eine Anleitung" },
      fields: { summary: "Zusammenfassung DE", tags: ["eins", "zwei"] },
      blocks: { [b1]: { text: "eins DE" } },
    });
    await translate(h, p.slug, guide.id, "de-AT", { meta: { title: "Anleitung (AT)", slug: "anleitung-at" }, blocks: { [b2]: { text: "zwoa AT" } } });
  });

  test("de-AT → de → en: each missing field from the first chain locale that has it, named with its locale", async () => {
    const res = await get(h, api(`/nodes/${guide.id}?locale=de-AT`));
    expect(res.status).toBe(200);
    const d = res.json.data;
    expect(d).toMatchObject({ title: "Anleitung (AT)", locale: "de-AT", translated: true, slug: "anleitung-at" });
    expect(d.fields).toEqual({
      author: "Ada",
      summary: "Zusammenfassung DE",
      subtitle: "Subtitle EN",
      tags: ["eins", "zwei"],
      related: { id: docs.id, path: "docs", title: "Dokumente", type: "page" },
    });
    expect(d.blocks.map((b: { data: unknown }) => b.data)).toEqual([{ text: "eins DE", style: "lead" }, { text: "zwoa AT" }]);
    expect(d.seo.og.description).toBe("Eine Anleitung");
    expect(d.fallback).toEqual({
      "/seo/description": "de",
      "/fields/summary": "de",
      "/fields/subtitle": "en",
      "/fields/tags/0": "de",
      "/fields/tags/1": "de",
      [`/blocks/${b1}/data/text`]: "de",
    });
    // The page is the de-AT version: its own URL, canonical to itself; breadcrumb titles follow the chain, paths never do.
    expect(d.seo.canonical).toBe("https://www.example.com/de-AT/docs/anleitung-at");
    expect(d.seo.og.locale).toBe("de_AT");
    expect(d.seo.breadcrumbs.map((b: { title: string }) => b.title)).toEqual(["Dokumente", "Anleitung (AT)"]);
    expect(d.path).toBe("docs/anleitung-at");
    // The same by path, and from the translations read.
    const byPath = await get(h, api("/nodes/by-path/docs/anleitung-at?locale=de-AT"));
    expect(byPath.json.data).toEqual(d);
    const tr = await get(h, api(`/translations/nodes/${guide.id}?locale=de-AT`));
    expect(tr.json.data).toEqual(d);
  });

  test("a locale falling back to the default locale alone names what came from the base content; the default locale names nothing", async () => {
    const de = await get(h, api(`/nodes/${guide.id}?locale=de`));
    expect(de.json.data.fields.subtitle).toBe("Subtitle EN");
    expect(de.json.data).toMatchObject({ title: "Anleitung", translated: true });
    expect(de.json.data.fallback).toEqual({ "/fields/subtitle": "en", [`/blocks/${b2}/data/text`]: "en" });
    // fr has no translation of the node: every unit is the base content's, named so.
    const fr = await get(h, api(`/nodes/${guide.id}?locale=fr`));
    expect(fr.json.data).toMatchObject({ title: "Guide", translated: false, locale: "fr" });
    expect(fr.json.data.fallback).toEqual({
      "/title": "en",
      "/seo/description": "en",
      "/fields/summary": "en",
      "/fields/subtitle": "en",
      "/fields/tags/0": "en",
      "/fields/tags/1": "en",
      [`/blocks/${b1}/data/text`]: "en",
      [`/blocks/${b2}/data/text`]: "en",
    });
    const en = await get(h, api(`/nodes/${guide.id}`));
    expect("fallback" in en.json.data).toBe(false);
    expect(en.json.data.title).toBe("Guide");
    const enExplicit = await get(h, api(`/nodes/${guide.id}?locale=en`));
    expect("fallback" in enExplicit.json.data).toBe(false);
  });

  test("a fully translated page answers exactly as without a chain", async () => {
    const full = await seedNode(h, p.slug, { slug: "full", title: "Full", type: "post", fields: { author: "Ada", summary: "S" }, blocks: [{ type: "text", data: { text: "t" } }] }, true);
    await translate(h, p.slug, full.id, "de", { meta: { title: "Voll DE" }, fields: { summary: "S DE" } });
    await translate(h, p.slug, full.id, "de-AT", { meta: { title: "Voll AT" }, fields: { summary: "S AT" }, blocks: { [full.blocks[0].id]: { text: "t AT" } } });
    const chained = await get(h, api(`/nodes/${full.id}?locale=de-AT`));
    expect("fallback" in chained.json.data).toBe(false);
    await settings(p.slug, { "de-AT": [] });
    const plain = await get(h, api(`/nodes/${full.id}?locale=de-AT`));
    await settings(p.slug, { "de-AT": ["de", "en"] });
    expect(plain.text).toBe(chained.text);
    expect(plain.headers.get("etag")).toBe(chained.headers.get("etag"));
  });

  test("a field missing in de-AT and de comes from the base content, named with the default locale", async () => {
    const res = await get(h, api(`/nodes/${guide.id}?locale=de-AT`));
    expect(res.json.data.fields.subtitle).toBe("Subtitle EN");
    expect(res.json.data.fallback["/fields/subtitle"]).toBe("en");
  });

  test("?fallback=none: only what the locale has; what it lacks is left out and named in missing", async () => {
    const res = await get(h, api(`/nodes/${guide.id}?locale=de-AT&fallback=none`));
    expect(res.status).toBe(200);
    const d = res.json.data;
    expect(d.title).toBe("Anleitung (AT)");
    expect(d.fields).toEqual({ author: "Ada", related: { id: docs.id, path: "docs", title: "Docs", type: "page" } });
    expect(d.blocks.map((b: { data: unknown }) => b.data)).toEqual([{ style: "lead" }, { text: "zwoa AT" }]);
    expect([...d.missing].sort()).toEqual(["/seo/description", "/fields/summary", "/fields/subtitle", "/fields/tags/0", "/fields/tags/1", `/blocks/${b1}/data/text`].sort());
    expect("fallback" in d).toBe(false);
    // A description of its own text, never the base one.
    expect(d.seo.og.description).toBe("zwoa AT");
    // Cached apart from the chain's answer, with its own ETag; the chain's answer is unchanged.
    const chained = await get(h, api(`/nodes/${guide.id}?locale=de-AT`));
    expect(chained.json.data.fields.summary).toBe("Zusammenfassung DE");
    expect(chained.headers.get("etag")).not.toBe(res.headers.get("etag"));
    const again = await get(h, api(`/nodes/${guide.id}?locale=de-AT&fallback=none`));
    expect(again.text).toBe(res.text);
    // A title the translation lacks is null.
    const bare = await seedNode(h, p.slug, { slug: "bare", title: "Bare" }, true);
    await translate(h, p.slug, bare.id, "de-AT", { meta: { slug: "nackt" } });
    const untitled = await get(h, api(`/nodes/${bare.id}?locale=de-AT&fallback=none`));
    expect(untitled.json.data).toMatchObject({ title: null, missing: ["/title"] });
  });

  test("?fallback=none: a locale without its translation is 404; the default locale answers whole; other values are 400", async () => {
    expect((await get(h, api(`/nodes/${guide.id}?locale=fr&fallback=none`))).status).toBe(404);
    expect((await get(h, api(`/nodes/by-path/docs/guide?locale=fr&fallback=none`))).status).toBe(404);
    expect((await get(h, api(`/translations/nodes/${guide.id}?locale=fr&fallback=none`))).status).toBe(404);
    const en = await get(h, api(`/nodes/${guide.id}?fallback=none`));
    const plain = await get(h, api(`/nodes/${guide.id}`));
    expect(en.json.data).toEqual({ ...plain.json.data, missing: [] });
    const bad = await get(h, api(`/nodes/${guide.id}?locale=de-AT&fallback=chain`));
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({ code: "invalid_request", details: { field: "fallback" } });
    expect((await get(h, api(`/nodes/${guide.id}?fallback=none&fallback=none`))).status).toBe(400);
    // Empty: the chain, as when left out.
    expect((await get(h, api(`/nodes/${guide.id}?locale=de-AT&fallback=`))).json.data.fallback).toBeDefined();
  });

  test("publishing a chain locale's translation changes the answers that fell back to it", async () => {
    const before = await get(h, api(`/nodes/${guide.id}?locale=de-AT`));
    expect(before.json.data.fields.summary).toBe("Zusammenfassung DE");
    await translate(h, p.slug, guide.id, "de", {
      meta: { title: "Anleitung", slug: "anleitung", description: "Eine Anleitung" },
      fields: { summary: "Neue Zusammenfassung", tags: ["eins", "zwei"], subtitle: "Untertitel DE" },
      blocks: { [b1]: { text: "eins DE" } },
    });
    const after = await get(h, api(`/nodes/${guide.id}?locale=de-AT`));
    expect(after.json.data.fields).toMatchObject({ summary: "Neue Zusammenfassung", subtitle: "Untertitel DE" });
    expect(after.json.data.fallback["/fields/subtitle"]).toBe("de");
    expect(after.headers.get("etag")).not.toBe(before.headers.get("etag"));
    // The server's front (hot reads answered before routing) holds the new answer, and the none answer apart from it.
    const url = `http://localhost${api(`/nodes/${guide.id}?locale=de-AT`)}`;
    // On PostgreSQL a read may re-check the version until the engine's LISTEN is up: read until the front answers alone.
    const { value: hot } = await until(
      async () => (await get(h, api(`/nodes/${guide.id}?locale=de-AT`)), h.front.answer(new Request(url))),
      (r) => r !== null,
      5000,
    );
    expect(hot).toBeInstanceOf(Response);
    expect((await (hot as Response).json()).data.fields.summary).toBe("Neue Zusammenfassung");
    expect(h.front.answer(new Request(`${url}&fallback=none`))).toBeNull(); // not read since the write: a miss, left to the app
  });

  test("a draft (unpublished) translation in a chain locale is never used", async () => {
    const page = await seedNode(h, p.slug, { slug: "drafted", title: "Drafted", type: "post", fields: { summary: "Base summary" } }, true);
    await translate(h, p.slug, page.id, "de", { meta: { title: "Entwurf" }, fields: { summary: "Entwurf DE" }, status: "draft" });
    await translate(h, p.slug, page.id, "de-AT", { meta: { title: "Seite AT" } });
    const res = await get(h, api(`/nodes/${page.id}?locale=de-AT`));
    expect(res.json.data.fields.summary).toBe("Base summary");
    expect(res.json.data.fallback).toEqual({ "/fields/summary": "en" });
    // A published chain translation with unpublished changes: its published version is used.
    const changed = await h.request("PUT", `/admin/p/${p.slug}/nodes/${guide.id}/translations/de`, {
      body: { meta: { title: "Anleitung", description: "Eine Anleitung" }, fields: { summary: "Nur im Entwurf" }, blocks: {} },
    });
    expect(changed.json.data.state).toBe("changed");
    const guideAT = await get(h, api(`/nodes/${guide.id}?locale=de-AT`));
    expect(guideAT.json.data.fields.summary).toBe("Neue Zusammenfassung");
  });

  test("without configuration, RFC 4647 lookup: de-AT → de → the default locale; a page de-AT lacks shows de's version", async () => {
    const q = await seedProject(h, { locales: ["en", "de", "de-AT"], public_base_url: "https://q.example.com" });
    const node = await seedNode(h, q.slug, { slug: "about", title: "About", seo: { description: "About us" }, blocks: [{ type: "text", data: { text: "Hello" } }] }, true);
    const block = node.blocks[0].id;
    await translate(h, q.slug, node.id, "de", { meta: { title: "Über uns", slug: "ueber-uns" }, blocks: { [block]: { text: "Hallo" } } });
    const res = await get(h, `/api/p/${q.slug}/nodes/${node.id}?locale=de-AT`);
    const d = res.json.data;
    expect(d).toMatchObject({ title: "Über uns", translated: false, locale: "de-AT", path: "about" });
    expect(d.blocks[0].data).toEqual({ text: "Hallo" });
    // No de-AT version: the answer shows de's, canonical to it, never indexable itself.
    expect(d.seo.canonical).toBe("https://q.example.com/de/ueber-uns");
    expect(d.seo.og.locale).toBe("de");
    expect(d.seo.hreflang).toEqual([]);
    // No description in de: as on any translated page, its first text rather than the base description (so not named).
    expect(d.seo.og.description).toBe("Hallo");
    expect(d.fallback).toEqual({ "/title": "de", [`/blocks/${block}/data/text`]: "de" });
    // An empty chain configured: straight to the default locale, each unit named with it.
    await settings(q.slug, { "de-AT": [] });
    const plain = await get(h, `/api/p/${q.slug}/nodes/${node.id}?locale=de-AT`);
    expect(plain.json.data).toMatchObject({ title: "About", translated: false });
    expect(plain.json.data.fallback).toEqual({ "/title": "en", "/seo/description": "en", [`/blocks/${block}/data/text`]: "en" });
    expect(plain.json.data.seo.canonical).toBe("https://q.example.com/about");
  });

  test("a chained read is one statement, as any other read (no extra round trip)", async () => {
    const counted = countingDb((await testDb()).db);
    const cold = await harness({ DELIVERY_CACHE_ENTRIES: "0", DELIVERY_VERSION_CHECK_MS: "60000" }, { db: counted.db });
    const statements = async (path: string): Promise<number> => {
      expect((await get(cold, path)).status).toBe(200);
      const before = counted.calls();
      expect((await get(cold, path)).status).toBe(200);
      return counted.calls() - before;
    };
    expect(await statements(api(`/nodes/${guide.id}?locale=de`))).toBe(1);
    expect(await statements(api(`/nodes/${guide.id}?locale=de-AT`))).toBe(1);
    expect(await statements(api("/nodes/by-path/docs/anleitung-at?locale=de-AT"))).toBe(1);
    expect(await statements(api(`/nodes/${guide.id}?locale=de-AT&fallback=none`))).toBe(1);
  });

  test("another project's settings never matter", async () => {
    // Same locales and content as a chained project, but its own chain says de-AT → the default locale.
    const r = await seedProject(h, { locales: ["en", "de", "de-AT"] });
    await settings(r.slug, { "de-AT": [] });
    const s = await seedProject(h, { locales: ["en", "de", "de-AT"] });
    await settings(s.slug, { "de-AT": ["de"] });
    for (const ref of [r.slug, s.slug]) {
      const n = await seedNode(h, ref, { slug: "home", title: "Home" }, true);
      await translate(h, ref, n.id, "de", { meta: { title: "Startseite" } });
    }
    const inR = await get(h, `/api/p/${r.slug}/nodes/by-path/home?locale=de-AT`);
    const inS = await get(h, `/api/p/${s.slug}/nodes/by-path/home?locale=de-AT`);
    expect(inR.json.data.title).toBe("Home");
    expect(inR.json.data.fallback).toEqual({ "/title": "en" });
    expect(inS.json.data.title).toBe("Startseite");
    expect(inS.json.data.fallback).toEqual({ "/title": "de" });
    // And the first project's chain is its own still.
    expect((await get(h, api(`/nodes/${guide.id}?locale=de-AT`))).json.data.fallback["/fields/subtitle"]).toBe("de");
  });
});
