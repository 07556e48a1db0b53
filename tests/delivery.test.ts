import { beforeAll, describe, expect, test } from "bun:test";
import { deepMerge } from "../src/lib/merge";
import { get, patchNode, translate } from "./delivery.helpers";
import { harness, seedNode, seedProject, type TestHarness } from "./helpers";

const BASE = "https://www.example.com";
const NODE_KEYS = ["blocks", "fields", "id", "locale", "parent_id", "path", "seo", "slug", "title", "translated", "type"];
const SEO_KEYS = ["breadcrumbs", "canonical", "hreflang", "jsonld", "og", "robots", "twitter"];

describe("delivery: renderable nodes", async () => {
  const h: TestHarness = await harness();
  let p: { id: string; slug: string };
  let about: any;
  let team: any;
  let card: string;
  const api = (rest: string): string => `/api/p/${p.slug}${rest}`;

  beforeAll(async () => {
    p = await seedProject(h, { locales: ["en", "fr", "de"], public_base_url: BASE });
    about = await seedNode(
      h,
      p.slug,
      {
        slug: "about",
        title: "About us",
        blocks: [
          { type: "heading", data: { text: "Ignored: not a text block" } },
          { type: "text", data: { text: "<p>We **make**   things.</p>" } },
          { type: "image", data: { url: "/img/team.jpg", alt: "Team" } },
          { type: "card", data: { a: { x: 1, y: 2 }, list: [1, 2], s: "base" } },
        ],
      },
      true,
    );
    card = about.blocks[3].id;
    team = await seedNode(h, p.slug, { slug: "team", title: "Team", parent_id: about.id }, true);
    await translate(h, p.slug, about.id, "fr", {
      meta: { title: "À propos", slug: "a-propos", description: "Qui nous sommes" },
      blocks: { [card]: { a: { y: 3 }, list: [9] } },
    });
    await translate(h, p.slug, team.id, "fr", { meta: { title: "L'équipe" } });
    await translate(h, p.slug, about.id, "de", { meta: { title: "Über uns", slug: "ueber-uns" }, status: "draft" });
  });

  test("by-path in the default locale: exact shape and SEO from real data", async () => {
    const res = await get(h, api("/nodes/by-path/about"));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(Object.keys(res.json)).toEqual(["data"]);
    const d = res.json.data;
    expect(Object.keys(d).sort()).toEqual(NODE_KEYS);
    expect(d).toMatchObject({ id: about.id, parent_id: null, slug: "about", type: "page", title: "About us", locale: "en", path: "about", translated: false });
    expect(d.blocks.map((b: any) => Object.keys(b).sort())).toEqual(Array(4).fill(["data", "id", "order", "type"]));
    expect(d.blocks.map((b: any) => b.order)).toEqual([0, 1, 2, 3]);
    expect(d.blocks[3].data).toEqual({ a: { x: 1, y: 2 }, list: [1, 2], s: "base" });
    expect(Object.keys(d.seo).sort()).toEqual(SEO_KEYS);
    expect(d.seo.canonical).toBe(`${BASE}/about`);
    expect(d.seo.robots).toBe("index,follow");
    // description falls back to the first text block, markup removed; image to the first image block.
    expect(d.seo.og).toEqual({
      type: "website",
      title: "About us",
      description: "We make things.",
      image: `${BASE}/img/team.jpg`,
      url: `${BASE}/about`,
      locale: "en",
      site_name: p.slug,
    });
    expect(d.seo.twitter).toEqual({ card: "summary_large_image", title: "About us", description: "We make things.", image: `${BASE}/img/team.jpg` });
    // de has only a draft translation: not a version of this page.
    expect(d.seo.hreflang).toEqual([
      { locale: "en", href: `${BASE}/about` },
      { locale: "fr", href: `${BASE}/fr/a-propos` },
      { locale: "x-default", href: `${BASE}/about` },
    ]);
    expect(d.seo.breadcrumbs).toEqual([{ title: "About us", path: "about", href: `${BASE}/about` }]);
    expect(d.seo.jsonld["@context"]).toBe("https://schema.org");
    expect(d.seo.jsonld["@graph"]).toHaveLength(1);
    expect(d.seo.jsonld["@graph"][0]).toMatchObject({
      "@type": "WebPage",
      "@id": `${BASE}/about#webpage`,
      name: "About us",
      url: `${BASE}/about`,
      inLanguage: "en",
      description: "We make things.",
      image: `${BASE}/img/team.jpg`,
      isPartOf: { "@type": "WebSite", name: p.slug, url: `${BASE}/` },
      breadcrumb: { "@type": "BreadcrumbList", itemListElement: [{ "@type": "ListItem", position: 1, name: "About us", item: `${BASE}/about` }] },
    });
    expect(typeof d.seo.jsonld["@graph"][0].datePublished).toBe("string");
    expect(typeof d.seo.jsonld["@graph"][0].dateModified).toBe("string");
  });

  test("a translated locale: localised slug path, merged meta and deep-merged block overrides", async () => {
    const res = await get(h, api("/nodes/by-path/a-propos?locale=fr"));
    expect(res.status).toBe(200);
    const d = res.json.data;
    expect(d).toMatchObject({ id: about.id, slug: "a-propos", title: "À propos", locale: "fr", path: "a-propos", translated: true });
    expect(d.blocks[3].data).toEqual({ a: { x: 1, y: 3 }, list: [9], s: "base" });
    expect(d.blocks[1].data).toEqual({ text: "<p>We **make**   things.</p>" });
    expect(d.seo.canonical).toBe(`${BASE}/fr/a-propos`);
    expect(d.seo.og).toMatchObject({ title: "À propos", description: "Qui nous sommes", url: `${BASE}/fr/a-propos`, locale: "fr" });
    expect(d.seo.jsonld["@graph"][0]).toMatchObject({ name: "À propos", inLanguage: "fr", url: `${BASE}/fr/a-propos` });
    expect(d.seo.hreflang).toEqual([
      { locale: "en", href: `${BASE}/about` },
      { locale: "fr", href: `${BASE}/fr/a-propos` },
      { locale: "x-default", href: `${BASE}/about` },
    ]);
    // The base path of a translated node is not an alias in that locale.
    const base = await get(h, api("/nodes/by-path/about?locale=fr"));
    expect(base.status).toBe(404);
    expect(base.json).toEqual({ error: { code: "not_found", message: "node not found" } });
  });

  test("children inherit the ancestors' localised slugs; breadcrumbs are localised", async () => {
    const res = await get(h, api("/nodes/by-path/a-propos/team?locale=fr"));
    expect(res.status).toBe(200);
    const d = res.json.data;
    expect(d).toMatchObject({ id: team.id, parent_id: about.id, slug: "team", title: "L'équipe", path: "a-propos/team", translated: true });
    expect(d.seo.breadcrumbs).toEqual([
      { title: "À propos", path: "a-propos", href: `${BASE}/fr/a-propos` },
      { title: "L'équipe", path: "a-propos/team", href: `${BASE}/fr/a-propos/team` },
    ]);
    expect(d.seo.hreflang).toContainEqual({ locale: "en", href: `${BASE}/about/team` });
    expect((await get(h, api("/nodes/by-path/about/team?locale=fr"))).status).toBe(404);
    const en = await get(h, api("/nodes/by-path/about/team"));
    expect(en.json.data.seo.breadcrumbs.map((b: any) => b.path)).toEqual(["about", "about/team"]);
  });

  test("a translated slug that collides with a sibling's base slug wins in that locale", async () => {
    const plain = await seedNode(h, p.slug, { slug: "news", title: "News" }, true);
    const other = await seedNode(h, p.slug, { slug: "actus", title: "Actus" }, true);
    await translate(h, p.slug, other.id, "fr", { meta: { slug: "news" } });
    expect((await get(h, api("/nodes/by-path/news?locale=fr"))).json.data.id).toBe(other.id);
    expect((await get(h, api("/nodes/by-path/news"))).json.data.id).toBe(plain.id);
    expect((await get(h, api("/nodes/by-path/actus?locale=fr"))).status).toBe(404);
  });

  test("a locale without a published translation serves the base content, translated: false", async () => {
    const res = await get(h, api("/nodes/by-path/about?locale=de"));
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({ title: "About us", slug: "about", path: "about", locale: "de", translated: false });
    expect(res.json.data.blocks[3].data).toEqual({ a: { x: 1, y: 2 }, list: [1, 2], s: "base" });
    // A fallback is canonical to the version it shows (decisions.md), and names no hreflang cluster.
    expect(res.json.data.seo.canonical).toBe(`${BASE}/about`);
    expect(res.json.data.seo.hreflang).toEqual([]);
    // the draft translation's slug does not route
    expect((await get(h, api("/nodes/by-path/ueber-uns?locale=de"))).status).toBe(404);
    const def = await get(h, api("/nodes/by-path/about?locale=en"));
    expect(def.json.data.translated).toBe(false);
  });

  test("locale is matched case-insensitively; an unknown or malformed locale is 400 invalid_locale", async () => {
    expect((await get(h, api("/nodes/by-path/a-propos?locale=FR"))).json.data.locale).toBe("fr");
    for (const bad of ["es", "!!", "x".repeat(300)]) {
      for (const path of [`/nodes/by-path/about?locale=${bad}`, `/nodes/${about.id}?locale=${bad}`, `/translations/nodes/${about.id}?locale=${bad}`]) {
        const res = await get(h, api(path));
        expect(res.status).toBe(400);
        expect(res.json.error.code).toBe("invalid_locale");
      }
    }
    const twice = await get(h, api("/nodes/by-path/about?locale=en&locale=fr"));
    expect(twice.status).toBe(400);
    expect(twice.json.error.code).toBe("invalid_request");
  });

  test("by id gives the same node as by path, with ref as id or slug", async () => {
    const byPath = await get(h, api("/nodes/by-path/a-propos/team?locale=fr"));
    const byId = await get(h, api(`/nodes/${team.id}?locale=fr`));
    expect(byId.status).toBe(200);
    expect(byId.json).toEqual(byPath.json);
    const viaProjectId = await get(h, `/api/p/${p.id}/nodes/${team.id}?locale=fr`);
    expect(viaProjectId.json).toEqual(byPath.json);
    expect((await get(h, `/api/p/${p.id.toUpperCase()}/nodes/${team.id.toUpperCase()}`)).json.data.id).toBe(team.id);
  });

  test("absent nodes: 404 not_found with one body, whatever the shape of the id or path", async () => {
    const expected = { error: { code: "not_found", message: "node not found" } };
    for (const path of [
      `/nodes/00000000-0000-7000-8000-000000000000`,
      `/nodes/not-a-uuid`,
      `/nodes/by-path/nope`,
      `/nodes/by-path/about/nope`,
      `/nodes/by-path/about//team`,
      `/nodes/by-path/`,
      `/nodes/by-path`,
      `/nodes/by-path/${"a/".repeat(70)}x`,
    ]) {
      const res = await get(h, api(path));
      expect(res.status).toBe(404);
      expect(res.json).toEqual(expected);
    }
    // A trailing slash names the same node.
    expect((await get(h, api("/nodes/by-path/about/"))).json.data.id).toBe(about.id);
  });

  test("an unknown project or route is 404", async () => {
    const res = await get(h, "/api/p/no-such-project/nodes/by-path/about");
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe("not_found");
    expect((await get(h, "/api/p/NOT A SLUG/theme")).status).toBe(404);
    const route = await get(h, api("/unknown/route"));
    expect(route.status).toBe(404);
    expect(route.json.error.code).toBe("not_found");
  });

  test("node SEO fields override the fallbacks; noindex and articles", async () => {
    const n = await seedNode(
      h,
      p.slug,
      {
        slug: "seo-page",
        title: "SEO page",
        seo: { description: "Own description", canonical: "https://canonical.example/x", robots: "noindex,nofollow", og_image: "https://cdn.example/og.png" },
        blocks: [{ type: "text", data: { text: "not the description" } }],
      },
      true,
    );
    const d = (await get(h, api("/nodes/by-path/seo-page"))).json.data;
    expect(d.seo.canonical).toBe("https://canonical.example/x");
    expect(d.seo.robots).toBe("noindex,nofollow");
    expect(d.seo.og).toMatchObject({ description: "Own description", image: "https://cdn.example/og.png", url: "https://canonical.example/x" });
    await patchNode(h, p.slug, n.id, { seo: { noindex: true }, type: "entry" });
    const after = (await get(h, api("/nodes/by-path/seo-page"))).json.data;
    expect(after.seo.robots).toBe("noindex,follow");
    expect(after.seo.canonical).toBe(`${BASE}/seo-page`);
    expect(after.seo.og.description).toBe("not the description");
    expect(after.seo.twitter.card).toBe("summary");
    expect(after.seo.jsonld["@graph"].map((n: any) => n["@type"])).toEqual(["WebPage", "Article"]);
    expect(after.seo.jsonld["@graph"][1]).toMatchObject({ "@type": "Article", headline: "SEO page" });
    expect(after.seo.og.type).toBe("article");
  });

  test("a long first text block is cut at a word boundary for the description", async () => {
    const words = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");
    await seedNode(h, p.slug, { slug: "long-text", title: "Long", blocks: [{ type: "paragraph", data: { body: words } }] }, true);
    const desc: string = (await get(h, api("/nodes/by-path/long-text"))).json.data.seo.og.description;
    expect(desc.length).toBeLessThanOrEqual(160);
    expect(desc.endsWith("…")).toBe(true);
    expect(words.startsWith(desc.slice(0, -1))).toBe(true);
  });

  test("without public_base_url every URL is a site-relative path", async () => {
    const q = await seedProject(h, { locales: ["en", "fr"] });
    const parent = await seedNode(h, q.slug, { slug: "docs", title: "Docs" }, true);
    const child = await seedNode(h, q.slug, { slug: "start", title: "Start", parent_id: parent.id }, true);
    await translate(h, q.slug, child.id, "fr", { meta: { title: "Début", slug: "debut" } });
    const res = await get(h, `/api/p/${q.slug}/nodes/by-path/docs/debut?locale=fr`);
    expect(res.status).toBe(200);
    const seo = res.json.data.seo;
    expect(seo.canonical).toBe("/fr/docs/debut");
    expect(seo.hreflang).toEqual([
      { locale: "en", href: "/docs/start" },
      { locale: "fr", href: "/fr/docs/debut" },
      { locale: "x-default", href: "/docs/start" },
    ]);
    expect(seo.breadcrumbs.map((b: any) => b.href)).toEqual(["/fr/docs", "/fr/docs/debut"]);
    expect(seo.og.url).toBe("/fr/docs/debut");
    expect(seo.og.image).toBeNull();
    expect(seo.jsonld["@graph"][0].isPartOf.url).toBe("/");
    expect(res.text).not.toContain("undefined");
    expect(res.text).not.toContain("null/");
  });

  test("block overrides never reach the prototype", async () => {
    const n = await seedNode(h, p.slug, { slug: "proto", title: "Proto", blocks: [{ type: "card", data: { a: 1 } }] }, true);
    const blockId = n.blocks[0].id;
    // A "__proto__" key is refused by name (issue 22 §3: never dropped without a word), the rest applies once it is left out.
    const refused = await h.request("PUT", `/admin/p/${p.slug}/nodes/${n.id}/translations/fr`, {
      raw: `{"blocks": {"${blockId}": {"__proto__": {"polluted": true}, "b": 2}}}`,
      headers: { "content-type": "application/json" },
    });
    expect([refused.status, refused.json.error.code, refused.json.error.details.fields]).toEqual([400, "invalid_input", [`blocks.${blockId}.__proto__`]]);
    expect(refused.json.error.details.hints[`blocks.${blockId}.__proto__`]).toContain("never stored");
    expect(({} as any).polluted).toBeUndefined();
    await translate(h, p.slug, n.id, "fr", { blocks: { [blockId]: { b: 2 } } });
    const res = await get(h, api("/nodes/by-path/proto?locale=fr"));
    expect(res.status).toBe(200);
    expect(res.json.data.blocks[0].data).toMatchObject({ a: 1, b: 2 });
    expect(({} as any).polluted).toBeUndefined();
    // The merge itself keeps such a key as plain data.
    const merged = deepMerge({ a: { x: 1 } }, JSON.parse('{"__proto__": {"polluted": true}, "a": {"y": 2}}'));
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(JSON.parse(JSON.stringify(merged))).toEqual(JSON.parse('{"a": {"x": 1, "y": 2}, "__proto__": {"polluted": true}}'));
    expect(({} as any).polluted).toBeUndefined();
  });
});

