// What one write or one model may cost (issue 36, item 4): checks run on the event loop every
// project shares, so `uri` is a linear check with a length cap, `pattern` runs on a linear-time
// engine (RE2) and refuses what it cannot run, a node's check has a budget (rule `cost`), and a
// model has a size limit. Each bound is 400 invalid_content with a clear message, never a 500, and
// nothing is written. The times asserted are loose (seconds): before these bounds the same
// requests took 10-13 s (uri), 8 s (pattern) and 3-4 s (model) of one thread.
import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { contentModels, nodes, projects } from "../db/schema";
import { harness, keyWith, seedProject } from "./helpers";

const LINK = { name: "link", schema: { type: "object", properties: { url: { type: "string", format: "uri" } } } };
const CODE = { name: "code", schema: { type: "object", properties: { code: { type: "string", pattern: "^(\\w+\\s?)*$" } } } };
const LIST = { name: "list", schema: { type: "object", properties: { items: { type: "array", uniqueItems: true } } } };
// Every level of the array tries both branches: 2^depth checks of a tiny model.
const NEST = {
  name: "nest",
  schema: {
    $defs: {
      n: {
        anyOf: [
          { type: "array", items: { $ref: "#/$defs/n" } },
          { type: "array", items: { $ref: "#/$defs/n" } },
        ],
      },
    },
    type: "object",
    properties: { tree: { $ref: "#/$defs/n" } },
  },
};
const MODEL = { block_types: [LINK, CODE, LIST, NEST] };

/** A model of about 780 KB: 500 node types of 15 fields. */
const bigModel = () => {
  const props = Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`field_${i}`, { type: "string", maxLength: 200, description: "a field of the type, told to editors" }]));
  return { node_types: Array.from({ length: 500 }, (_, t) => ({ name: `type_${t}`, description: "a type", fields: { type: "object", properties: props } })) };
};

