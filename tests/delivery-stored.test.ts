// Stored delivery answers (issue 42): a node's answer is stored when it is rendered, a miss on any
// instance reads the stored bytes in one statement, and a write marks the stored answers that show
// what it changed, in its transaction. Each dependency kind below is read through a second
// instance whose in-memory cache is off (every read is a stored read or a render), written through
// the first, and read again: a write that did not mark the answer would leave the old bytes served.
import { beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { rows } from "../src/lib/json";
import { countingDb, get, patchNode, transition, translate, until } from "./delivery.helpers";
import { setModel } from "./delivery-model.helpers";
import { harness, pgUrl, seedNode, seedProject, type TestHarness, testDb } from "./helpers";
import { twoColourPng, uploadForm } from "./media.helpers";

const MODEL = {
  block_types: [{ name: "text", description: "", schema: { type: "object", properties: { text: { type: "string", translatable: true } } } }],
  node_types: [
    {
      name: "post",
      description: "",
      fields: { type: "object", properties: { summary: { type: "string", translatable: true }, related: { type: "string", format: "node" }, hero: { type: "string", format: "media" } } },
      blocks: null,
      children: null,
    },
  ],
};

describe("delivery: stored answers", async () => {
  const h = await harness({ DATA_DIR: (await import("node:fs")).mkdtempSync(`${(await import("node:os")).tmpdir()}/stored-`) });
  const db = h.deps.db;
  const counted = countingDb((await testDb()).db);
  // A second instance on the same database, without an in-memory answer cache.
  // Its project state is re-read on announcements only (no version check during a test).
  const r: TestHarness = await harness({ DELIVERY_CACHE_ENTRIES: "0", DELIVERY_VERSION_CHECK_MS: "60000" }, { db: counted.db });
  const p = await seedProject(h, { locales: ["en", "fr", "fr-CA"], public_base_url: "https://www.example.com" });
  const api = (rest: string): string => `/api/p/${p.slug}${rest}`;
  let docs: any;
  let guide: any;
  let target: any;
  const stored = async (key: string): Promise<{ stale: boolean; deps: string[] } | undefined> =>
    rows<{ stale: boolean; deps: string[] }>(await db.execute(sql`select stale, deps from delivery_answers where project_id = ${p.id} and key = ${key}`))[0];
  /**
   * Until the second instance has heard of every write so far (a NOTIFY arrives a moment after the
   * commit): the node list's ETag names the content version, and the second instance answers 304
   * to the writer's tag, reading no row, once it knows that version.
   */
  const quiet = async (): Promise<void> => {
    const tag = (await get(h, api("/nodes"))).headers.get("etag") ?? "";
    const { value } = await until(
      async () => (await get(r, api("/nodes"), { "if-none-match": tag })).status,
      (status) => status === 304,
      5000,
    );
    expect(value).toBe(304);
  };
  /** A read through the second instance, and the statements it took. */
  const read = async (path: string): Promise<{ json: any; statements: number }> => {
    await quiet();
    const before = counted.calls();
    const res = await get(r, path);
    expect(res.status).toBe(200);
    return { json: res.json, statements: counted.calls() - before };
  };

  beforeAll(async () => {
    await setModel(db, p.id, MODEL);
    docs = await seedNode(h, p.slug, { slug: "docs", title: "Docs" }, true);
    target = await seedNode(h, p.slug, { slug: "target", title: "Target", parent_id: docs.id }, true);
    guide = await seedNode(
      h,
      p.slug,
      { slug: "guide", title: "Guide", type: "post", parent_id: docs.id, fields: { summary: "Summary", related: target.id }, blocks: [{ type: "text", data: { text: "Hello" } }] },
      true,
    );
  });

  test("a miss renders and stores; the next miss on any instance is one statement reading the stored bytes, with the same ETag", async () => {
    const first = await get(r, api("/nodes/by-path/docs/guide"));
    expect(first.status).toBe(200);
    const row = await stored("path en docs/guide");
    expect(row?.stale).toBe(false);
    expect(new Set(row?.deps)).toEqual(new Set([guide.id, docs.id, target.id]));
    const again = await read(api("/nodes/by-path/docs/guide"));
    expect(again.statements).toBe(1);
    expect(again.json).toEqual(first.json);
    const viaWriter = await get(h, api("/nodes/by-path/docs/guide"));
    expect(viaWriter.text).toBe(first.text);
    expect(viaWriter.headers.get("etag")).toBe(first.headers.get("etag"));
  });

  test("the node itself: a published edit marks its answers in the write's transaction, and the next read shows it", async () => {
    await read(api(`/nodes/${guide.id}`));
    await patchNode(h, p.slug, guide.id, { title: "Guide v2" });
    expect((await stored(`id en ${guide.id}`))?.stale).toBe(true);
    expect((await read(api(`/nodes/${guide.id}`))).json.data.title).toBe("Guide v2");
    expect((await stored(`id en ${guide.id}`))?.stale).toBe(false);
    // A draft edit of the published page changes nothing delivered.
    const draft = await h.request("PATCH", `/admin/p/${p.slug}/nodes/${guide.id}`, { body: { title: "Draft title" } });
    expect(draft.status).toBe(200);
    expect((await read(api(`/nodes/${guide.id}`))).json.data.title).toBe("Guide v2");
    await transition(h, p.slug, guide.id, "publish");
    expect((await read(api(`/nodes/${guide.id}`))).json.data.title).toBe("Draft title");
  });

  test("an ancestor: its title in the breadcrumbs, and a rename of its slug moves every page under it", async () => {
    await read(api("/nodes/by-path/docs/guide"));
    await patchNode(h, p.slug, docs.id, { title: "Documentation" });
    const renamed = await read(api("/nodes/by-path/docs/guide"));
    expect(renamed.json.data.seo.breadcrumbs.map((b: { title: string }) => b.title)).toEqual(["Documentation", "Draft title"]);
    await read(api(`/nodes/${guide.id}`));
    await patchNode(h, p.slug, docs.id, { slug: "manual" });
    expect((await read(api(`/nodes/${guide.id}`))).json.data.path).toBe("manual/guide");
    await quiet();
    expect((await get(r, api("/nodes/by-path/docs/guide"))).status).toBe(404);
    expect((await read(api("/nodes/by-path/manual/guide"))).json.data.id).toBe(guide.id);
    await patchNode(h, p.slug, docs.id, { slug: "docs" });
  });

  test("a referenced node: its title and its path (moved by its parent's rename) as the referencing page shows them", async () => {
    expect((await read(api(`/nodes/${guide.id}`))).json.data.fields.related).toMatchObject({ id: target.id, title: "Target", path: "docs/target" });
    await patchNode(h, p.slug, target.id, { title: "Target v2" });
    expect((await read(api(`/nodes/${guide.id}`))).json.data.fields.related).toMatchObject({ title: "Target v2" });
    // Unpublished: the reference is null; published again: back.
    await transition(h, p.slug, target.id, "unpublish");
    expect((await read(api(`/nodes/${guide.id}`))).json.data.fields.related).toBeNull();
    await transition(h, p.slug, target.id, "publish");
    expect((await read(api(`/nodes/${guide.id}`))).json.data.fields.related).toMatchObject({ id: target.id });
  });

  test("a reference elsewhere in the tree: its path follows a rename of its parent, and it shows once its parent is published", async () => {
    const other = await seedNode(h, p.slug, { slug: "other", title: "Other" }, true);
    const mid = await seedNode(h, p.slug, { slug: "mid", title: "Mid", parent_id: other.id }, true);
    const leaf = await seedNode(h, p.slug, { slug: "leaf", title: "Leaf", parent_id: mid.id }, true);
    const hidden = await seedNode(h, p.slug, { slug: "hidden", title: "Hidden", parent_id: other.id });
    const under = await seedNode(h, p.slug, { slug: "under", title: "Under", parent_id: hidden.id });
    const post = await seedNode(h, p.slug, { slug: "post", title: "Post", type: "post", parent_id: docs.id, fields: { related: leaf.id } }, true);
    const waiting = await seedNode(h, p.slug, { slug: "waiting", title: "Waiting", type: "post", parent_id: docs.id, fields: { related: under.id } }, true);
    expect((await read(api(`/nodes/${post.id}`))).json.data.fields.related.path).toBe("other/mid/leaf");
    await patchNode(h, p.slug, mid.id, { slug: "middle" });
    expect((await read(api(`/nodes/${post.id}`))).json.data.fields.related.path).toBe("other/middle/leaf");
    // A reference to a page whose parent is not published is null; publishing both shows it.
    expect((await read(api(`/nodes/${waiting.id}`))).json.data.fields.related).toBeNull();
    await transition(h, p.slug, hidden.id, "publish");
    await transition(h, p.slug, under.id, "publish");
    expect((await read(api(`/nodes/${waiting.id}`))).json.data.fields.related).toMatchObject({ id: under.id, path: "other/hidden/under" });
  });

  test("a published translation: the locale's answer, and a locale falling back to it", async () => {
    expect((await read(api(`/nodes/${guide.id}?locale=fr`))).json.data.fields.summary).toBe("Summary");
    expect((await read(api(`/nodes/${guide.id}?locale=fr-CA`))).json.data.fallback["/fields/summary"]).toBe("en");
    await translate(h, p.slug, guide.id, "fr", { fields: { summary: "Résumé" } });
    expect((await read(api(`/nodes/${guide.id}?locale=fr`))).json.data.fields.summary).toBe("Résumé");
    const chained = (await read(api(`/nodes/${guide.id}?locale=fr-CA`))).json.data;
    expect(chained.fields.summary).toBe("Résumé");
    expect(chained.fallback["/fields/summary"]).toBe("fr");
  });

  test("a sibling taking the path in a locale: the route names the other node from then on", async () => {
    const a = await seedNode(h, p.slug, { slug: "alpha", title: "Alpha", parent_id: docs.id }, true);
    const b = await seedNode(h, p.slug, { slug: "beta", title: "Beta", parent_id: docs.id }, true);
    expect((await read(api("/nodes/by-path/docs/alpha?locale=fr"))).json.data.id).toBe(a.id);
    // beta's French slug is alpha: in French, docs/alpha is beta (a translated slug wins over a base one).
    await translate(h, p.slug, b.id, "fr", { meta: { slug: "alpha", title: "Bêta" } });
    expect((await read(api("/nodes/by-path/docs/alpha?locale=fr"))).json.data.id).toBe(b.id);
  });

  test("an unpublished ancestor hides the page", async () => {
    const section = await seedNode(h, p.slug, { slug: "section", title: "Section", parent_id: docs.id }, true);
    const child = await seedNode(h, p.slug, { slug: "child", title: "Child", parent_id: section.id }, true);
    await read(api(`/nodes/${child.id}`));
    await transition(h, p.slug, section.id, "unpublish");
    await quiet();
    expect((await get(r, api(`/nodes/${child.id}`))).status).toBe(404);
  });

  test("a media item: its alt text as the page shows it", async () => {
    const image = (await uploadForm(h, p.slug, await twoColourPng(64, 32), "hero.png", { alt: "A hero" })).json.data;
    const post = await seedNode(h, p.slug, { slug: "pictured", title: "Pictured", type: "post", parent_id: docs.id, fields: { hero: image.id } }, true);
    expect((await read(api(`/nodes/${post.id}`))).json.data.fields.hero.alt).toBe("A hero");
    expect((await h.request("PATCH", `/admin/p/${p.slug}/media/${image.id}`, { body: { alt: { en: "The hero" } } })).status).toBe(200);
    expect((await read(api(`/nodes/${post.id}`))).json.data.fields.hero.alt).toBe("The hero");
  });

  test("the project's settings, its theme and its model", async () => {
    expect((await read(api(`/nodes/${guide.id}`))).json.data.seo.canonical).toBe("https://www.example.com/docs/guide");
    expect((await h.request("PATCH", `/admin/projects/${p.slug}`, { body: { public_base_url: "https://site.example.org" } })).status).toBe(200);
    const moved = (await read(api(`/nodes/${guide.id}`))).json.data;
    expect(moved.seo.canonical).toBe("https://site.example.org/docs/guide");
    expect((await h.request("PUT", `/admin/p/${p.slug}/theme`, { body: { name_override: "Brand" } })).status).toBe(200);
    expect((await read(api(`/nodes/${guide.id}`))).json.data.seo.og.site_name).toBe("Brand");
    // The model: `related` no longer a reference, so the id is answered as stored.
    await setModel(db, p.id, { ...MODEL, node_types: [{ ...MODEL.node_types[0], fields: { type: "object", properties: { summary: { type: "string" }, related: { type: "string" } } } }] });
    expect((await read(api(`/nodes/${guide.id}`))).json.data.fields.related).toBe(target.id);
    await setModel(db, p.id, MODEL);
  });

  // A render of a page with references is estimated far above jit_above_cost (jsonb_path_query's row guess): JIT compiled it on every
  // execution, 50-55 ms for a statement of 1 ms (tests/delivery-stored-processes.test.ts measures the reads).
  test.if(pgUrl !== null)("on PostgreSQL, the service's connections never JIT-compile a statement", async () => {
    expect(rows<{ jit: string }>(await db.execute(sql`select current_setting('jit') as jit`))[0]?.jit).toBe("off");
    // Estimated at ~125,000, past jit_above_cost (100,000): planned with JIT when it is on (a series of 1,000,000 is not).
    const plan = rows<{ "QUERY PLAN": unknown }>(await db.execute(sql`explain (format json) select count(*) from generate_series(1, 10000000) g`))[0]?.["QUERY PLAN"];
    expect(JSON.stringify(plan)).not.toContain('"JIT"');
  });

  test("a render that began before a write is not stored over it", async () => {
    const node = await seedNode(h, p.slug, { slug: "raced", title: "Raced", parent_id: docs.id }, true);
    const engine = await import("../src/delivery/stored");
    const project = await r.deps.db.execute(sql`select content_version from projects where id = ${p.id}`);
    const version = Number(rows<{ content_version: number }>(project)[0]?.content_version);
    await patchNode(h, p.slug, node.id, { title: "Raced v2" });
    // As if rendered at the version before the write: refused by the version check.
    await engine.storeAnswer(db, { id: p.id, version } as any, `id en ${node.id}`, "x", { body: "{}", etag: '"x"' }, { deps: [node.id], watch: [] });
    expect(await stored(`id en ${node.id}`)).toBeUndefined();
    expect((await read(api(`/nodes/${node.id}`))).json.data.title).toBe("Raced v2");
  });

  test("renders are stored together: one statement for many, a key given twice stored once, each checked against its project's version", async () => {
    const one = await seedNode(h, p.slug, { slug: "batched-1", title: "One", parent_id: docs.id }, true);
    const two = await seedNode(h, p.slug, { slug: "batched-2", title: "Two", parent_id: docs.id }, true);
    const version = Number(rows<{ v: number }>(await db.execute(sql`select content_version as v from projects where id = ${p.id}`))[0]?.v);
    const { storeAnswers } = await import("../src/delivery/stored");
    const item = (key: string, id: string, v: number, body: string, scope?: string) => ({
      project: { id: p.id, version: v },
      key: `batch ${key}`,
      answer: { body, etag: `"${body.length}"`, scope },
      deps: { deps: [id], watch: [`${p.id} "quoted\\path"`] },
    });
    const before = counted.calls();
    const stored = await storeAnswers(counted.db, "batch-test", [
      item("one", one.id, version, '{"a":"first"}', "docs/batched-1"),
      item("two", two.id, version - 1, "{}", "docs/batched-2"), // rendered before the last write: not stored
      item("one", one.id, version, '{"a":"second \\ \\"quoted\\""}'), // the same key again: the last one stored
      item("three", two.id, version, "{}", 'docs/"x"'),
    ]);
    expect(counted.calls() - before).toBe(1);
    expect(stored).toBe(2);
    const got = rows<{ key: string; body: string; watch: string[]; scope: string | null }>(
      await db.execute(sql`select key, body, watch, scope from delivery_answers where project_id = ${p.id} and key like 'batch %' order by key`),
    );
    expect(got).toEqual([
      { key: "batch one", body: '{"a":"second \\ \\"quoted\\""}', watch: [`${p.id} "quoted\\path"`], scope: null },
      { key: "batch three", body: "{}", watch: [`${p.id} "quoted\\path"`], scope: 'docs/"x"' },
    ]);
  });

  test("the refresher renders marked answers again before anyone reads them, and forgets those whose page is gone", async () => {
    const node = await seedNode(h, p.slug, { slug: "refreshed", title: "Refreshed", parent_id: docs.id }, true);
    const gone = await seedNode(h, p.slug, { slug: "gone", title: "Gone", parent_id: docs.id }, true);
    await translate(h, p.slug, node.id, "fr", { meta: { title: "Rafraîchi" } });
    // Each kind of key: by id, by path without fallback, a translation read; and a page about to go.
    const keys = [`id fr ${node.id}`, "path-none fr docs/refreshed", `tr fr ${node.id}`];
    await read(api(`/nodes/${node.id}?locale=fr`));
    await read(api("/nodes/by-path/docs/refreshed?locale=fr&fallback=none"));
    await read(api(`/translations/nodes/${node.id}?locale=fr`));
    await read(api("/nodes/by-path/docs/gone"));
    await translate(h, p.slug, node.id, "fr", { meta: { title: "Rafraîchi v2" } });
    await transition(h, p.slug, gone.id, "unpublish");
    for (const key of keys) expect((await stored(key))?.stale).toBe(true);
    expect((await stored("path en docs/gone"))?.stale).toBe(true);
    // As main.ts runs it: a look at a time, until this instance knows the new version and has rendered them all.
    const settled = async (): Promise<boolean> => {
      for (const key of keys) if ((await stored(key))?.stale !== false) return false;
      return (await stored("path en docs/gone")) === undefined;
    };
    await until(
      async () => (await r.refreshAnswers(50)) >= 0 && (await settled()),
      (done) => done,
      5000,
    );
    for (const key of keys) expect((await stored(key))?.stale).toBe(false);
    expect(await stored("path en docs/gone")).toBeUndefined();
    // Read from the store, rendered by the refresher: the new French title, in one statement each.
    const reads = [`/nodes/${node.id}?locale=fr`, "/nodes/by-path/docs/refreshed?locale=fr&fallback=none", `/translations/nodes/${node.id}?locale=fr`];
    for (const path of reads) {
      const again = await read(api(path));
      expect(again.statements).toBe(1);
      expect(again.json.data.id).toBe(node.id);
      expect(again.json.data.title).toBe("Rafraîchi v2");
    }
  });

  test("the housekeeping deletes the rows no read can use (an older epoch or model)", async () => {
    const node = await seedNode(h, p.slug, { slug: "kept", title: "Kept", parent_id: docs.id }, true);
    await read(api(`/nodes/${node.id}`));
    const before = Number(rows<{ n: number }>(await db.execute(sql`select count(*)::int as n from delivery_answers where project_id = ${p.id}`))[0]?.n);
    expect(before).toBeGreaterThan(1);
    expect((await h.request("PUT", `/admin/p/${p.slug}/theme`, { body: { name_override: "Brand 2" } })).status).toBe(200);
    const { purgeUnreadable } = await import("../src/delivery/stored");
    expect(await purgeUnreadable(db)).toBeGreaterThanOrEqual(before);
    expect(Number(rows<{ n: number }>(await db.execute(sql`select count(*)::int as n from delivery_answers where project_id = ${p.id}`))[0]?.n)).toBe(0);
    expect((await read(api(`/nodes/${node.id}`))).json.data.seo.og.site_name).toBe("Brand 2");
  });

  test("DELIVERY_STORED_ANSWERS=false stores nothing and renders every miss", async () => {
    const plain = await harness({ DELIVERY_CACHE_ENTRIES: "0", DELIVERY_STORED_ANSWERS: "false" });
    const node = await seedNode(h, p.slug, { slug: "unstored", title: "Unstored", parent_id: docs.id }, true);
    expect((await get(plain, api(`/nodes/${node.id}`))).status).toBe(200);
    expect(await stored(`id en ${node.id}`)).toBeUndefined();
  });
});
