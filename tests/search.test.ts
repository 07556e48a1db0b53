// Site search (issue 40, src/search/): the index kept by the write path, delivery's search and
// suggest, facets, snippets, freshness at commit. Runs on PGlite and on PostgreSQL (DATABASE_URL).
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { mirrorPublishedVersions } from "../src/content/publish";
import { rows } from "../src/lib/json";
import { sqlArray } from "../src/lib/sql";
import { indexAll, queueStaleProjects } from "../src/search/indexer";
import { MAX_HITS } from "../src/search/query";
import { rebuildSearchRows } from "../src/write/search-index";
import { get, outageDatabase, transition, translate, until } from "./delivery.helpers";
import { harness, seedNode, seedProject } from "./helpers";
import { setModel } from "./model.helpers";

/** One look of the indexer: the projects it queued whole (their index built under another model or locale), then the queue indexed. */
async function indexer(db: Db): Promise<string[]> {
  const whole = await queueStaleProjects(db);
  await indexAll(db);
  return whole;
}

const MODEL = {
  node_types: [
    {
      name: "article",
      fields: {
        type: "object",
        properties: {
          summary: { type: "string", translatable: true },
          internal: { type: "string" },
          body: { type: "string", format: "markdown", translatable: true },
          category: { type: "string", index: true },
        },
      },
    },
  ],
};