describe("what one write may cost", async () => {
  const h = await harness();
  const p = await seedProject(h);
  const key = await keyWith(h, ["content:read", "content:write", "model:write"], [p.id]);
  const put = await h.request("PUT", `/admin/p/${p.slug}/model`, { key, body: MODEL });
  expect(put.status).toBe(200);
  const create = async (blocks: unknown[]) => {
    const t = performance.now();
    const res = await h.request("POST", `/admin/p/${p.slug}/nodes`, { key, body: { slug: `n-${crypto.randomUUID()}`, title: "n", blocks } });
    return { ...res, ms: performance.now() - t };
  };
  const count = async () => (await h.deps.db.select({ id: nodes.id }).from(nodes).where(eq(nodes.projectId, p.id))).length;

  test("uri: 1 MB of long values is refused at once; a valid uri up to 8,192 characters is accepted", async () => {
    const before = await count();
    // 16 values of 62,000 characters: ajv-formats' regex spent 10-13 s on these.
    const long = await create(Array.from({ length: 16 }, () => ({ type: "link", data: { url: `https://a/${"a@".repeat(31_000)} ` } })));
    expect(long.status).toBe(400);
    expect(long.json.error.code).toBe("invalid_content");
    expect(long.json.error.details.violations[0]).toEqual({ pointer: "/blocks/0/data/url", rule: "format", message: 'must match format "uri"' });
    expect(long.ms).toBeLessThan(2000);
    // 1 MB of values under the cap: each one is checked, in linear time.
    const many = await create(Array.from({ length: 120 }, () => ({ type: "link", data: { url: `https://a/${"a@".repeat(4000)}` } })));
    expect(many.status).toBe(201);
    expect(many.ms).toBeLessThan(2000);
    const edge = `https://example.com/${"x".repeat(8192 - 20)}`;
    expect((await create([{ type: "link", data: { url: edge } }])).status).toBe(201);
    const over = await create([{ type: "link", data: { url: `${edge}x` } }]);
    expect(over.status).toBe(400);
    expect(over.json.error.details.violations).toEqual([{ pointer: "/blocks/0/data/url", rule: "format", message: 'must match format "uri"' }]);
    for (const url of ["not a uri", "https://exa mple.com", "https://a/%zz", "x:"]) expect((await create([{ type: "link", data: { url } }])).status).toBe(400);
    expect(await count()).toBe(before + 2);
  });

  test("pattern: a value a backtracking engine needs seconds for is checked in linear time", async () => {
    const bad = await create([{ type: "code", data: { code: `${"a".repeat(28)}!` } }]);
    expect(bad.status).toBe(400);
    expect(bad.json.error.details.violations).toEqual([{ pointer: "/blocks/0/data/code", rule: "pattern", message: 'must match pattern "^(\\w+\\s?)*$"' }]);
    expect(bad.ms).toBeLessThan(2000);
    expect((await create([{ type: "code", data: { code: "hello world" } }])).status).toBe(201);
  });

  test("pattern: a value longer than the pattern may check is refused (rule cost), without being tested", async () => {
    const res = await create([{ type: "code", data: { code: "a".repeat(100_000) } }]);
    expect(res.status).toBe(400);
    const [v] = res.json.error.details.violations;
    expect(v).toMatchObject({ pointer: "/blocks/0/data", rule: "cost" });
    expect(v.message).toContain('a value checked against the pattern "^(\\\\w+\\\\s?)*$" is at most 18,181 characters');
    expect(res.json.error.message).toStartWith("the content does not match the project's content model: /blocks/0/data: the content needs more checking");
  });

  test("a check that needs more than its budget is refused (rule cost); uniqueItems is still checked, in linear time", async () => {
    let tree: unknown = [];
    for (let i = 0; i < 24; i++) tree = [tree];
    const nest = await create([{ type: "nest", data: { tree } }]);
    expect(nest.status).toBe(400);
    expect(nest.json.error.details.violations).toEqual([{ pointer: "/blocks/0/data", rule: "cost", message: expect.stringContaining("more than 1,000,000 units or 20 ms of CPU time") }]);
    expect(nest.ms).toBeLessThan(2000);
    const dup = await create([
      {
        type: "list",
        data: {
          items: [
            { a: 1, b: [2] },
            { b: [2], a: 1 },
          ],
        },
      },
    ]);
    expect(dup.status).toBe(400);
    expect(dup.json.error.details.violations).toEqual([{ pointer: "/blocks/0/data/items", rule: "uniqueItems", message: "must NOT have duplicate items" }]);
    expect((await create([{ type: "list", data: { items: [1, "1", [1], { a: 1 }, { a: "1" }] } }])).status).toBe(201);
    // Ajv's own uniqueItems compares every pair: 20,000 objects were 2 × 10^8 comparisons.
    const wide = await create([{ type: "list", data: { items: Array.from({ length: 20_000 }, (_, i) => ({ i })) } }]);
    expect([201, 400]).toContain(wide.status);
    expect(wide.ms).toBeLessThan(2000);
  });
});

