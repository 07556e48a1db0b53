import { beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { entriesQuery, entriesStatement } from "../src/delivery/service";
import { rows } from "../src/lib/json";
import { compiledModel } from "../src/model/cache";
import { dropFieldIndexes, fieldIndexName, syncFieldIndexes, upgradeFieldIndexes } from "../src/model/indexes";
import { get, transition } from "./delivery.helpers";
import { setFields, setModel } from "./delivery-model.helpers";
import { harness, mirrorPublished, seedNode, seedProject } from "./helpers";

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
      // The fields are written to the working copy: published, they are what delivery filters and sorts.
      await transition(h, p.slug, n.id, "publish");
      ids[slug] = n.id;
    }
    // Without the field: sorts last ascending, first descending (PostgreSQL's NULL order), never matches a filter.
    const bare = await seedNode(h, p.slug, { slug: "z", title: "z", type: "post", parent_id: blog.id }, true);
    ids.z = bare.id;
    // Values the model would refuse (stored before it): compared as missing, never an error.
    const bad = await seedNode(h, p.slug, { slug: "bad", title: "bad", type: "post", parent_id: blog.id }, true);
    await setFields(db, p.id, bad.id, { date: "2026-02-30T00:00:00Z", price: "12", category: 7 });
    await transition(h, p.slug, bad.id, "publish");
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

  const kinds = { date: "date", price: "number", featured: "boolean" } as const;
  const nameOf = (name: string): string => fieldIndexName({ name, kind: kinds[name as keyof typeof kinds] ?? "text" });
  const shared = async (names: readonly string[]) =>
    rows<{ indexname: string; indexdef: string; valid: boolean }>(
      await db.execute(sql`select x.indexname, x.indexdef, i.indisvalid as valid from pg_indexes x join pg_class c on c.relname = x.indexname join pg_index i on i.indexrelid = c.oid
        where x.tablename = 'nodes' and x.indexname in ${
          names.length === 0
            ? sql`(null)`
            : sql`(${sql.join(
                names.map((n) => sql`${n}`),
                sql`, `,
              )})`
        }`),
    );

  test("syncFieldIndexes builds one expression index per (field name, kind), keyed by the project first, with no predicate", async () => {
    const model = await compiledModel(db, p.id, 1);
    await syncFieldIndexes(db, p.id, model);
    const names = ["category", "date", "featured", "price"].map(nameOf);
    const found = await shared(names);
    expect(found.map((r) => r.indexname).sort()).toEqual([...names].sort());
    const def = (n: string) => found.find((r) => r.indexname === nameOf(n))?.indexdef ?? "";
    expect(def("date")).toContain("(project_id, parent_id, status, cms_field_time((fields ->> 'date'::text)), id)");
    expect(def("price")).toContain("::numeric");
    expect(def("date")).not.toContain("WHERE");
    // Again: nothing to do.
    expect(await syncFieldIndexes(db, p.id, model)).toEqual({ created: [], dropped: [] });
    // price no longer indexed, date now a plain string: a text index of date comes; price's and the
    // date-time one go unless another project's model still indexes them.
    const v2 = await setModel(
      db,
      p.id,
      {
        node_types: [
          {
            name: "post",
            description: "",
            fields: { ...POST_FIELDS, properties: { ...POST_FIELDS.properties, price: { type: "number" }, date: { type: "string", index: true } } },
            blocks: null,
            children: null,
          },
        ],
      },
      { indexes: false },
    );
    const next = await syncFieldIndexes(db, p.id, await compiledModel(db, p.id, v2));
    const dateText = fieldIndexName({ name: "date", kind: "text" });
    expect((await shared([dateText])).map((r) => r.valid)).toEqual([true]);
    expect(next.created.filter((n) => n !== dateText)).toEqual([]);
    for (const n of next.dropped) expect([nameOf("date"), nameOf("price")]).toContain(n);
    await setModel(db, p.id, MODEL, { indexes: false });
    const back = await syncFieldIndexes(db, p.id, await compiledModel(db, p.id, v2 + 1));
    expect(back.created.sort()).toEqual(next.dropped.sort());
    expect(back.dropped).toContain(dateText);
  });

  test("projects indexing the same field share one index: syncs at once end with it once and valid; it goes with the last project using it", async () => {
    // Field names of this test only (the test database is shared by the test files).
    const tag = `t${crypto.randomUUID().slice(0, 8)}`;
    const fields = { type: "object", properties: { [`${tag}_at`]: { type: "string", format: "date-time", index: true }, [`${tag}_n`]: { type: "integer", index: true } } };
    const own = { node_types: [{ name: "post", description: "", fields, blocks: null, children: null }] };
    const names = [fieldIndexName({ name: `${tag}_at`, kind: "date" }), fieldIndexName({ name: `${tag}_n`, kind: "number" })].sort();
    const q = await seedProject(h);
    const r = await seedProject(h);
    const model = await compiledModel(db, q.id, await setModel(db, q.id, own, { indexes: false }));
    const other = await compiledModel(db, r.id, await setModel(db, r.id, own, { indexes: false }));
    const [a, b, c] = await Promise.all([syncFieldIndexes(db, q.id, model), syncFieldIndexes(db, q.id, model), syncFieldIndexes(db, r.id, other)]);
    expect([...new Set([...(a?.created ?? []), ...(b?.created ?? []), ...(c?.created ?? [])])].sort()).toEqual(names);
    expect((await shared(names)).map((x) => [x.indexname, x.valid]).sort()).toEqual(names.map((n) => [n, true]));
    // q deleted: r still indexes both fields.
    await db.execute(sql`delete from projects where id = ${q.id}`);
    expect(await dropFieldIndexes(db, q.id)).toEqual([]);
    expect((await shared(names)).length).toBe(2);
    // r's model drops one field: its index goes; then r deleted: the other goes.
    const less = { node_types: [{ name: "post", description: "", fields: { type: "object", properties: { [`${tag}_n`]: { type: "integer", index: true } } }, blocks: null, children: null }] };
    const v = await setModel(db, r.id, less, { indexes: false });
    expect((await syncFieldIndexes(db, r.id, await compiledModel(db, r.id, v))).dropped).toEqual([fieldIndexName({ name: `${tag}_at`, kind: "date" })]);
    await db.execute(sql`delete from projects where id = ${r.id}`);
    expect(await dropFieldIndexes(db, r.id)).toEqual([fieldIndexName({ name: `${tag}_n`, kind: "number" })]);
    expect(await shared(names)).toEqual([]);
    // And their statistics with them.
    const stats = rows<{ n: number }>(
      await db.execute(sql`select count(*)::int as n from pg_statistic_ext where stxname in (${names[0]!.replace("_fx_", "_fs_")}, ${names[1]!.replace("_fx_", "_fs_")})`),
    );
    expect(stats[0]?.n).toBe(0);
  });

  test("EXPLAIN: the filtered, field-sorted entries query reads through the shared field indexes", async () => {
    // A bigger collection, so that an index is worth it to the planner.
    const big = await seedNode(h, p.slug, { slug: "big", title: "Big", type: "collection" }, true);
    await db.execute(sql`insert into nodes (id, project_id, parent_id, slug, path, type, title, status, fields)
      select gen_random_uuid(), ${p.id}, ${big.id}, 'n' || i, 'big/n' || i, 'post', 'n' || i, 'published',
        jsonb_build_object('date', to_char(timestamptz '2020-01-01' + i * interval '1 hour', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), 'category', 'c' || (i % 10))
      from generate_series(1, 5000) i`);
    // Delivery reads the published versions: the bulk rows get theirs, as migration 0011 made them.
    await mirrorPublished(db, p.id);
    const [{ v }] = rows<{ v: number }>(await db.execute(sql`select model_version as v from projects where id = ${p.id}`)) as [{ v: number }];
    // The indexes and field statistics are the model API's (setModel): 5000 new rows want an ANALYZE.
    // Delivery's statement reads published_nodes: through the twins of the working copies' indexes and statistics.
    const twin = (name: string, kind: "date" | "text"): string => `published_${fieldIndexName({ name, kind })}`;
    const stats = rows<{ name: string }>(
      await db.execute(sql`select stxname as name from pg_statistic_ext where starts_with(stxname, 'nodes_fs_') or starts_with(stxname, 'published_nodes_fs_')`),
    ).map((r) => r.name);
    const statistic = (name: string): string => fieldIndexName({ name, kind: name === "date" ? "date" : "text" }).replace(/^nodes_fx_/, "nodes_fs_");
    expect(stats).toEqual(expect.arrayContaining(["category", "date"].flatMap((name) => [statistic(name), `published_${statistic(name)}`])));
    await db.execute(sql`analyze published_nodes`);
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
    expect(page).toContain(`Index Scan Backward using ${twin("date", "date")}`);
    expect(page).not.toContain("Sort Key");
    expect(plan.slice(0, plan.indexOf("->  Limit"))).toContain(twin("category", "text"));
    expect(plan).not.toContain("Seq Scan on published_nodes");
    const res = await get(h, api("/entries?collection=big&field.category=c3&sort=-field.date&per_page=3"));
    expect(res.json.total).toBe(500);
    expect(res.json.data.map((e: any) => e.slug)).toEqual(["n4993", "n4983", "n4973"]);
  });
  test("upgradeFieldIndexes replaces a per-project index (partial on the project) by the shared one, which the entries query then uses", async () => {
    const category = fieldIndexName({ name: "category", kind: "text" });
    const old = `nodes_fx_${p.id.replace(/-/g, "")}_${category.slice(-8)}`;
    // A database from before the shared indexes and the published versions (migration 0011): the
    // per-project index on the working copies, no shared one, and none on published_nodes.
    await db.execute(sql.raw(`drop index if exists "${category}"`));
    await db.execute(sql.raw(`drop index if exists "published_${category}"`));
    await db.execute(sql.raw(`create index "${old}" on nodes (parent_id, status, ((fields->>'category')), id) where project_id = '${p.id}'`));
    // Two starts at once (as two instances would): both build and drop, each tolerating the other.
    const [one, two] = await Promise.all([upgradeFieldIndexes(db), upgradeFieldIndexes(db)]);
    expect([...new Set([...(one ?? []), ...(two ?? [])])]).toEqual([old]);
    expect(await shared([old])).toEqual([]);
    expect((await shared([category])).map((r) => r.valid)).toEqual([true]);
    const twin = rows<{ valid: boolean }>(
      await db.execute(sql`select i.indisvalid as valid from pg_indexes x join pg_class c on c.relname = x.indexname join pg_index i on i.indexrelid = c.oid
        where x.tablename = 'published_nodes' and x.indexname = ${`published_${category}`}`),
    );
    expect(twin.map((r) => r.valid)).toEqual([true]);
    // Again: nothing left to replace.
    expect(await upgradeFieldIndexes(db)).toEqual([]);
    const [{ v }] = rows<{ v: number }>(await db.execute(sql`select model_version as v from projects where id = ${p.id}`)) as [{ v: number }];
    const project = { id: p.id, slug: p.slug, name: p.slug, defaultLocale: "en", locales: ["en"], publicBaseUrl: null, siteName: p.slug, version: 0, modelVersion: v };
    const input = entriesQuery({ collection: "big", page: "1", per_page: "20", q: undefined, sort: "-updated_at", filters: [{ param: "field.category", name: "category", op: "eq", value: "c3" }] });
    // Delivery reads the published versions, through the twin of the shared index.
    const plan = rows<Record<string, string>>(await db.execute(sql`explain ${await entriesStatement(db, project, input)}`))
      .map((r) => Object.values(r)[0])
      .join("\n");
    expect(plan).toContain(`published_${category}`);
    expect(plan).not.toContain("Seq Scan on published_nodes");
  });
});
