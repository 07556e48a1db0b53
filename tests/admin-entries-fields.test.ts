// The admin entries list (list_entries: REST and MCP) filtered and sorted by indexed node fields,
// as delivery's entries are (src/model/field-filters.ts); entry rows carry their fields.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, asc, count, eq, sql } from "drizzle-orm";
import { nodes, projects } from "../db/schema";
import { entriesSelection } from "../src/content/editor";
import { EntryQuery } from "../src/content/model";
import { rows } from "../src/lib/json";
import { fieldIndexName } from "../src/model/indexes";
import { seedNode, seedProject } from "./helpers";
import { call, callError, mcpHarness } from "./mcp-harness";
import { setModel } from "./model.helpers";

const MODEL = {
  node_types: [
    {
      name: "post",
      description: "a blog post",
      fields: {
        type: "object",
        properties: {
          date: { type: "string", format: "date-time", index: true },
          category: { type: "string", index: true },
          price: { type: "number", index: true },
          author: { type: "string", format: "node" },
          note: { type: "string" },
        },
      },
      blocks: null,
      children: null,
    },
  ],
};

// Offsets chosen so that text order and time order differ.
const POSTS = [
  { slug: "a", date: "2026-01-01T10:00:00+02:00", category: "news", price: 9, publish: true }, // 08:00Z
  { slug: "b", date: "2026-01-01T09:00:00Z", category: "tech", price: 10, publish: false },
  { slug: "c", date: "2026-01-01T08:30:00Z", category: "news", price: 100, publish: false },
  { slug: "d", date: "2026-02-15T00:00:00-05:00", category: "life", price: 2.5, publish: true },
  { slug: "e", date: "2025-12-31T23:59:59Z", category: "news", price: -1, publish: true },
];