describe("what one model may cost", async () => {
  const h = await harness();
  const p = await seedProject(h);
  const key = await keyWith(h, ["content:read", "content:write", "model:write"], [p.id]);
  const version = async () => (await h.deps.db.select({ v: projects.modelVersion }).from(projects).where(eq(projects.id, p.id)))[0]?.v;
  const putModel = async (body: unknown) => {
    const t = performance.now();
    const res = await h.request("PUT", `/admin/p/${p.slug}/model`, { key, body });
    return { ...res, ms: performance.now() - t };
  };

  test("a model of more than 256 KiB is refused before anything is compiled", async () => {
    const res = await putModel(bigModel());
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe("invalid_content");
    expect(res.json.error.details.violations).toEqual([{ pointer: "", rule: "size", message: expect.stringMatching(/^the content model is \d+ bytes of JSON; a model is at most 262144$/) }]);
    expect(res.ms).toBeLessThan(2000);
    expect(await version()).toBe(0);
  });

  test("a type of more than 100 schemas is refused, pointing at it", async () => {
    const props = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${i}`, { type: "string" }]));
    const res = await putModel({
      node_types: [
        { name: "fine", fields: { type: "object", properties: props(99) } },
        { name: "wide", fields: { type: "object", properties: props(100) } },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.json.error.details.violations).toEqual([{ pointer: "/node_types/1/fields", rule: "size", message: "the schema holds 101 schemas (nested ones included); a type holds at most 100" }]);
    expect(await version()).toBe(0);
  });

  test("patterns: lookaround, backreferences and patterns over 500 characters are refused with the reason", async () => {
    const cases: [string, string][] = [
      ["^(?=.*\\d)\\w+$", "is not supported (invalid or unsupported Perl syntax: `(?=`): patterns run on a linear-time engine (RE2), without lookaround or backreferences"],
      ["^(a)\\1$", "is not supported (invalid escape sequence: `\\1`)"],
      ["a".repeat(501), "is longer than 500 characters"],
    ];
    for (const [pattern, why] of cases) {
      const res = await putModel({ block_types: [{ name: "b", schema: { type: "object", patternProperties: { "^x": { type: "string", pattern } } } }] });
      expect(res.status).toBe(400);
      const [v] = res.json.error.details.violations;
      expect(v).toMatchObject({ pointer: "/block_types/0/schema", rule: "schema" });
      expect(v.message).toContain(why);
    }
    const ok = await putModel({
      block_types: [{ name: "b", schema: { type: "object", properties: { slug: { type: "string", pattern: "^[a-z0-9]+(?:-[a-z0-9]+)*$" }, e: { type: "string", pattern: "\\u00e9|\\p{Lu}" } } } }],
    });
    expect(ok.status).toBe(200);
    const node = (data: unknown) => h.request("POST", `/admin/p/${p.slug}/nodes`, { key, body: { slug: `n-${crypto.randomUUID()}`, title: "n", blocks: [{ type: "b", data }] } });
    expect((await node({ slug: "hello-world", e: "é" })).status).toBe(201);
    expect((await node({ slug: "Hello--world" })).json.error.details.violations).toEqual([
      { pointer: "/blocks/0/data/slug", rule: "pattern", message: 'must match pattern "^[a-z0-9]+(?:-[a-z0-9]+)*$"' },
    ]);
    expect((await node({ e: "abc" })).status).toBe(400);
    expect((await node({ e: "xÉ" })).status).toBe(201);
  });

  test("a model stored before these limits: its types that no longer compile refuse their content (rule model), the others work, never a 500", async () => {
    const q = await seedProject(h);
    const definition = {
      strict: false,
      block_types: [
        { name: "old", description: "", schema: { type: "object", properties: { code: { type: "string", pattern: "^(?=a)a+$" } } } },
        { name: "fine", description: "", schema: { type: "object", properties: { t: { type: "string" } }, required: ["t"] } },
      ],
      node_types: [],
    };
    await h.deps.db.insert(contentModels).values({ projectId: q.id, version: 1, definition });
    await h.deps.db.update(projects).set({ modelVersion: 1 }).where(eq(projects.id, q.id));
    const write = (blocks: unknown[]) => h.request("POST", `/admin/p/${q.slug}/nodes`, { body: { slug: `n-${crypto.randomUUID()}`, title: "n", blocks } });
    const old = await write([{ type: "old", data: { code: "aa" } }]);
    expect(old.status).toBe(400);
    expect(old.json.error.details.violations).toEqual([
      {
        pointer: "/blocks/0/data",
        rule: "model",
        message: expect.stringMatching(/^the content model's block type "old" cannot be checked \(pattern "\^\(\?=a\)a\+\$" is not supported .*\); write the model again within its limits$/),
      },
    ]);
    expect((await write([{ type: "fine", data: { t: "x" } }])).status).toBe(201);
    expect((await write([{ type: "fine", data: {} }])).json.error.details.violations[0]).toMatchObject({ pointer: "/blocks/0/data/t", rule: "required" });
  });
});