describe("search: delivery", async () => {
  const h = await harness();
  const p = await seedProject(h, { locales: ["en", "de", "fr", "es"] });
  const other = await seedProject(h, { locales: ["en"] });
  await setModel(h.deps.db, p.id, MODEL);
  const api = (rest: string): string => `/api/p/${p.slug}${rest}`;
  const search = async (query: string): Promise<any> => {
    const res = await get(h, api(`/search?${query}`));
    expect(res.status).toBe(200);
    return res.json;
  };
  const ids = (body: any): string[] => body.data.map((d: any) => d.id);

  const pricing = await seedNode(
    h,
    p.slug,
    {
      slug: "pricing",
      title: "Pricing plans",
      type: "article",
      fields: { summary: "What our plans cost", category: "sales", internal: "zebracode" },
      blocks: [{ type: "text", data: { body: "Runners running daily." } }],
    },
    true,
  );
  const blog = await seedNode(h, p.slug, { slug: "blog", title: "Blog", type: "collection" }, true);
  const post = await seedNode(
    h,
    p.slug,
    {
      slug: "hello",
      title: "Hello world",
      type: "article",
      parent_id: blog.id,
      fields: { category: "news", body: "## About pricing\n\nWe talk about **pricing** here." },
      blocks: [{ type: "text", data: { body: "<p>Beware of <b>script</b> tags: &lt;script&gt;alert(1)&lt;/script&gt;</p>" } }],
    },
    true,
  );
  const unsafe = await seedNode(
    h,
    p.slug,
    { slug: "unsafe", title: "Unsafe text", type: "article", blocks: [{ type: "text", data: { body: "Literal <script>alert('x')</script> and &lt; entity quokka" } }] },
    true,
  );
  const house = await seedNode(h, p.slug, { slug: "house", title: "The house", type: "article", blocks: [{ type: "text", data: { body: "A house by the river." } }] }, true);
  await translate(h, p.slug, house.id, "de", { meta: { title: "Die Häuser", slug: "haeuser" }, blocks: {} });
  await translate(h, p.slug, house.id, "fr", { meta: { title: "Les élèves étudient", slug: "eleves" } });
  await translate(h, p.slug, house.id, "es", { meta: { title: "Corriendo por la ciudad", slug: "corriendo" } });
  const draft = await seedNode(h, p.slug, { slug: "secret", title: "Pricing secret draft", type: "article" });
  const foreign = await seedNode(h, other.slug, { slug: "pricing", title: "Pricing elsewhere" }, true);

  test("stemming in English; the block text is found; drafts and other projects are not", async () => {
    const body = await search("q=runs");
    expect(ids(body)).toEqual([pricing.id]);
    expect(body.data[0]).toMatchObject({ id: pricing.id, path: "pricing", title: "Pricing plans", type: "article", locale: "en" });
    expect(body.data[0].snippet).toContain("<mark>running</mark>");
    expect(typeof body.data[0].score).toBe("number");
    const all = await search("q=pricing");
    expect(ids(all)).toContain(pricing.id);
    expect(ids(all)).toContain(post.id);
    expect(ids(all)).not.toContain(draft.id);
    expect(ids(all)).not.toContain(foreign.id);
    expect(all).toMatchObject({ total: 2, page: 1, per_page: 20, fuzzy: false });
  });

  test("title ranks above body", async () => {
    const body = await search("q=pricing");
    expect(ids(body)).toEqual([pricing.id, post.id]);
    expect(body.data[0].score).toBeGreaterThan(body.data[1].score);
  });

  test("German, French and Spanish stemming and accents, each translation under its own locale and path", async () => {
    const de = await search("q=haus&locale=de");
    expect(de.data).toEqual([expect.objectContaining({ id: house.id, locale: "de", path: "haeuser", title: "Die Häuser" })]);
    const fr = await search(`q=${encodeURIComponent("eleve etudier")}&locale=fr`);
    expect(fr.data).toEqual([expect.objectContaining({ id: house.id, locale: "fr", path: "eleves" })]);
    const es = await search("q=correr&locale=es");
    expect(es.data).toEqual([expect.objectContaining({ id: house.id, locale: "es", path: "corriendo" })]);
    // Accents folded both ways.
    expect(ids(await search(`q=${encodeURIComponent("élèves")}&locale=fr`))).toEqual([house.id]);
    expect(ids(await search(`q=${encodeURIComponent("hauser")}&locale=de`))).toEqual([house.id]);
    // The German text is not the English index's.
    expect(ids(await search("q=haus"))).toEqual([]);
    expect(ids(await search("q=house&locale=de"))).toEqual([house.id]); // untranslated blocks: the node's own
  });

  test("prefix, phrase, exclusion, or", async () => {
    expect(ids(await search("q=pric"))).toEqual([pricing.id, post.id]);
    expect(ids(await search(`q=${encodeURIComponent('"plans cost"')}`))).toEqual([pricing.id]);
    expect(ids(await search(`q=${encodeURIComponent('"cost plans"')}`))).toEqual([]);
    // The scoped index holds no positions: a phrase is checked on the row (in the title, and in the whole text).
    expect(ids(await search(`q=${encodeURIComponent('"pricing plans"')}`))).toEqual([pricing.id]);
    expect(ids(await search(`q=${encodeURIComponent('"plans pricing"')}`))).toEqual([]);
    // An excluded phrase excludes the pages holding it as a phrase, not those holding its words apart.
    expect(ids(await search(`q=${encodeURIComponent('pricing -"plans cost"')}`))).toEqual([post.id]);
    expect(ids(await search(`q=${encodeURIComponent('pricing -"cost plans"')}`))).toEqual([pricing.id, post.id]);
    expect(ids(await search(`q=${encodeURIComponent('runners -"plans cost"')}`))).toEqual([]);
    expect(ids(await search(`q=${encodeURIComponent('runners -"cost plans"')}`))).toEqual([pricing.id]);
    expect(ids(await search(`q=${encodeURIComponent("pricing -hello")}`))).toEqual([pricing.id]);
    // The title matches, the excluded word is in the blocks alone: the page is not a hit.
    expect(ids(await search(`q=${encodeURIComponent("pricing -runners")}`))).toEqual([post.id]);
    expect(ids(await search(`q=${encodeURIComponent("quokka or runners")}`)).sort()).toEqual([pricing.id, unsafe.id].sort());
  });

  test("a typo in a word of 4 letters or more, when nothing matches exactly", async () => {
    const body = await search("q=pricng%20");
    expect(body.fuzzy).toBe(true);
    expect(ids(body)).toContain(pricing.id);
    expect(body.total).toBe(body.data.length);
    // Short words tolerate none.
    expect((await search("q=blg%20")).total).toBe(0);
    // Several words none of which is all there: any of them will do, the most matched first.
    const relaxed = await search(`q=${encodeURIComponent("pricing unicorn ")}`);
    expect(relaxed).toMatchObject({ fuzzy: true, total: 2 });
    expect(ids(relaxed)).toEqual([pricing.id, post.id]);
  });

  test("translatable string fields are indexed, others are not; markdown and html reduced to text", async () => {
    expect(ids(await search("q=cost"))).toEqual([pricing.id]);
    expect(ids(await search("q=zebracode"))).toEqual([]);
    const md = await search("q=talk");
    expect(md.data[0].snippet).toStartWith("About pricing We <mark>talk</mark> about pricing here. Beware of script tags");
    // The html's entities decoded to text, escaped again in the snippet.
    expect((await search("q=beware")).data[0].snippet).toContain("tags: &lt;script&gt;alert(1)&lt;/script");
  });

  test("snippets are escaped text with <mark> only, for content holding <script> and &lt;", async () => {
    const body = await search("q=quokka");
    expect(ids(body)).toEqual([unsafe.id]);
    const snippet: string = body.data[0].snippet;
    expect(snippet).toBe("Literal &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; and &amp;lt; entity <mark>quokka</mark>");
    expect(snippet.replace(/<\/?mark>/g, "")).not.toMatch(/[<>]/);
    const script = await search("q=script");
    for (const d of script.data) expect(d.snippet.replace(/<\/?mark>/g, "")).not.toMatch(/[<>]/);
  });

  test("collection, type, paging, facets", async () => {
    expect(ids(await search("q=pricing&collection=blog"))).toEqual([post.id]);
    expect((await get(h, api("/search?q=pricing&collection=nope"))).status).toBe(404);
    expect(ids(await search("q=pricing&type=collection"))).toEqual([]);
    const paged = await search("q=pricing&per_page=1&page=2");
    expect(paged).toMatchObject({ total: 2, page: 2, per_page: 1 });
    expect(ids(paged)).toEqual([post.id]);
    const faceted = await search("q=pricing&facets=type,field.category");
    expect(faceted.facets).toEqual({ type: { article: 2 }, "field.category": { news: 1, sales: 1 } });
    const bad = await get(h, api("/search?q=pricing&facets=field.summary"));
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({ code: "invalid_request", details: { field: "facets" } });
    expect((await get(h, api("/search?q=x&locale=xx"))).status).toBe(400);
    expect((await get(h, api("/search?q=x&page=0"))).status).toBe(400);
  });

  test("a word as long as the index takes (2,046 letters) is written, and its page found by its other words", async () => {
    // to_tsvector keeps a word of up to 2,047 bytes; with a locale in front it would not fit a lexeme (migration 0022 leaves it out).
    const long = await seedNode(h, p.slug, { slug: "long-word", title: "Long word", type: "article", blocks: [{ type: "text", data: { body: `okapi ${"w".repeat(2046)}` } }] }, true);
    await translate(h, p.slug, long.id, "de", { meta: { title: "Langes Wort", slug: "langes-wort" }, blocks: {} });
    expect(ids(await search("q=okapi"))).toEqual([long.id]);
    expect(ids(await search("q=okapi&locale=de"))).toEqual([long.id]);
    expect((await h.request("DELETE", `/admin/p/${p.slug}/nodes/${long.id}`)).status).toBe(204);
  });

  test("a long page's snippet is made from the start of its text", async () => {
    const body = `zyzzyva ${"lorem ipsum ".repeat(6000)}quagga`;
    const page = await seedNode(h, p.slug, { slug: "long-page", title: "Long page", type: "article", blocks: [{ type: "text", data: { body } }] }, true);
    const first = await search("q=zyzzyva");
    expect(ids(first)).toEqual([page.id]);
    expect(first.data[0].snippet).toStartWith("<mark>zyzzyva</mark> lorem ipsum");
    // Found by the index (the whole text), shown as the text's start (the match is past 3,000 characters).
    const last = await search("q=quagga");
    expect(ids(last)).toEqual([page.id]);
    expect(last.data[0].snippet).toStartWith("zyzzyva lorem ipsum lorem");
    expect(last.data[0].snippet).not.toContain("<mark>");
    expect((await h.request("DELETE", `/admin/p/${p.slug}/nodes/${page.id}`)).status).toBe(204);
  });

  test("user input never errors", async () => {
    for (const q of ['"', "-", "or", "&|!():*", "'", "a:*", "\\", "<>", "x".repeat(500), "   ", "", '"unterminated phrase', "-- -", "!!!"]) {
      const res = await get(h, api(`/search?q=${encodeURIComponent(q)}`));
      expect(res.status).toBe(200);
      expect(Array.isArray(res.json.data)).toBe(true);
    }
  });

  test("answers are cached and ETagged with the content version", async () => {
    const first = await get(h, api("/search?q=pricing"));
    const etag = first.headers.get("etag");
    expect(etag).toBeTruthy();
    expect((await get(h, api("/search?q=pricing"), { "if-none-match": etag ?? "" })).status).toBe(304);
    expect(first.headers.get("access-control-allow-origin")).toBe("*");
  });

  test("suggest: up to 8 titles as the reader types, typos tolerated", async () => {
    const s = await get(h, api("/search/suggest?q=pri"));
    expect(s.status).toBe(200);
    expect(s.json.data[0]).toEqual({ id: pricing.id, title: "Pricing plans", path: "pricing", type: "article" });
    expect(s.json.data.map((d: any) => d.id)).not.toContain(draft.id);
    const typo = await get(h, api("/search/suggest?q=pricnig"));
    expect(typo.json.data.map((d: any) => d.id)).toContain(pricing.id);
    const de = await get(h, api("/search/suggest?q=hau&locale=de"));
    expect(de.json.data).toEqual([{ id: house.id, title: "Die Häuser", path: "haeuser", type: "article" }]);
    expect((await get(h, api("/search/suggest?q="))).json.data).toEqual([]);
  });

  test("suggest: titles starting with what was typed, then holding it (a word start first), then a typo away; 8 at most; never a draft or a page below an unpublished node", async () => {
    const q = await seedProject(h, { locales: ["en"] });
    const titles = ["Alpha release", "Beta alpha", "Metalphas", "Alpah notes", "Gamma"];
    for (const [i, title] of titles.entries()) await seedNode(h, q.slug, { slug: `t${i}`, title }, true);
    await seedNode(h, q.slug, { slug: "draft", title: "Alpha draft" });
    const parent = await seedNode(h, q.slug, { slug: "parent", title: "Parent" }, true);
    await seedNode(h, q.slug, { slug: "child", title: "Alpha child", parent_id: parent.id }, true);
    await transition(h, q.slug, parent.id, "unpublish");
    const suggest = async (typed: string): Promise<string[]> => {
      const res = await get(h, `/api/p/${q.slug}/search/suggest?q=${encodeURIComponent(typed)}`);
      expect(res.status).toBe(200);
      return res.json.data.map((d: any) => d.title);
    };
    expect(await suggest("alpha")).toEqual(["Alpha release", "Beta alpha", "Metalphas", "Alpah notes"]);
    // The looser word similarity was the suggest's alone: the setting is back to its default after it.
    const setting = rows<{ v: string }>(await h.deps.db.execute(sql`select current_setting('pg_trgm.word_similarity_threshold') as v`));
    expect(setting).toEqual([{ v: "0.6" }]);
    expect(await suggest("ALPHA ")).toEqual(["Alpha release", "Beta alpha", "Metalphas", "Alpah notes"]);
    // Under 3 letters, only titles starting with it; under 4, no typos.
    expect(await suggest("al")).toEqual(["Alpah notes", "Alpha release"]);
    expect(await suggest("alp")).toEqual(["Alpah notes", "Alpha release", "Beta alpha", "Metalphas"]);
    // Nine titles starting with it: the first 8 in order, nothing else.
    for (let i = 0; i < 9; i++) await seedNode(h, q.slug, { slug: `a${i}`, title: `Alpha ${i}` }, true);
    expect(await suggest("alpha")).toEqual(Array.from({ length: 8 }, (_, i) => `Alpha ${i}`));
  });

  test("freshness: an edit published is found, an unpublished, archived, deleted or moved page is gone at its commit", async () => {
    const n = await seedNode(h, p.slug, { slug: "fresh", title: "Wombat facts", type: "article" }, true);
    expect(ids(await search("q=wombat"))).toEqual([n.id]);
    // A draft edit does not reach readers…
    expect((await h.request("PATCH", `/admin/p/${p.slug}/nodes/${n.id}`, { body: { title: "Capybara facts" } })).status).toBe(200);
    expect(ids(await search("q=capybara"))).toEqual([]);
    expect(ids(await search("q=wombat"))).toEqual([n.id]);
    // …until it is published.
    await transition(h, p.slug, n.id, "publish");
    expect(ids(await search("q=capybara"))).toEqual([n.id]);
    expect(ids(await search("q=wombat"))).toEqual([]);
    await transition(h, p.slug, n.id, "unpublish");
    expect(ids(await search("q=capybara"))).toEqual([]);
    await transition(h, p.slug, n.id, "publish");
    await transition(h, p.slug, n.id, "archive");
    expect(ids(await search("q=capybara"))).toEqual([]);
    // Moved: the path is the new one at once.
    const parent = await seedNode(h, p.slug, { slug: "zoo", title: "Zoo" }, true);
    const moved = await seedNode(h, p.slug, { slug: "okapi", title: "Okapi facts" }, true);
    expect((await search("q=okapi")).data[0].path).toBe("okapi");
    expect((await h.request("PATCH", `/admin/p/${p.slug}/nodes/${moved.id}`, { body: { parent_id: parent.id } })).status).toBe(200);
    await transition(h, p.slug, moved.id, "publish");
    expect((await search("q=okapi")).data[0].path).toBe("zoo/okapi");
    // A parent unpublished hides the page below it.
    await transition(h, p.slug, parent.id, "unpublish");
    expect(ids(await search("q=okapi"))).toEqual([]);
    await transition(h, p.slug, parent.id, "publish");
    expect(ids(await search("q=okapi"))).toEqual([moved.id]);
    expect((await h.request("DELETE", `/admin/p/${p.slug}/nodes/${moved.id}`)).status).toBeLessThan(300);
    expect(ids(await search("q=okapi"))).toEqual([]);
    const left = rows<{ n: number }>(await h.deps.db.execute(sql`select count(*)::int as n from search_documents where node_id = ${moved.id}`));
    expect(Number(left[0]?.n)).toBe(0);
  });

  test("a translation unpublished is gone; the model's translatable flags apply once the indexer has looked", async () => {
    await transition(h, p.slug, house.id, "publish");
    expect(ids(await search("q=correr&locale=es"))).toEqual([house.id]);
    expect((await h.request("POST", `/admin/p/${p.slug}/nodes/${house.id}/unpublish`, { body: { locale: "es" } })).status).toBe(200);
    expect(ids(await search("q=correr&locale=es"))).toEqual([]);
    // internal becomes translatable: the indexer rebuilds the project (not the model's write, which
    // would hold the project for as long as that takes); the answer cached meanwhile goes with it.
    const model = structuredClone(MODEL);
    (model.node_types[0]?.fields.properties.internal as Record<string, unknown>).translatable = true;
    await setModel(h.deps.db, p.id, model);
    expect(ids(await search("q=zebracode"))).toEqual([]);
    // The indexer writes through the database, not through this app: its cached answers go when the
    // commit's NOTIFY reaches it, as on another instance (a moment, not at once).
    const settled = async (want: string[]): Promise<string[]> =>
      (
        await until(
          async () => ids(await search("q=zebracode")),
          (v) => v.join() === want.join(),
          3000,
        )
      ).value;
    expect(await indexer(h.deps.db)).toContain(p.id);
    expect(await settled([pricing.id])).toEqual([pricing.id]);
    await setModel(h.deps.db, p.id, MODEL);
    expect(await indexer(h.deps.db)).toContain(p.id);
    expect(await settled([])).toEqual([]);
    // A model change that keeps the translatable fields only moves the mark: nothing is rebuilt.
    await setModel(h.deps.db, p.id, structuredClone(MODEL));
    expect(await indexer(h.deps.db)).not.toContain(p.id);
  });
});