describe("delivery: translations read", async () => {
  const h = await harness();
  const p = await seedProject(h, { locales: ["en", "fr", "de"], public_base_url: BASE });
  const n = await seedNode(h, p.slug, { slug: "page", title: "Page", blocks: [{ type: "text", data: { text: "Hello", n: { a: 1 } } }] }, true);
  await translate(h, p.slug, n.id, "fr", { meta: { title: "Page FR", slug: "page-fr" }, blocks: { [n.blocks[0].id]: { text: "Bonjour" } } });
  await translate(h, p.slug, n.id, "de", { meta: { title: "Seite" }, status: "draft" });
  const api = (rest: string): string => `/api/p/${p.slug}${rest}`;

  test("the published node merged with the locale's meta and block overrides", async () => {
    const res = await get(h, api(`/translations/nodes/${n.id}?locale=fr`));
    expect(res.status).toBe(200);
    expect(Object.keys(res.json.data).sort()).toEqual(NODE_KEYS);
    expect(res.json.data).toMatchObject({ id: n.id, title: "Page FR", slug: "page-fr", path: "page-fr", locale: "fr", translated: true });
    expect(res.json.data.blocks[0].data).toEqual({ text: "Bonjour", n: { a: 1 } });
    expect(res.json).toEqual((await get(h, api(`/nodes/${n.id}?locale=fr`))).json);
  });

  test("locale is required; an unknown locale is invalid; no published translation is 404", async () => {
    const missing = await get(h, api(`/translations/nodes/${n.id}`));
    expect(missing.status).toBe(400);
    expect(missing.json.error).toMatchObject({ code: "missing_parameter" });
    expect((await get(h, api(`/translations/nodes/${n.id}?locale=it`))).json.error.code).toBe("invalid_locale");
    for (const locale of ["de", "en"]) {
      const res = await get(h, api(`/translations/nodes/${n.id}?locale=${locale}`));
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ error: { code: "not_found", message: "translation not found" } });
    }
    const nobody = await get(h, api(`/translations/nodes/00000000-0000-7000-8000-000000000000?locale=fr`));
    expect(nobody.status).toBe(404);
    expect(nobody.json).toEqual({ error: { code: "not_found", message: "node not found" } });
  });
});