describe("admin entries: filtered and sorted by fields (REST and MCP)", async () => {
  const m = await mcpHarness();
  const h = m.h;
  const db = h.deps.db;
  const p = await seedProject(h);
  const ids: Record<string, string> = {};
  let authorId = "";
  let draftAuthorId = "";
  let client: Awaited<ReturnType<typeof m.connect>>;

  beforeAll(async () => {
    await setModel(db, p.id, MODEL);
    const blog = await seedNode(h, p.slug, { slug: "blog", title: "Blog", type: "collection" }, true);
    authorId = (await seedNode(h, p.slug, { slug: "ada", title: "Ada", type: "page" }, true)).id;
    draftAuthorId = (await seedNode(h, p.slug, { slug: "bob", title: "Bob", type: "page" })).id;
    for (const { slug, publish, ...fields } of POSTS) {
      const author = slug === "a" ? authorId : slug === "d" ? draftAuthorId : undefined;
      const n = await seedNode(h, p.slug, { slug, title: slug, type: "post", parent_id: blog.id, fields: { ...fields, note: slug, ...(author ? { author } : {}) } }, publish);
      ids[slug] = n.id;
    }
    client = await m.connect((await m.token(p.slug)).token);
  });
  afterAll(() => m.stop());

  const list = (query: string) => h.request("GET", `/admin/p/${p.slug}/entries?collection=blog&${query}`);
  const slugs = async (query: string): Promise<string[]> => {
    const res = await list(query);
    if (res.status !== 200) throw new Error(`${query}: ${res.status} ${res.text}`);
    return res.json.data.map((e: any) => e.slug);
  };
  const q = (param: string, value: string): string => `${encodeURIComponent(param)}=${encodeURIComponent(value)}`;

  test("REST: field sorts and filters over drafts and published entries; rows carry their fields", async () => {
    expect(await slugs("sort=field.date")).toEqual(["e", "a", "c", "b", "d"]);
    expect(await slugs("sort=-field.price")).toEqual(["c", "b", "a", "d", "e"]);
    const res = await list(`field.category=news&sort=-field.date&per_page=2`);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ total: 3, page: 1, per_page: 2 });
    expect(res.json.data.map((e: any) => [e.slug, e.status])).toEqual([
      ["c", "draft"],
      ["a", "published"],
    ]);
    expect(res.json.data[1].fields).toEqual({ date: "2026-01-01T10:00:00+02:00", category: "news", price: 9, note: "a", author: authorId });
    expect(await slugs(`${q("field.category[in]", "tech,life")}&sort=field.date`)).toEqual(["b", "d"]);
    expect(await slugs(`${q("field.date[gte]", "2026-01-01T08:00:00Z")}&${q("field.date[lt]", "2026-01-01T09:00:00Z")}&sort=field.date`)).toEqual(["a", "c"]);
    expect(await slugs(`${q("field.date[lt]", "2026-01-01")}`)).toEqual(["e"]);
    expect(await slugs(`${q("field.price[gt]", "9")}&${q("field.price[lte]", "100")}&sort=field.price`)).toEqual(["b", "c"]);
    expect(await slugs("field.category=news&status=published&sort=field.date")).toEqual(["e", "a"]);
    expect(await slugs("field.category=news&q=c")).toEqual(["c"]);
    expect(await slugs("field.category=none")).toEqual([]);
  });

  test("REST: bad filters and sorts are 400 naming the parameter; another project's collection is 404", async () => {
    const error = async (query: string) => {
      const res = await list(query);
      return { status: res.status, code: res.json?.error?.code, field: res.json?.error?.details?.field, message: String(res.json?.error?.message) };
    };
    expect(await error("field.nope=1")).toMatchObject({ status: 400, code: "invalid_request", field: "field.nope" });
    expect((await error("field.nope=1")).message).toContain("indexed: date, price, category");
    expect(await error("field.note=a")).toMatchObject({ status: 400, code: "invalid_request", field: "field.note" });
    expect(await error("field.price=ten")).toMatchObject({ status: 400, code: "invalid_request", field: "field.price" });
    expect(await error(q("field.price[in]", "1,,2"))).toMatchObject({ status: 400, code: "invalid_request", field: "field.price[in]" });
    expect(await error(q("field.date[gte]", "yesterday"))).toMatchObject({ status: 400, code: "invalid_request", field: "field.date[gte]" });
    expect(await error(q("field.category[gt]", "a"))).toMatchObject({ status: 400, code: "invalid_request", field: "field.category[gt]" });
    expect(await error(q("field.category[like]", "a"))).toMatchObject({ status: 400, code: "invalid_request", field: "field.category[like]" });
    expect(await error("field.category=a&field.category=b")).toMatchObject({ status: 400, code: "invalid_request", field: "field.category" });
    expect(await error("field.category=")).toMatchObject({ status: 400, code: "invalid_request", field: "field.category" });
    for (const sort of ["field.nope", "-field.note"]) expect(await error(`sort=${sort}`)).toMatchObject({ status: 400, code: "invalid_sort", field: "sort" });
    expect(await error("sort=fields.date")).toMatchObject({ status: 400, code: "invalid_request", field: "sort" });
    // The tool's input field is not a query parameter.
    expect(await error("filters=x")).toMatchObject({ status: 400, code: "invalid_input" });
    const other = await seedProject(h);
    const res = await h.request("GET", `/admin/p/${other.slug}/entries?collection=blog&field.category=news`);
    expect(res.status).toBe(404);
  });

  test("a project without a model: field filters and sorts are 400, plain lists unchanged", async () => {
    const o = await seedProject(h);
    await seedNode(h, o.slug, { slug: "blog", title: "Blog", type: "collection" });
    const f = await h.request("GET", `/admin/p/${o.slug}/entries?collection=blog&field.date=2026-01-01`);
    expect(f.status).toBe(400);
    expect(f.json.error).toMatchObject({ code: "invalid_request", details: { field: "field.date" } });
    expect(f.json.error.message).toContain("indexed: none");
    const s = await h.request("GET", `/admin/p/${o.slug}/entries?collection=blog&sort=-field.date`);
    expect(s.json.error.code).toBe("invalid_sort");
    expect((await h.request("GET", `/admin/p/${o.slug}/entries?collection=blog`)).status).toBe(200);
  });

  test("MCP: list_entries declares filters and field sorts; filters, sorts and errors as tool errors", async () => {
    const tool = (await client.listTools()).tools.find((t) => t.name === "list_entries");
    const props = (tool?.inputSchema.properties ?? {}) as Record<string, any>;
    expect(props.filters?.type).toBe("array");
    expect(Object.keys(props.filters.items.properties).sort()).toEqual(["field", "op", "value"]);
    expect(tool?.description).toContain("field.<name>");
    const out = await call(client, "list_entries", {
      collection: "blog",
      sort: "-field.date",
      filters: [
        { field: "category", op: "in", value: ["news", "tech"] },
        { field: "date", op: "gte", value: "2026-01-01" },
      ],
    });
    expect(out.total).toBe(3);
    expect(out.entries.map((e: any) => e.slug)).toEqual(["b", "c", "a"]);
    expect(out.entries[0].fields).toMatchObject({ category: "tech", price: 10 });
    // A value with a comma is one value in a tool's in-list; numbers and booleans may come typed.
    expect((await call(client, "list_entries", { collection: "blog", filters: [{ field: "category", op: "in", value: ["news,tech"] }] })).total).toBe(0);
    expect((await call(client, "list_entries", { collection: "blog", filters: [{ field: "price", value: 2.5 }] })).entries.map((e: any) => e.slug)).toEqual(["d"]);
    expect((await call(client, "list_entries", { collection: "blog", sort: "field.price", status: "draft" })).entries.map((e: any) => e.slug)).toEqual(["b", "c"]);
    expect(await callError(client, "list_entries", { collection: "blog", filters: [{ field: "note", value: "a" }] })).toContain("field.note");
    expect(await callError(client, "list_entries", { collection: "blog", filters: [{ field: "price", op: "gt", value: "ten" }] })).toContain("field.price[gt]");
    expect(await callError(client, "list_entries", { collection: "blog", filters: [{ field: "price", value: [1, 2] }] })).toContain('array is for op "in"');
    expect(await callError(client, "list_entries", { collection: "blog", sort: "-field.note" })).toContain("invalid_sort");
  });

  test("delivery entries carry fields too, references expanded to the published target or null", async () => {
    const res = await h.request("GET", `/api/p/${p.slug}/entries?collection=blog&sort=field.date`, { key: null });
    expect(res.status).toBe(200);
    expect(res.json.data.map((e: any) => e.slug)).toEqual(["e", "a", "d"]);
    expect(res.json.data[1].fields).toEqual({ date: "2026-01-01T10:00:00+02:00", category: "news", price: 9, note: "a", author: { id: authorId, path: "ada", title: "Ada", type: "page" } });
    expect(res.json.data[2].fields.author).toBeNull();
    expect(res.json.data[0].fields).toEqual({ date: "2025-12-31T23:59:59Z", category: "news", price: -1, note: "e" });
  });

  test("EXPLAIN: the admin list's filter and field sort read through the shared field indexes", async () => {
    const big = await seedNode(h, p.slug, { slug: "big", title: "Big", type: "collection" });
    await db.execute(sql`insert into nodes (id, project_id, parent_id, slug, path, type, title, status, fields)
      select gen_random_uuid(), ${p.id}, ${big.id}, 'n' || i, 'big/n' || i, 'post', 'n' || i, case when i % 3 = 0 then 'draft' else 'published' end,
        jsonb_build_object('date', to_char(timestamptz '2020-01-01' + i * interval '1 hour', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), 'category', 'c' || (i % 10))
      from generate_series(1, 5000) i`);
    await db.execute(sql`analyze nodes`);
    const project = await db.query.projects.findFirst({ where: eq(projects.id, p.id) });
    if (!project) throw new Error("no project");
    const input = EntryQuery.parse({ collection: "big", sort: "-field.date", status: "published", filters: [{ field: "category", value: "c3" }] });
    const { conds, order } = await entriesSelection(db, project, big.id, input);
    const page = db
      .select({ id: nodes.id })
      .from(nodes)
      .where(and(...conds))
      .orderBy(...order, asc(nodes.id))
      .limit(20);
    const explain = async (query: unknown) =>
      rows<Record<string, string>>(await db.execute(sql`explain ${query}`))
        .map((r) => Object.values(r)[0])
        .join("\n");
    const names = [fieldIndexName({ name: "date", kind: "date" }), fieldIndexName({ name: "category", kind: "text" })].join("|");
    const ours = new RegExp(`Index (Only )?Scan (Backward )?using (${names}) |Bitmap Index Scan on (${names})\\b`);
    const pagePlan = await explain(page);
    expect(pagePlan).toMatch(ours);
    expect(pagePlan).not.toContain("Seq Scan on nodes");
    const totalPlan = await explain(
      db
        .select({ n: count() })
        .from(nodes)
        .where(and(...conds)),
    );
    expect(totalPlan).toMatch(ours);
    // And the route answers the same page.
    const res = await h.request("GET", `/admin/p/${p.slug}/entries?collection=big&status=published&field.category=c3&sort=-field.date&per_page=3`);
    expect(res.status).toBe(200);
    expect(res.json.data.map((e: any) => e.slug)).toEqual(["n4993", "n4973", "n4963"]);
  });
});