describe("search: the project's default locale and the reindex command", async () => {
  const h = await harness();
  const p = await seedProject(h, { locales: ["en", "de"] });
  const api = (rest: string): string => `/api/p/${p.slug}${rest}`;
  const ids = async (query: string): Promise<string[]> => {
    const res = await get(h, api(`/search?${query}`));
    expect(res.status).toBe(200);
    return res.json.data.map((d: any) => d.id);
  };
  const n = await seedNode(h, p.slug, { slug: "haeuser", title: "Die Häuser am Fluss" }, true);

  test("a default locale change re-indexes the base content in its language (the indexer)", async () => {
    // English stemming does not make "häuser" "haus"…
    expect(await ids("q=haus%20")).toEqual([]);
    expect((await h.request("PATCH", `/admin/projects/${p.slug}`, { body: { default_locale: "de" } })).status).toBe(200);
    expect(await indexer(h.deps.db)).toContain(p.id);
    // …German does, and the base content is now searched as the default locale's.
    expect(await ids("q=haus%20")).toEqual([n.id]);
    expect(await ids("q=haus%20&locale=de")).toEqual([n.id]);
    expect((await get(h, api("/search?q=haus&locale=en"))).json.data).toEqual([]);
  });

  test("search:reindex rebuilds a project's index", async () => {
    await h.deps.db.execute(sql`delete from search_documents where project_id = ${p.id}`);
    expect(await ids("q=fluss%20")).toEqual([]);
    const { reindexProject } = await import("../src/search/reindex");
    expect(await reindexProject(h.deps.db, p.id)).toBe(2); // published and working copy
    expect(await ids("q=fluss%20&locale=de")).toEqual([n.id]);
  });

  test("rows of long pages are narrow (their text in TOAST, many to a page); VACUUM FULL narrows rows stored before migration 0020", async () => {
    const db = h.deps.db;
    const q = await seedProject(h);
    let x = 7;
    const word = (): string => {
      x = (x * 48271) % 2147483647;
      return x.toString(36);
    };
    // About 1.2 kB of words no compression shortens much: with the vector of their lexemes, each row needs toasting, and its text alone stays under PostgreSQL's default target.
    const page = async (i: number) =>
      seedNode(h, q.slug, { slug: `long-${i}`, title: `Long page ${i}`, blocks: [{ type: "text", data: { body: Array.from({ length: 180 }, word).join(" ") } }] }, true);
    const pagesOf = async (slugs: string): Promise<number> =>
      Number(
        rows<{ n: number }>(
          await db.execute(sql`select count(distinct (d.ctid::text::point)[0])::int as n from search_documents d join nodes n on n.id = d.node_id
            where d.project_id = ${q.id} and d.published and n.slug like ${slugs}`),
        )[0]?.n,
      );
    // On PostgreSQL each pooled connection inserts into a page of its own, so rows written by
    // requests that took different connections (under load, or beside other work) land on as many
    // pages whatever their width: the pages' rows are written again by one write (as a publish
    // rebuilds its nodes' rows), which puts them side by side, and only then counted.
    const rewrite = async (slugs: string): Promise<void> =>
      db.transaction(async (tx) => {
        const nodeIds = rows<{ id: string }>(await tx.execute(sql`select id from nodes where project_id = ${q.id} and slug like ${slugs}`)).map((r) => r.id);
        expect(nodeIds).toHaveLength(24);
        await tx.execute(sql`delete from search_documents where published and node_id = any (${sqlArray(nodeIds, "uuid")})`);
        await rebuildSearchRows(tx, q.id, [], nodeIds);
      });
    const migration = (await Bun.file(new URL("../db/migrations/0020_search_narrow_rows.sql", import.meta.url)).text()).split("--> statement-breakpoint");
    // Stored as before the migration (PostgreSQL's defaults): about 4 rows to a page.
    await db.execute(sql`alter table search_documents reset (toast_tuple_target)`);
    await db.execute(sql`alter table search_documents alter column head set storage extended, alter column title set storage extended, alter column title_folded set storage extended`);
    for (let i = 0; i < 24; i++) await page(i);
    await rewrite("long-%");
    expect(await pagesOf("long-%")).toBeGreaterThanOrEqual(5);
    for (const statement of migration) await db.execute(sql.raw(statement));
    // The upgrade's step for rows stored before (docs/operations.md): the table rewritten, each row toasted as rows are now.
    await db.execute(sql`vacuum full search_documents`);
    expect(await pagesOf("long-%")).toBeLessThanOrEqual(2);
    // Rows written from now on are narrow at once (the first may share a page with others).
    for (let i = 0; i < 24; i++) await page(100 + i);
    await rewrite("long-1__");
    expect(await pagesOf("long-1__")).toBeLessThanOrEqual(3);
    expect(await ids(`q=${encodeURIComponent("long page")}&per_page=1`)).toHaveLength(0); // another project
    expect((await get(h, `/api/p/${q.slug}/search?q=long%20page&per_page=100`)).json.total).toBe(48);
  });
});