describe("delivery: node list, theme, robots", async () => {
  const h = await harness();
  const p = await seedProject(h, { public_base_url: BASE });
  const a = await seedNode(h, p.slug, { slug: "a-page", title: "A" }, true);
  const b = await seedNode(h, p.slug, { slug: "b-page", title: "B", seo: { description: "d" } }, true);
  await seedNode(h, p.slug, { slug: "c-draft", title: "C" });
  const api = (rest: string): string => `/api/p/${p.slug}${rest}`;

  test("the node list is { data: [raw rows] } of published nodes only, in path order", async () => {
    const res = await get(h, api("/nodes"));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(Object.keys(res.json)).toEqual(["data"]);
    expect(res.json.data.map((r: any) => r.id)).toEqual([a.id, b.id]);
    const admin = (await h.request("GET", `/admin/p/${p.slug}/nodes/${b.id}`)).json.data;
    // The working copy's state is the admin API's: a published version has none. Nothing is waiting
    // to be published here, so the published version is the working copy as it is.
    const { blocks: _blocks, state, ...raw } = admin;
    expect(state).toBe("published");
    // The row carries fields too (delivery adds them whether or not the admin wire form has them yet).
    expect(res.json.data[1]).toEqual({ ...raw, fields: {} });
    expect(res.json.data[1].status).toBe("published");
  });

  test("theme is the bare object, nulls when unset, values after an update", async () => {
    const empty = await get(h, api("/theme"));
    expect(empty.status).toBe(200);
    expect(empty.json).toEqual({ logo_url: null, favicon_url: null, accent_color: null, name_override: null });
    const put = await h.request("PUT", `/admin/p/${p.slug}/theme`, { body: { accent_color: "#AA00ff", name_override: "Brand", logo_url: "https://cdn.example/l.svg" } });
    expect(put.status).toBe(200);
    const res = await get(h, api("/theme"));
    expect(res.json).toEqual({ logo_url: "https://cdn.example/l.svg", favicon_url: null, accent_color: "#aa00ff", name_override: "Brand" });
    // name_override is the site name in SEO
    expect((await get(h, api("/nodes/by-path/a-page"))).json.data.seo.og.site_name).toBe("Brand");
  });

  test("robots.txt: text/plain with a Sitemap line only when the base URL is set", async () => {
    const res = await get(h, api("/robots.txt"));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(res.text).toBe(`User-agent: *\nAllow: /\n\nSitemap: ${BASE}/sitemap.xml\n`);
    const q = await seedProject(h);
    const bare = await get(h, `/api/p/${q.slug}/robots.txt`);
    expect(bare.text).toBe("User-agent: *\nAllow: /\n");
  });
});

