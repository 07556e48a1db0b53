import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { nodes } from "../db/schema";
import { bumpContentVersion } from "../src/write/unit";
import { get, patchNode } from "./delivery.helpers";
import { harness, seedNode, seedProject } from "./helpers";

describe("delivery: collection entries", async () => {
  const h = await harness();
  const p = await seedProject(h, { public_base_url: "https://www.example.com" });
  const api = (rest: string): string => `/api/p/${p.slug}${rest}`;
  const section = await seedNode(h, p.slug, { slug: "news", title: "News" }, true);
  const blog = await seedNode(h, p.slug, { slug: "blog", title: "Blog", type: "collection", parent_id: section.id }, true);
  // Titles are lowercase letters so every collation orders them alike.
  const names = ["delta", "alpha", "echo", "charlie", "bravo"];
  const entries: any[] = [];
  for (const [i, name] of names.entries()) {
    entries.push(await seedNode(h, p.slug, { slug: `${name}-post`, title: name, type: "entry", parent_id: blog.id, position: 10 - i }, true));
  }
  await seedNode(h, p.slug, { slug: "draft-post", title: "alpha draft", type: "entry", parent_id: blog.id });
  // Touch them in another order, so updated_at differs from created_at.
  for (const i of [2, 0, 4, 1, 3]) await patchNode(h, p.slug, entries[i].id, { seo: { description: `touched ${i}` } });
  const byName = (n: string) => entries[names.indexOf(n)];

  test("page 1 with defaults: summaries of published entries, newest update first", async () => {
    const res = await get(h, api("/entries?collection=news/blog"));
    expect(res.status).toBe(200);
    expect(Object.keys(res.json).sort()).toEqual(["data", "page", "per_page", "total"]);
    expect(res.json).toMatchObject({ total: 5, page: 1, per_page: 20 });
    expect(res.json.data.map((e: any) => Object.keys(e).sort())).toEqual(Array(5).fill(["fields", "id", "path", "slug", "title", "updated_at"]));
    expect(res.json.data.map((e: any) => e.id)).toEqual([3, 1, 4, 0, 2].map((i) => entries[i].id));
    const first = res.json.data[0];
    expect(first).toEqual({ id: entries[3].id, slug: "charlie-post", title: "charlie", fields: {}, path: "news/blog/charlie-post", updated_at: expect.any(String) });
    expect(new Date(first.updated_at).toISOString()).toBe(first.updated_at);
    const admin = (await h.request("GET", `/admin/p/${p.slug}/nodes/${entries[3].id}`)).json.data;
    expect(first.updated_at).toBe(admin.updated_at);
  });

  test("every sort key, with ids breaking ties", async () => {
    const ids = async (sort: string): Promise<string[]> => (await get(h, api(`/entries?collection=news/blog&sort=${encodeURIComponent(sort)}`))).json.data.map((e: any) => e.id);
    const sortedNames = [...names].sort();
    expect(await ids("title")).toEqual(sortedNames.map((n) => byName(n).id));
    expect(await ids("-title")).toEqual([...sortedNames].reverse().map((n) => byName(n).id));
    expect(await ids("created_at")).toEqual(entries.map((e) => e.id));
    expect(await ids("-created_at")).toEqual([...entries].reverse().map((e) => e.id));
    expect(await ids("position")).toEqual([...entries].reverse().map((e) => e.id));
    expect(await ids("updated_at")).toEqual([2, 0, 4, 1, 3].map((i) => entries[i].id));
    expect(await ids("-updated_at")).toEqual([3, 1, 4, 0, 2].map((i) => entries[i].id));
    const bad = await get(h, api("/entries?collection=news/blog&sort=random"));
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe("invalid_sort");
  });

  test("q matches title or slug, case-insensitively, with LIKE characters taken literally", async () => {
    const byTitle = await get(h, api("/entries?collection=news/blog&q=ALPH"));
    expect(byTitle.json.data.map((e: any) => e.slug)).toEqual(["alpha-post"]);
    expect(byTitle.json.total).toBe(1);
    const bySlug = await get(h, api("/entries?collection=news/blog&q=-POST&sort=title"));
    expect(bySlug.json.total).toBe(5);
    for (const q of ["%", "_", "\\"]) {
      const res = await get(h, api(`/entries?collection=news/blog&q=${encodeURIComponent(q)}`));
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({ data: [], total: 0 });
    }
    expect((await get(h, api(`/entries?collection=news/blog&q=${"x".repeat(201)}`))).json.error.code).toBe("invalid_request");
  });

  test("per_page: clamped above 100, refused below 1 or when not a number; page likewise", async () => {
    expect((await get(h, api("/entries?collection=news/blog&per_page=500"))).json.per_page).toBe(100);
    expect((await get(h, api("/entries?collection=news/blog&per_page=100"))).json.per_page).toBe(100);
    for (const bad of ["per_page=0", "per_page=-1", "per_page=abc", "per_page=1.5", "per_page=", "page=0", "page=x", "page=99999999999999999999"]) {
      const res = await get(h, api(`/entries?collection=news/blog&${bad}`));
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe("invalid_request");
      expect(res.json.error.details.field).toBe(bad.split("=")[0]);
    }
    const past = await get(h, api("/entries?collection=news/blog&page=9&per_page=2"));
    expect(past.status).toBe(200);
    expect(past.json).toEqual({ data: [], total: 5, page: 9, per_page: 2 });
  });

  test("collection: missing → 400 missing_parameter; unknown, unpublished or not a collection → 404", async () => {
    const missing = await get(h, api("/entries"));
    expect(missing.status).toBe(400);
    expect(missing.json.error.code).toBe("missing_parameter");
    expect((await get(h, api("/entries?collection="))).json.error.code).toBe("missing_parameter");
    for (const c of ["nope", "news", "news/blog/alpha-post", "blog", "news//blog"]) {
      const res = await get(h, api(`/entries?collection=${c}`));
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ error: { code: "not_found", message: "collection not found" } });
    }
    expect((await get(h, api("/entries?collection=/news/blog/"))).json.total).toBe(5);
  });

  test("pages never repeat an entry, even when every sort key ties", async () => {
    const q = await seedProject(h);
    const col = await seedNode(h, q.slug, { slug: "items", title: "Items", type: "collection" }, true);
    const made: string[] = [];
    for (let i = 0; i < 23; i++) made.push((await seedNode(h, q.slug, { slug: `item-${i}`, title: "same", parent_id: col.id, position: 1 }, true)).id);
    const at = new Date("2030-01-01T00:00:00.000Z");
    await h.deps.db.update(nodes).set({ updatedAt: at, createdAt: at }).where(eq(nodes.parentId, col.id));
    await bumpContentVersion(h.deps.db, q.id);
    for (const sort of ["-updated_at", "updated_at", "title", "-title", "created_at", "-created_at", "position"]) {
      const seen: string[] = [];
      for (let page = 1; page <= 4; page++) {
        const res = await get(h, `/api/p/${q.slug}/entries?collection=items&sort=${sort}&per_page=7&page=${page}`);
        expect(res.json.total).toBe(23);
        seen.push(...res.json.data.map((e: any) => e.id));
      }
      expect(seen.length).toBe(23);
      expect(new Set(seen).size).toBe(23);
      const asc = [...made].sort();
      expect(seen).toEqual(sort.startsWith("-") ? asc.reverse() : asc);
    }
  });
});