describe("search: outages", () => {
  test("a search answered before the database went away is served from its last good answer, marked stale; one never answered is 503", async () => {
    const db = await outageDatabase();
    try {
      const h = await harness({ DELIVERY_VERSION_CHECK_MS: "60000" }, { db: db.db, dbHandle: db.handle });
      const p = await seedProject(h);
      const n = await seedNode(h, p.slug, { slug: "wombat", title: "Wombat facts" }, true);
      const other = await seedNode(h, p.slug, { slug: "other", title: "Other" }, true);
      const url = `/api/p/${p.slug}/search?q=wombat`;
      const first = await get(h, url);
      expect(first.status).toBe(200);
      expect(first.json.data.map((d: any) => d.id)).toEqual([n.id]);
      // An edit of another page (not a removal): the answer is superseded, kept for outages.
      expect((await h.request("PATCH", `/admin/p/${p.slug}/nodes/${other.id}`, { body: { title: "Other, edited" } })).status).toBe(200);
      await transition(h, p.slug, other.id, "publish");
      await db.cut();
      const stale = await get(h, url);
      expect([stale.status, stale.headers.get("x-cache")]).toEqual([200, "stale"]);
      expect(stale.text).toBe(first.text);
      const never = await get(h, `/api/p/${p.slug}/search?q=never`);
      expect([never.status, never.json.error.code]).toEqual([503, "service_unavailable"]);
    } finally {
      await db.drop();
    }
  });
});

