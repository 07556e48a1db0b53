import { beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { entriesQuery, entriesStatement } from "../src/delivery/service";
import { rows } from "../src/lib/json";
import { compiledModel } from "../src/model/cache";
import { dropFieldIndexes, fieldIndexName, syncFieldIndexes } from "../src/model/indexes";
import { get } from "./delivery.helpers";
import { setFields, setModel } from "./delivery-model.helpers";
import { harness, seedNode, seedProject } from "./helpers";

const POST_FIELDS = {
  type: "object",
  properties: {
    date: { type: "string", format: "date-time", index: true },
    category: { type: "string", index: true },
    price: { type: "number", index: true },
    featured: { type: "boolean", index: true },
    tags: { type: "array", items: { type: "string" }, index: true },
    note: { type: "string" },
  },
};
const MODEL = { node_types: [{ name: "post", description: "", fields: POST_FIELDS, blocks: null, children: null }] };

// Dates with offsets and precisions chosen so that text order and time order differ.
const POSTS = [
  { slug: "a", date: "2026-01-01T10:00:00+02:00", category: "news", price: 9, featured: true }, // 08:00Z
  { slug: "b", date: "2026-01-01T09:00:00Z", category: "tech", price: 10, featured: false },
  { slug: "c", date: "2026-01-01T08:30:00.5Z", category: "news", price: 100, featured: false },
  { slug: "d", date: "2026-02-15T00:00:00-05:00", category: "life", price: 2.5, featured: true }, // 05:00Z
  { slug: "e", date: "2025-12-31T23:59:59Z", category: "news", price: -1, featured: false },
];

describe("delivery: entries filtered and sorted by fields", async () => {
  const h = await harness();
  const db = h.deps.db;
  const p = await seedProject(h);
  const api = (rest: string): string => `/api/p/${p.slug}${rest}`;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    await setModel(db, p.id, MODEL);
    const blog = await seedNode(h, p.slug, { slug: "blog", title: "Blog", type: "collection" }, true);
    for (const { slug, ...fields } of POSTS) {
      const n = await seedNode(h, p.slug, { slug, title: slug, type: "post", parent_id: blog.id }, true);
      await setFields(db, p.id, n.id, { ...fields, note: slug });
      ids[slug] = n.id;
    }
    // Without the field: sorts last ascending, first descending (PostgreSQL's NULL order), never matches a filter.
    const bare = await seedNode(h, p.slug, { slug: "z", title: "z", type: "post", parent_id: blog.id }, true);
    ids.z = bare.id;
    // Values the model would refuse (stored before it): compared as missing, never an error.
    const bad = await seedNode(h, p.slug, { slug: "bad", title: "bad", type: "post", parent_id: blog.id }, true);
    await setFields(db, p.id, bad.id, { date: "2026-02-30T00:00:00Z", price: "12", category: 7 });
    await seedNode(h, p.slug, { slug: "draft", title: "draft", type: "post", parent_id: blog.id });
  });

  const slugs = async (query: string): Promise<string[]> => {
    const res = await get(h, api(`/entries?collection=blog&${query}`));
    if (res.status !== 200) throw new Error(`${query}: ${res.status} ${res.text}`);
    return res.json.data.map((e: any) => e.slug);
  };
  const error = async (query: string): Promise<{ status: number; code: string; field: unknown; message: string }> => {
    const res = await get(h, api(`/entries?collection=blog&${query}`));
    return { status: res.status, code: res.json?.error?.code, field: res.json?.error?.details?.field, message: res.json?.error?.message };
  };

  test("sort by a date-time field orders by instant, whatever the offset and precision", async () => {
    expect(await slugs("sort=field.date")).toEqual(["e", "a", "c", "b", "d", "z", "bad"]);
    expect(await slugs("sort=-field.date")).toEqual(["bad", "z", "d", "b", "c", "a", "e"]);
  });

  test("sort by a number field orders numerically", async () => {
    expect(await slugs("sort=field.price")).toEqual(["e", "d", "a", "b", "c", "z", "bad"]);
    expect(await slugs(`sort=-field.price&${encodeURI("field.price[gte]")}=0`)).toEqual(["c", "b", "a", "d"]);
  });

  test("equality, in, and ranges; total counts the filtered entries", async () => {
    const res = await get(h, api("/entries?collection=blog&field.category=news&sort=-field.date&per_page=2"));
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ total: 3, page: 1, per_page: 2 });
    expect(res.json.data.map((e: any) => e.slug)).toEqual(["c", "a"]);
    expect(Object.keys(res.json.data[0]).sort()).toEqual(["fields", "id", "path", "slug", "title", "updated_at"]);
    expect(res.json.data[0].fields).toEqual({ date: "2026-01-01T08:30:00.5Z", category: "news", price: 100, featured: false, note: "c" });
    expect(await slugs(`${encodeURI("field.category[in]")}=tech,life&sort=field.date`)).toEqual(["b", "d"]);
    expect(await slugs(`${encodeURI("field.date[gte]")}=2026-01-01T08:00:00Z&${encodeURI("field.date[lt]")}=2026-01-01T09:00:00Z&sort=field.date`)).toEqual(["a", "c"]);
    // A plain date is 00:00 UTC; an offset in the bound counts.
    expect(await slugs(`${encodeURI("field.date[lt]")}=2026-01-01&sort=field.date`)).toEqual(["e"]);
    expect(await slugs(`${encodeURIComponent("field.date[lte]")}=${encodeURIComponent("2026-01-01T10:00:00+02:00")}&sort=field.date`)).toEqual(["e", "a"]);
    expect(await slugs(`${encodeURI("field.price[gt]")}=9&${encodeURI("field.price[lt]")}=100&sort=field.price`)).toEqual(["b"]);
    expect(await slugs("field.featured=true&sort=field.date")).toEqual(["a", "d"]);
    expect(await slugs("field.price=2.5")).toEqual(["d"]);
    expect(await slugs(`field.category=news&q=c`)).toEqual(["c"]);
    expect(await slugs("field.category=none")).toEqual([]);
  });

  test("a field not declared, not indexed or not comparable, and bad values are 400 naming the parameter", async () => {
    expect(await error("field.nope=1")).toMatchObject({ status: 400, code: "invalid_request", field: "field.nope" });
    expect((await error("field.nope=1")).message).toContain("indexed: date, price, category, featured");
    expect(await error("field.note=a")).toMatchObject({ status: 400, code: "invalid_request", field: "field.note" });
    expect(await error("field.tags=a")).toMatchObject({ status: 400, code: "invalid_request", field: "field.tags" });
    expect(await error("field.price=ten")).toMatchObject({ status: 400, code: "invalid_request", field: "field.price" });
    expect(await error(`${encodeURI("field.price[in]")}=1,,2`)).toMatchObject({ status: 400, code: "invalid_request", field: "field.price[in]" });
    expect(await error(`${encodeURI("field.date[gte]")}=yesterday`)).toMatchObject({ status: 400, code: "invalid_request", field: "field.date[gte]" });
    // No offset; a day its month does not have (a cast would fail in the database).
    expect(await error(`${encodeURI("field.date[gte]")}=2026-02-01T00:00:00`)).toMatchObject({ status: 400, code: "invalid_request", field: "field.date[gte]" });
    expect(await error(`${encodeURI("field.date[gte]")}=2026-02-30T00:00:00Z`)).toMatchObject({ status: 400, code: "invalid_request", field: "field.date[gte]" });
    expect(await error(`${encodeURI("field.date")}=2026-02-30`)).toMatchObject({ status: 400, code: "invalid_request", field: "field.date" });
    expect(await error(`${encodeURI("field.category[gt]")}=a`)).toMatchObject({ status: 400, code: "invalid_request", field: "field.category[gt]" });
    expect(await error(`${encodeURI("field.category[like]")}=a`)).toMatchObject({ status: 400, code: "invalid_request", field: "field.category[like]" });
    expect(await error("field.category=a&field.category=b")).toMatchObject({ status: 400, code: "invalid_request", field: "field.category" });
    expect(await error("field.category=")).toMatchObject({ status: 400, code: "invalid_request", field: "field.category" });
    expect(await error("field.featured=yes")).toMatchObject({ status: 400, code: "invalid_request", field: "field.featured" });
    for (const sort of ["field.nope", "-field.note", "field.tags", "field.", "fields.date"]) {
      expect(await error(`sort=${sort}`)).toMatchObject({ status: 400, code: "invalid_sort", field: "sort" });
    }
  });

  test("a project without a model has no indexed field: field filters and sorts are 400", async () => {
    const q = await seedProject(h);
    await seedNode(h, q.slug, { slug: "blog", title: "Blog", type: "collection" }, true);
    const f = await get(h, `/api/p/${q.slug}/entries?collection=blog&field.date=2026-01-01`);
    expect(f.status).toBe(400);
    expect(f.json.error).toMatchObject({ code: "invalid_request", details: { field: "field.date" } });
    expect(f.json.error.message).toContain("indexed: none");
    const s = await get(h, `/api/p/${q.slug}/entries?collection=blog&sort=-field.date`);
    expect(s.status).toBe(400);
    expect(s.json.error.code).toBe("invalid_sort");
  });

  test("syncFieldIndexes creates one partial expression index per indexed field, drops those no longer wanted", async () => {
    const model = await compiledModel(db, p.id, 1);
    const first = await syncFieldIndexes(db, p.id, model);
    const names = ["category", "date", "featured", "price"].map((name) => fieldIndexName(p.id, { name, kind: ({ date: "date", price: "number", featured: "boolean" } as const)[name] ?? "text" }));
    expect([...first.created].sort()).toEqual([...names].sort());
    const found = rows<{ indexname: string; indexdef: string }>(
      await db.execute(sql`select indexname, indexdef from pg_indexes where tablename = 'nodes' and indexname like ${`nodes_fx_${p.id.replace(/-/g, "")}_%`}`),
    );
    expect(found.map((r) => r.indexname).sort()).toEqual([...names].sort());
    const def = (n: string) => found.find((r) => r.indexname === fieldIndexName(p.id, { name: n, kind: n === "date" ? "date" : n === "price" ? "number" : "text" }))?.indexdef ?? "";
    expect(def("date")).toContain("cms_field_time((fields ->> 'date'::text))");
    expect(def("price")).toContain("::numeric");
    expect(def("date")).toContain(`WHERE (project_id = '${p.id}'::uuid)`);
    // Again: nothing to do.
    expect(await syncFieldIndexes(db, p.id, model)).toEqual({ created: [], dropped: [] });
    // price no longer indexed, date now a plain string: price's index and date's date-time index go, a text one comes.
    const v2 = await setModel(db, p.id, {
      node_types: [
        {
          name: "post",
          description: "",
          fields: { ...POST_FIELDS, properties: { ...POST_FIELDS.properties, price: { type: "number" }, date: { type: "string", index: true } } },
          blocks: null,
          children: null,
        },
      ],
    });
    const next = await syncFieldIndexes(db, p.id, await compiledModel(db, p.id, v2));
    expect(next.dropped.sort()).toEqual([fieldIndexName(p.id, { name: "date", kind: "date" }), fieldIndexName(p.id, { name: "price", kind: "number" })].sort());
    expect(next.created).toEqual([fieldIndexName(p.id, { name: "date", kind: "text" })]);
    await setModel(db, p.id, MODEL);
    await syncFieldIndexes(db, p.id, await compiledModel(db, p.id, v2 + 1));
  });

  test("syncs at once (two instances on one project, another project beside) end with each index once and valid; dropFieldIndexes removes a project's only", async () => {
    const q = await seedProject(h);
    const r = await seedProject(h);
    const model = await compiledModel(db, q.id, await setModel(db, q.id, MODEL));
    const other = await compiledModel(db, r.id, await setModel(db, r.id, MODEL));
    const [a, b] = await Promise.all([syncFieldIndexes(db, q.id, model), syncFieldIndexes(db, q.id, model), syncFieldIndexes(db, r.id, other)]);
    expect(new Set([...(a?.created ?? []), ...(b?.created ?? [])]).size).toBe(4);
    const listed = async (id: string) =>
      rows<{ n: number; valid: boolean }>(
        await db.execute(
          sql`select count(*)::int as n, coalesce(bool_and(i.indisvalid), true) as valid from pg_class c join pg_index i on i.indexrelid = c.oid where c.relname like ${`nodes_fx_${id.replace(/-/g, "")}_%`}`,
        ),
      )[0];
    expect(await listed(q.id)).toEqual({ n: 4, valid: true });
    expect(await listed(r.id)).toEqual({ n: 4, valid: true });
    expect((await dropFieldIndexes(db, q.id)).length).toBe(4);
    expect(await listed(q.id)).toEqual({ n: 0, valid: true });
    expect(await listed(r.id)).toEqual({ n: 4, valid: true });
    await dropFieldIndexes(db, r.id);
  });

  test("EXPLAIN: the filtered, field-sorted entries query reads through the project's field indexes", async () => {
    // A bigger collection, so that an index is worth it to the planner.
    const big = await seedNode(h, p.slug, { slug: "big", title: "Big", type: "collection" }, true);
    await db.execute(sql`insert into nodes (id, project_id, parent_id, slug, path, type, title, status, fields)
      select gen_random_uuid(), ${p.id}, ${big.id}, 'n' || i, 'big/n' || i, 'post', 'n' || i, 'published',
        jsonb_build_object('date', to_char(timestamptz '2020-01-01' + i * interval '1 hour', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), 'category', 'c' || (i % 10))
      from generate_series(1, 5000) i`);
    const [{ v }] = rows<{ v: number }>(await db.execute(sql`select model_version as v from projects where id = ${p.id}`)) as [{ v: number }];
    await syncFieldIndexes(db, p.id, await compiledModel(db, p.id, v));
    // The field statistics exist (the planner ignores a partial index's own); 5000 new rows want an ANALYZE.
    const stats = rows<{ name: string }>(await db.execute(sql`select stxname as name from pg_statistic_ext where starts_with(stxname, 'nodes_fs_')`)).map((r) => r.name);
    expect(stats).toEqual(
      expect.arrayContaining(["category", "date"].map((name) => fieldIndexName(p.id, { name, kind: name === "date" ? "date" : "text" }).replace(/^nodes_fx_[0-9a-f]{32}_/, "nodes_fs_"))),
    );
    await db.execute(sql`analyze nodes`);
    const project = { id: p.id, slug: p.slug, name: p.slug, defaultLocale: "en", locales: ["en"], publicBaseUrl: null, siteName: p.slug, version: 0, modelVersion: v };
    const input = entriesQuery({
      collection: "big",
      page: "5",
      per_page: "20",
      q: undefined,
      sort: "-field.date",
      filters: [{ param: "field.category", name: "category", op: "eq", value: "c3" }],
    });
    const plan = rows<Record<string, string>>(await db.execute(sql`explain ${await entriesStatement(db, project, input)}`))
      .map((r) => Object.values(r)[0])
      .join("\n");
    // The page (the lateral under the Limit) walks the date index backwards, keeping c3's entries (a
    // tenth of the collection, as the statistics tell: without them the planner guessed 0.5 % and
    // sorted the whole category by date); the total counts through the category index.
    const page = plan.slice(plan.indexOf("->  Limit"));
    expect(page).toContain(`Index Scan Backward using ${fieldIndexName(p.id, { name: "date", kind: "date" })}`);
    expect(page).not.toContain("Sort Key");
    expect(plan.slice(0, plan.indexOf("->  Limit"))).toContain(fieldIndexName(p.id, { name: "category", kind: "text" }));
    expect(plan).not.toContain("Seq Scan on nodes");
    const res = await get(h, api("/entries?collection=big&field.category=c3&sort=-field.date&per_page=3"));
    expect(res.json.total).toBe(500);
    expect(res.json.data.map((e: any) => e.slug)).toEqual(["n4993", "n4983", "n4973"]);
  });
});