describe("delivery: CORS and methods", async () => {
  const h = await harness();
  const p = await seedProject(h, { public_base_url: BASE });
  await seedNode(h, p.slug, { slug: "page", title: "Page" }, true);
  const origin = { origin: "https://app.example" };

  test("every answer carries Access-Control-Allow-Origin: * and never credentials", async () => {
    for (const path of ["/nodes/by-path/page", "/nodes/by-path/missing", "/theme", "/robots.txt", "/sitemap.xml", "/nodes", "/entries"]) {
      const res = await get(h, `/api/p/${p.slug}${path}`, origin);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(res.headers.get("access-control-allow-credentials")).toBeNull();
      expect(res.headers.get("access-control-expose-headers")).toContain("ETag");
      expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    }
    const traced = await get(h, `/api/p/${p.slug}/theme`, { "x-request-id": "trace-123" });
    expect(traced.headers.get("x-request-id")).toBe("trace-123");
    expect((await get(h, `/api/p/${p.slug}/theme`, { "x-request-id": "trace-124" })).headers.get("x-request-id")).toBe("trace-124");
  });

  test("preflight: 204 allowing GET/HEAD/OPTIONS and the requested headers", async () => {
    const res = await h.request("OPTIONS", `/api/p/${p.slug}/nodes/by-path/page`, {
      key: null,
      headers: { ...origin, "access-control-request-method": "GET", "access-control-request-headers": "if-none-match, x-custom" },
    });
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-allow-methods")).toBe("GET, HEAD, OPTIONS");
    expect(res.headers.get("access-control-allow-headers")).toBe("if-none-match, x-custom");
    expect(res.headers.get("access-control-allow-credentials")).toBeNull();
    expect(Number(res.headers.get("access-control-max-age"))).toBeGreaterThan(0);
    expect(res.headers.get("vary")).toContain("Access-Control-Request-Headers");
  });

  test("other methods: 405 method_not_allowed with the JSON error body and Allow", async () => {
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
      for (const path of ["/nodes/by-path/page", "/theme", "/entries", "/sitemap.xml"]) {
        const res = await h.request(method, `/api/p/${p.slug}${path}`, { key: null, body: { x: 1 } });
        expect(res.status).toBe(405);
        expect(res.json).toEqual({ error: { code: "method_not_allowed", message: expect.any(String) } });
        expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
        expect(res.headers.get("access-control-allow-origin")).toBe("*");
      }
    }
  });

  test("HEAD answers like GET without a body", async () => {
    const res = await h.request("HEAD", `/api/p/${p.slug}/theme`, { key: null });
    expect(res.status).toBe(200);
    expect(res.text).toBe("");
    expect(res.headers.get("etag")).toBe((await get(h, `/api/p/${p.slug}/theme`)).headers.get("etag"));
  });

  test("admin and OAuth routes get no CORS headers from delivery", async () => {
    const admin = await h.request("GET", "/admin/projects", { headers: origin });
    expect(admin.status).toBe(200);
    expect(admin.headers.get("access-control-allow-origin")).toBeNull();
    const pre = await h.request("OPTIONS", "/admin/projects", { key: null, headers: { ...origin, "access-control-request-method": "GET" } });
    expect(pre.headers.get("access-control-allow-origin")).toBeNull();
    const authorize = await h.request("GET", "/oauth/authorize?client_id=x", { key: null, headers: origin });
    expect(authorize.headers.get("access-control-allow-origin")).toBeNull();
  });
});