describe("search: a common word's hits past the cap", async () => {
  const h = await harness();
  const p = await seedProject(h, { locales: ["en"] });
  // MAX_HITS + 20 published pages whose description holds the word, written as an import would,
  // then the project reindexed; the one page whose title is the word comes last in the table.
  await h.deps.db.execute(sql`insert into nodes (id, project_id, parent_id, slug, path, type, title, status, published_at, seo)
    select gen_random_uuid(), ${p.id}, null, 'item-' || i, 'item-' || i, case when i % 100 = 0 then 'special' else 'page' end, 'Item ' || i, 'published', now(),
      jsonb_build_object('description', 'a note about the zeppelin hangar number ' || i)
    from generate_series(1, ${MAX_HITS + 20}) i`);
  await h.deps.db.execute(sql`insert into nodes (id, project_id, parent_id, slug, path, type, title, status, published_at, seo)
    values (gen_random_uuid(), ${p.id}, null, 'zeppelin', 'zeppelin', 'page', 'Zeppelin', 'published', now(), '{}')`);
  await mirrorPublishedVersions(h.deps.db, p.id);
  const { reindexProject } = await import("../src/search/reindex");
  await reindexProject(h.deps.db, p.id);

  test("total is a lower bound (total_exact false), the title hit still ranks first, pages past the first work", async () => {
    const res = await get(h, `/api/p/${p.slug}/search?q=zeppelin&per_page=5`);
    expect(res.status).toBe(200);
    expect(res.json.total_exact).toBe(false);
    expect(res.json.total).toBeGreaterThan(MAX_HITS);
    expect(res.json.data).toHaveLength(5);
    expect(res.json.data[0]).toMatchObject({ title: "Zeppelin", path: "zeppelin" });
    const next = await get(h, `/api/p/${p.slug}/search?q=zeppelin&per_page=5&page=2`);
    expect(next.json.data).toHaveLength(5);
    expect(next.json.data.map((d: any) => d.id)).not.toContain(res.json.data[0].id);
  });

  test("under the cap total is exact", async () => {
    const res = await get(h, `/api/p/${p.slug}/search?q=zeppelin&type=special`);
    expect(res.status).toBe(200);
    expect([res.json.total, res.json.total_exact]).toEqual([Math.floor((MAX_HITS + 20) / 100), true]);
  });
});

