// The content model's admin API (issue 24): the whole model and one type at a time, a bad model,
// a change that existing content no longer meets (409 with the list and count, force, dry run),
// strict and free-form projects, the scopes, and two apps over one database agreeing on a version.
import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { contentModels, projects } from "../db/schema";
import { createApp } from "../src/app";
import { harness, keyWith, readReply, seedNode, seedProject } from "./helpers";

const HERO = {
  name: "hero",
  description: "A big heading",
  schema: { type: "object", properties: { heading: { type: "string", minLength: 1, translatable: true } }, required: ["heading"], additionalProperties: false },
};
const TEXT = { name: "text", description: "Prose", schema: { type: "object", properties: { text: { type: "string", format: "markdown", translatable: true } }, required: ["text"] } };
const MODEL = {
  strict: false,
  block_types: [HERO, TEXT],
  node_types: [
    { name: "page", description: "A page", fields: { type: "object" }, blocks: [{ type: "hero", max: 1 }, { type: "text" }], children: null },
    { name: "collection", description: "A list of posts", blocks: [], children: ["post"] },
    { name: "post", description: "A post", blocks: [{ type: "text" }] },
  ],
};

describe("content model admin API", async () => {
  const h = await harness();
  const versions = async (projectId: string) => {
    const [p] = await h.deps.db.select({ v: projects.modelVersion }).from(projects).where(eq(projects.id, projectId));
    const [m] = await h.deps.db.select({ v: contentModels.version }).from(contentModels).where(eq(contentModels.projectId, projectId));
    return { project: p?.v, model: m?.v ?? null };
  };

  test("a project without a model reads version 0 and empty lists; PUT answers the new version and GET reads it back", async () => {
    const p = await seedProject(h);
    const empty = await h.request("GET", `/admin/p/${p.slug}/model`);
    expect(empty.status).toBe(200);
    expect(empty.json.data).toEqual({ strict: false, block_types: [], node_types: [], version: 0, updated_at: null });
    const put = await h.request("PUT", `/admin/p/${p.slug}/model`, { body: MODEL });
    expect(put.status).toBe(200);
    expect(put.json).toMatchObject({ data: { version: 1, strict: false }, applied: true, invalid: [], count: 0 });
    expect(put.json.data.block_types.map((b: any) => b.name)).toEqual(["hero", "text"]);
    expect(put.json.data.node_types[1]).toEqual({ name: "collection", description: "A list of posts", fields: { type: "object" }, blocks: [], children: ["post"] });
    const read = await h.request("GET", `/admin/p/${p.id}/model`);
    expect(read.json.data).toEqual(put.json.data);
    expect(await versions(p.id)).toEqual({ project: 1, model: 1 });
    // The answer sent back as read (version, updated_at included) is a valid PUT: version 2.
    const again = await h.request("PUT", `/admin/p/${p.slug}/model`, { body: read.json.data });
    expect(again.status).toBe(200);
    expect(again.json.data.version).toBe(2);
    expect(await versions(p.id)).toEqual({ project: 2, model: 2 });
  });

  test("content writes meet the model: an invalid block is 400 invalid_content with pointers, a valid one is stored", async () => {
    const p = await seedProject(h);
    expect((await h.request("PUT", `/admin/p/${p.slug}/model`, { body: MODEL })).status).toBe(200);
    const bad = await h.request("POST", `/admin/p/${p.slug}/nodes`, {
      body: {
        slug: "home",
        title: "Home",
        blocks: [
          { type: "hero", data: { heading: "", extra: 1 } },
          { type: "hero", data: { heading: "Two" } },
        ],
      },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe("invalid_content");
    expect(bad.json.error.details.violations).toEqual(
      expect.arrayContaining([
        { pointer: "/blocks/0/data/extra", rule: "additionalProperties", message: 'property "extra" is not declared' },
        expect.objectContaining({ pointer: "/blocks/0/data/heading", rule: "minLength" }),
        expect.objectContaining({ pointer: "/blocks", rule: "max_blocks" }),
      ]),
    );
    expect((await h.request("GET", `/admin/p/${p.slug}/nodes`)).json.total).toBe(0);
    const good = await h.request("POST", `/admin/p/${p.slug}/nodes`, { body: { slug: "home", title: "Home", blocks: [{ type: "hero", data: { heading: "Hi" } }] } });
    expect(good.status).toBe(201);
    // A collection holds only posts.
    const blog = await seedNode(h, p.slug, { slug: "blog", type: "collection" });
    const wrong = await h.request("POST", `/admin/p/${p.slug}/nodes`, { body: { slug: "x", title: "X", parent_id: blog.id, type: "page" } });
    expect(wrong.status).toBe(400);
    expect(wrong.json.error.details.violations).toEqual([{ pointer: "/type", rule: "children", message: 'a "collection" node holds only "post" children' }]);
    expect((await h.request("POST", `/admin/p/${p.slug}/nodes`, { body: { slug: "x", title: "X", parent_id: blog.id, type: "post" } })).status).toBe(201);
  });

  test("a model that is not one is 400 invalid_content pointing into the model, and nothing changes", async () => {
    const p = await seedProject(h);
    const res = await h.request("PUT", `/admin/p/${p.slug}/model`, {
      body: {
        block_types: [HERO, { name: "hero", schema: { type: "object", properties: { x: { type: "strnig" } } } }],
        node_types: [{ name: "page", blocks: [{ type: "nope" }], children: ["ghost"] }],
      },
    });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe("invalid_content");
    const pointers = res.json.error.details.violations.map((v: any) => [v.pointer, v.rule]);
    expect(pointers).toEqual(
      expect.arrayContaining([
        ["/block_types/1/name", "unique"],
        ["/block_types/1/schema", "schema"],
        ["/node_types/0/blocks/0/type", "declared"],
        ["/node_types/0/children/0", "declared"],
      ]),
    );
    expect(await versions(p.id)).toEqual({ project: 0, model: null });
    // A bad type name is the request's own schema: 400 invalid_request.
    const name = await h.request("PUT", `/admin/p/${p.slug}/model`, { body: { block_types: [{ name: "Bad Name" }] } });
    expect(name.status).toBe(400);
    expect(name.json.error.code).toBe("invalid_request");
    const flag = await h.request("PUT", `/admin/p/${p.slug}/model?forse=true`, { body: MODEL });
    expect(flag.status).toBe(400);
    expect(flag.json.error).toMatchObject({ code: "invalid_input", details: { fields: ["forse"] } });
  });

  test("a change existing content does not meet: 409 with the list and count; dry_run reports; force applies and lists", async () => {
    const p = await seedProject(h);
    const nodes = [];
    for (const slug of ["a", "b", "c"]) nodes.push(await seedNode(h, p.slug, { slug, blocks: [{ type: "hero", data: { title: "old shape" } }] }));
    await seedNode(h, p.slug, { slug: "fine", blocks: [{ type: "text", data: { text: "ok" } }] });
    const conflict = await h.request("PUT", `/admin/p/${p.slug}/model`, { body: MODEL });
    expect(conflict.status).toBe(409);
    expect(conflict.json.error.code).toBe("conflict");
    expect(conflict.json.error.details.count).toBe(3);
    const listed = conflict.json.error.details.invalid;
    expect(listed.map((n: any) => n.node_id).sort()).toEqual(nodes.map((n) => n.id).sort());
    expect(listed.find((n: any) => n.path === "a")).toEqual({
      node_id: nodes[0].id,
      path: "a",
      type: "page",
      violations: [
        { pointer: "/blocks/0/data/heading", rule: "required", message: 'property "heading" is required' },
        { pointer: "/blocks/0/data/title", rule: "additionalProperties", message: 'property "title" is not declared' },
      ],
    });
    expect(await versions(p.id)).toEqual({ project: 0, model: null });

    const dry = await h.request("PUT", `/admin/p/${p.slug}/model?dry_run=true`, { body: MODEL });
    expect(dry.status).toBe(200);
    expect(dry.json).toMatchObject({ applied: false, count: 3, data: { version: 0 } });
    expect(dry.json.invalid).toHaveLength(3);
    expect(await versions(p.id)).toEqual({ project: 0, model: null });

    const forced = await h.request("PUT", `/admin/p/${p.slug}/model?force=true`, { body: MODEL });
    expect(forced.status).toBe(200);
    expect(forced.json).toMatchObject({ applied: true, count: 3, data: { version: 1 } });
    expect(forced.json.invalid.map((n: any) => n.path).sort()).toEqual(["a", "b", "c"]);
    expect(await versions(p.id)).toEqual({ project: 1, model: 1 });
    // From now on, a write to one of them must fix it.
    const touch = await h.request("PATCH", `/admin/p/${p.slug}/nodes/${nodes[0].id}`, { body: { title: "still old" } });
    expect(touch.status).toBe(400);
    expect(touch.json.error.details.violations[0].pointer).toBe("/blocks/0/data/heading");
    const fixed = await h.request("PATCH", `/admin/p/${p.slug}/nodes/${nodes[0].id}`, { body: { blocks: [{ type: "hero", data: { heading: "New" } }] } });
    expect(fixed.status).toBe(200);
  });

  test("more than 50 nodes that fail: the first 50 listed, the count says all", async () => {
    const p = await seedProject(h);
    for (let i = 0; i < 53; i++) await seedNode(h, p.slug, { slug: `n${i}`, blocks: [{ type: "hero", data: {} }] });
    const res = await h.request("PUT", `/admin/p/${p.slug}/model?dry_run=true`, { body: { block_types: [HERO] } });
    expect(res.status).toBe(200);
    expect(res.json.count).toBe(53);
    expect(res.json.invalid).toHaveLength(50);
  });

  test("one type at a time: PUT adds or replaces, GET reads, DELETE removes; 404 for a type the model lacks", async () => {
    const p = await seedProject(h);
    const base = `/admin/p/${p.slug}/model`;
    expect((await h.request("GET", `${base}/blocks/hero`)).status).toBe(404);
    const put = await h.request("PUT", `${base}/blocks/hero`, { body: { description: HERO.description, schema: HERO.schema } });
    expect(put.status).toBe(200);
    expect(put.json).toMatchObject({ data: { name: "hero", description: "A big heading" }, version: 1, applied: true, count: 0 });
    expect((await h.request("PUT", `${base}/blocks/text`, { body: { schema: TEXT.schema } })).json.version).toBe(2);
    const page = await h.request("PUT", `${base}/nodes/page`, { body: { description: "A page", blocks: [{ type: "hero", min: 1 }] } });
    expect(page.status).toBe(200);
    expect(page.json.data).toEqual({ name: "page", description: "A page", fields: { type: "object" }, blocks: [{ type: "hero", min: 1 }], children: null });
    // Replacing keeps the place in the list.
    expect((await h.request("PUT", `${base}/blocks/hero`, { body: { description: "Changed", schema: HERO.schema } })).status).toBe(200);
    const model = (await h.request("GET", base)).json.data;
    expect(model.version).toBe(4);
    expect(model.block_types.map((b: any) => [b.name, b.description])).toEqual([
      ["hero", "Changed"],
      ["text", ""],
    ]);
    expect((await h.request("GET", `${base}/nodes/page`)).json).toEqual({ data: page.json.data, version: 4 });
    // A block type a node type still names cannot go: 400 pointing at the reference.
    const used = await h.request("DELETE", `${base}/blocks/hero`);
    expect(used.status).toBe(400);
    expect(used.json.error.details.violations).toEqual([{ pointer: "/node_types/0/blocks/0/type", rule: "declared", message: 'block type "hero" is not declared' }]);
    // Content that needs the type: the node type's deletion would orphan nothing, the page type's min does matter.
    await seedNode(h, p.slug, { slug: "home", blocks: [{ type: "hero", data: { heading: "x" } }] });
    const del = await h.request("DELETE", `${base}/nodes/page`);
    expect(del.status).toBe(200);
    expect(del.json.data).toEqual({ version: 5, applied: true, invalid: [], count: 0 });
    expect((await h.request("GET", `${base}/nodes/page`)).status).toBe(404);
    expect((await h.request("DELETE", `${base}/nodes/page`)).status).toBe(404);
    expect((await h.request("DELETE", `${base}/blocks/hero`)).status).toBe(200);
    expect((await h.request("GET", base)).json.data.block_types.map((b: any) => b.name)).toEqual(["text"]);
    // Per type, the flags are query flags too: a text block with empty text, then a text type that wants some.
    await seedNode(h, p.slug, { slug: "loose", blocks: [{ type: "text", data: { text: "" } }] });
    const strictText = { schema: { ...TEXT.schema, properties: { text: { type: "string", minLength: 1 } } } };
    const refused = await h.request("PUT", `${base}/blocks/text?dry_run=true`, { body: strictText });
    expect(refused.json).toMatchObject({ applied: false, count: 1, invalid: [{ path: "loose" }] });
    expect((await h.request("PUT", `${base}/blocks/text`, { body: strictText })).status).toBe(409);
  });

  test("strict and free-form: an undeclared block or node type is refused only when the model is strict", async () => {
    const free = await seedProject(h);
    expect((await h.request("PUT", `/admin/p/${free.slug}/model`, { body: { block_types: [TEXT] } })).status).toBe(200);
    const loose = await h.request("POST", `/admin/p/${free.slug}/nodes`, { body: { slug: "w", type: "landing", title: "W", blocks: [{ type: "widget", data: { anything: [1, 2] } }] } });
    expect(loose.status).toBe(201);
    expect((await h.request("POST", `/admin/p/${free.slug}/nodes`, { body: { slug: "t", title: "T", blocks: [{ type: "text", data: {} }] } })).status).toBe(400);

    const strict = await seedProject(h);
    expect((await h.request("PUT", `/admin/p/${strict.slug}/model`, { body: { strict: true, block_types: [TEXT], node_types: [{ name: "page" }] } })).status).toBe(200);
    const refused = await h.request("POST", `/admin/p/${strict.slug}/nodes`, { body: { slug: "w", type: "landing", title: "W", blocks: [{ type: "widget", data: {} }] } });
    expect(refused.status).toBe(400);
    expect(refused.json.error.details.violations).toEqual([
      { pointer: "/type", rule: "node_type", message: 'node type "landing" is not declared in the content model' },
      { pointer: "/blocks/0/type", rule: "block_type", message: 'block type "widget" is not declared in the content model' },
    ]);
    expect((await h.request("POST", `/admin/p/${strict.slug}/nodes`, { body: { slug: "ok", title: "OK", blocks: [{ type: "text", data: { text: "hi" } }] } })).status).toBe(201);
    // Turning strict on over free-form content is a change like any other: 409 naming the node.
    const tighten = await h.request("PUT", `/admin/p/${free.slug}/model`, { body: { strict: true, block_types: [TEXT] } });
    expect(tighten.status).toBe(409);
    expect(tighten.json.error.details.invalid[0]).toMatchObject({ path: "w", type: "landing" });
  });

  test("scopes: content:read reads, model:write writes, anything else is 403; another project's model is 404", async () => {
    const p = await seedProject(h);
    const other = await seedProject(h);
    const reader = await keyWith(h, ["content:read"]);
    const writer = await keyWith(h, ["model:write"]);
    const editor = await keyWith(h, ["content:read", "content:write"]);
    expect((await h.request("GET", `/admin/p/${p.slug}/model`, { key: reader })).status).toBe(200);
    const denied = await h.request("PUT", `/admin/p/${p.slug}/model`, { key: editor, body: MODEL });
    expect(denied.status).toBe(403);
    expect(denied.json.error).toMatchObject({ code: "insufficient_scope" });
    expect(denied.json.error.message).toContain("model:write");
    expect((await h.request("DELETE", `/admin/p/${p.slug}/model/blocks/hero`, { key: reader })).status).toBe(403);
    expect((await h.request("GET", `/admin/p/${p.slug}/model`, { key: writer })).status).toBe(403);
    expect((await h.request("PUT", `/admin/p/${p.slug}/model`, { key: writer, body: MODEL })).status).toBe(200);
    const limited = await keyWith(h, ["content:read", "model:write"], [other.id]);
    expect((await h.request("GET", `/admin/p/${p.slug}/model`, { key: limited })).status).toBe(404);
    expect((await h.request("PUT", `/admin/p/${p.slug}/model`, { key: limited, body: { strict: true } })).status).toBe(404);
    expect(await versions(p.id)).toEqual({ project: 1, model: 1 });
  });

  test("two apps over one database: a write valid under v1 and invalid under v2 is refused by the other app right after the PUT", async () => {
    const other = createApp(h.deps).app;
    const onOther = async (method: string, path: string, body?: unknown) =>
      readReply(
        await other.handle(
          new Request(`http://localhost${path}`, {
            method,
            headers: { authorization: `Bearer ${h.rootKey}`, "content-type": "application/json" },
            body: body === undefined ? undefined : JSON.stringify(body),
          }),
        ),
      );
    const p = await seedProject(h);
    expect((await h.request("PUT", `/admin/p/${p.slug}/model`, { body: { block_types: [TEXT] } })).status).toBe(200);
    const write = { slug: "n1", title: "N", blocks: [{ type: "text", data: { text: "hi", note: "extra" } }] };
    // Under v1 (text is open to other keys) the other app accepts it: its model for this project is v1.
    expect((await onOther("POST", `/admin/p/${p.slug}/nodes`, write)).status).toBe(201);
    const closed = { ...TEXT, schema: { ...TEXT.schema, additionalProperties: false } };
    expect((await h.request("PUT", `/admin/p/${p.slug}/model?force=true`, { body: { block_types: [closed] } })).json.data.version).toBe(2);
    const refused = await onOther("POST", `/admin/p/${p.slug}/nodes`, { ...write, slug: "n2" });
    expect(refused.status).toBe(400);
    expect(refused.json.error.details.violations).toEqual([{ pointer: "/blocks/0/data/note", rule: "additionalProperties", message: 'property "note" is not declared' }]);
    expect((await onOther("GET", `/admin/p/${p.slug}/model`)).json.data.version).toBe(2);
  });
});