describe("search: a page matching in its title and its text is one hit", async () => {
  const h = await harness();
  const p = await seedProject(h, { locales: ["en"] });
  // Three pages hold the word in the title and in a block (found by the titles' index and by the
  // text's), two in a block only: five pages, each once, whatever page size reads them.
  const both: { id: string }[] = [];
  for (const i of [1, 2, 3]) both.push(await seedNode(h, p.slug, { slug: `both-${i}`, title: `Lantern ${i}`, blocks: [{ type: "text", data: { body: "A lantern by the door." } }] }, true));
  const body: { id: string }[] = [];
  for (const i of [1, 2]) body.push(await seedNode(h, p.slug, { slug: `body-${i}`, title: `Porch ${i}`, blocks: [{ type: "text", data: { body: "The lantern is lit." } }] }, true));

  test("total counts five, the title hits rank first, and paging reads each page once", async () => {
    const all = await get(h, `/api/p/${p.slug}/search?q=lantern`);
    expect(all.status).toBe(200);
    expect([all.json.total, all.json.total_exact]).toEqual([5, true]);
    const ids = all.json.data.map((d: any) => d.id);
    expect(new Set(ids).size).toBe(5);
    expect(new Set(ids.slice(0, 3))).toEqual(new Set(both.map((n) => n.id)));
    expect(new Set(ids.slice(3))).toEqual(new Set(body.map((n) => n.id)));
    const paged: string[] = [];
    for (const page of [1, 2, 3]) {
      const res = await get(h, `/api/p/${p.slug}/search?q=lantern&per_page=2&page=${page}`);
      expect(res.json.total).toBe(5);
      paged.push(...res.json.data.map((d: any) => d.id));
    }
    expect(paged).toEqual(ids);
  });
});
