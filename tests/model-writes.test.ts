// Every write path is checked against the project's content model (issue 24): REST create, update,
// set blocks, reorder blocks and translation upsert refuse invalid content with 400 invalid_content and
// JSON Pointers into the input, write nothing, and accept valid content; a type the model does not
// declare is free-form unless the model is strict. Over MCP (static token and OAuth) see model-writes-mcp.
import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { blocks, nodes, translations } from "../db/schema";
import { harness, seedNode, seedProject } from "./helpers";
import { BLOG_MODEL, setModel } from "./model.helpers";

const pointers = (body: any): string[] => (body.error.details.violations as { pointer: string }[]).map((v) => v.pointer).sort();
const rules = (body: any): Record<string, string> => Object.fromEntries((body.error.details.violations as { pointer: string; rule: string }[]).map((v) => [v.pointer, v.rule]));

describe("content model on REST writes", async () => {
  const h = await harness();
  const db = h.deps.db;
  const p = await seedProject(h);
  await setModel(db, p.id, BLOG_MODEL());
  const validFields = { author: "Ann", date: "2026-01-02T03:04:05Z", summary: "A short one", tags: ["news"] };
  const nodeRow = async (id: string) => (await db.select().from(nodes).where(eq(nodes.id, id)))[0];
  const blockRows = async (id: string) => (await db.select().from(blocks).where(eq(blocks.nodeId, id))).sort((a, b) => a.order - b.order);

  test("create: invalid fields and blocks → 400 invalid_content with pointers into the input; nothing written", async () => {
    const res = await h.request("POST", `/admin/p/${p.id}/nodes`, {
      body: {
        slug: "bad-post",
        title: "Bad",
        type: "post",
        fields: { summary: "x".repeat(61), date: "yesterday", extra: 1 },
        blocks: [
          { type: "hero", data: { heading: "y".repeat(41) } },
          { type: "text", data: {} },
          { type: "hero", data: { heading: "ok" } },
        ],
      },
    });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe("invalid_content");
    expect(rules(res.json)).toEqual({
      "/fields/author": "required",
      "/fields/summary": "maxLength",
      "/fields/date": "format",
      "/fields/extra": "additionalProperties",
      "/blocks/0/data/heading": "maxLength",
      "/blocks/1/data/body": "required",
      "/blocks": "max_blocks",
    });
    for (const v of res.json.error.details.violations) expect(typeof v.message).toBe("string");
    expect(await db.select().from(nodes).where(eq(nodes.slug, "bad-post"))).toEqual([]);
  });

  test("create: valid content is accepted and its fields stored and answered", async () => {
    const res = await h.request("POST", `/admin/p/${p.id}/nodes`, {
      body: { slug: "good-post", title: "Good", type: "post", fields: validFields, blocks: [{ type: "hero", data: { heading: "Hello" } }] },
    });
    expect(res.status).toBe(201);
    expect(res.json.data.fields).toEqual(validFields);
    expect((await nodeRow(res.json.data.id))?.fields).toEqual(validFields);
    const read = await h.request("GET", `/admin/p/${p.id}/nodes/${res.json.data.id}`);
    expect(read.json.data.fields).toEqual(validFields);
  });

  test("update: fields replace the whole object; invalid → 400 and the node unchanged", async () => {
    const n = await seedNode(h, p.id, { slug: "upd", type: "post", fields: validFields });
    const bad = await h.request("PATCH", `/admin/p/${p.id}/nodes/${n.id}`, { body: { fields: { summary: "no author" } } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe("invalid_content");
    expect(pointers(bad.json)).toEqual(["/fields/author"]);
    expect((await nodeRow(n.id))?.fields).toEqual(validFields);
    // Changing the type is a write of the node too: a "post" under the model needs its author.
    const retype = await seedNode(h, p.id, { slug: "retype", type: "page", fields: { anything: true } });
    const r = await h.request("PATCH", `/admin/p/${p.id}/nodes/${retype.id}`, { body: { type: "post" } });
    expect(r.status).toBe(400);
    expect(rules(r.json)).toEqual({ "/fields/author": "required", "/fields/anything": "additionalProperties" });
    expect((await nodeRow(retype.id))?.type).toBe("page");

    const ok = await h.request("PATCH", `/admin/p/${p.id}/nodes/${n.id}`, { body: { fields: { author: "Bob" } } });
    expect(ok.status).toBe(200);
    expect(ok.json.data.fields).toEqual({ author: "Bob" });
    expect((await nodeRow(n.id))?.fields).toEqual({ author: "Bob" });
  });

  test("set blocks: invalid → 400 with pointers, blocks unchanged; valid → 200", async () => {
    const n = await seedNode(h, p.id, { slug: "blk", type: "post", fields: validFields, blocks: [{ type: "text", data: { body: "one" } }] });
    const before = await blockRows(n.id);
    const bad = await h.request("PUT", `/admin/p/${p.id}/nodes/${n.id}/blocks`, {
      body: [
        { type: "hero", data: { heading: "a" } },
        { type: "hero", data: { image: "not a uri" } },
        { type: "quote", data: { text: "q" } },
      ],
    });
    expect(bad.status).toBe(400);
    expect(rules(bad.json)).toEqual({
      "/blocks": "max_blocks",
      "/blocks/1/data/heading": "required",
      "/blocks/1/data/image": "format",
      "/blocks/2/type": "allowed_blocks",
    });
    expect(await blockRows(n.id)).toEqual(before);
    const ok = await h.request("PUT", `/admin/p/${p.id}/nodes/${n.id}/blocks`, {
      body: [
        { type: "hero", data: { heading: "a" } },
        { id: before[0]!.id, type: "text", data: { body: "two" } },
      ],
    });
    expect(ok.status).toBe(200);
    expect((await blockRows(n.id)).map((b) => b.data)).toEqual([{ heading: "a" }, { body: "two" }]);
  });

  test("reorder blocks is checked too: content a newer model refuses cannot be reordered; order unchanged", async () => {
    const q = await seedProject(h);
    await setModel(db, q.id, BLOG_MODEL());
    const n = await seedNode(h, q.id, {
      slug: "ro",
      type: "post",
      fields: validFields,
      blocks: [
        { type: "text", data: { body: "long body" } },
        { type: "hero", data: { heading: "h" } },
      ],
    });
    const ids = n.blocks.map((b: { id: string }) => b.id);
    const model = BLOG_MODEL();
    (model.block_types as any[])[1].schema.properties.body.maxLength = 4;
    await setModel(db, q.id, model);
    const bad = await h.request("PUT", `/admin/p/${q.id}/nodes/${n.id}/blocks/order`, { body: { block_ids: [ids[1], ids[0]] } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe("invalid_content");
    // Pointers into the node as it would be: the text block is now the second.
    expect(rules(bad.json)).toEqual({ "/blocks/1/data/body": "maxLength" });
    expect((await blockRows(n.id)).map((b) => b.id)).toEqual(ids);
    await setModel(db, q.id, BLOG_MODEL());
    const ok = await h.request("PUT", `/admin/p/${q.id}/nodes/${n.id}/blocks/order`, { body: { block_ids: [ids[1], ids[0]] } });
    expect(ok.status).toBe(200);
    expect((await blockRows(n.id)).map((b) => b.id)).toEqual([ids[1], ids[0]]);
  });

  test("translation upsert: overrides of untranslatable or invalid values → 400, nothing stored; valid → stored, merged on get_node", async () => {
    const n = await seedNode(h, p.id, { slug: "tr", type: "post", fields: validFields, blocks: [{ type: "hero", data: { heading: "Hello", image: "https://x.test/a.png" } }] });
    const hero = n.blocks[0].id as string;
    const bad = await h.request("PUT", `/admin/p/${p.id}/nodes/${n.id}/translations/fr`, {
      body: { fields: { author: "Anne", summary: "z".repeat(61) }, blocks: { [hero]: { heading: "h".repeat(41), image: "https://x.test/fr.png" } } },
    });
    expect(bad.status).toBe(400);
    expect(rules(bad.json)).toEqual({
      "/fields/author": "translatable",
      "/fields/summary": "maxLength",
      [`/blocks/${hero}/heading`]: "maxLength",
      [`/blocks/${hero}/image`]: "translatable",
    });
    expect(await db.select().from(translations).where(eq(translations.nodeId, n.id))).toEqual([]);

    const ok = await h.request("PUT", `/admin/p/${p.id}/nodes/${n.id}/translations/fr`, {
      body: { meta: { title: "Bonjour" }, fields: { summary: "Un court", tags: ["actu"] }, blocks: { [hero]: { heading: "Salut" } } },
    });
    expect(ok.status).toBe(200);
    expect(ok.json.data.fields).toEqual({ summary: "Un court", tags: ["actu"] });
    const [row] = await db.select().from(translations).where(eq(translations.nodeId, n.id));
    expect(row?.fields).toEqual({ summary: "Un court", tags: ["actu"] });
    const fr = await h.request("GET", `/admin/p/${p.id}/node?id=${n.id}&locale=fr`);
    expect(fr.json.data.fields).toEqual({ ...validFields, summary: "Un court", tags: ["actu"] });
    expect(fr.json.data.blocks[0].data).toEqual({ heading: "Salut", image: "https://x.test/a.png" });
    const en = await h.request("GET", `/admin/p/${p.id}/node?id=${n.id}`);
    expect(en.json.data.fields).toEqual(validFields);
  });

  test("free-form: a type the model does not declare takes any fields and blocks; strict refuses it", async () => {
    const free = await h.request("POST", `/admin/p/${p.id}/nodes`, {
      body: { slug: "free", title: "Free", type: "landing", fields: { whatever: [1, 2] }, blocks: [{ type: "gallery", data: { any: true } }] },
    });
    expect(free.status).toBe(201);
    expect(free.json.data.fields).toEqual({ whatever: [1, 2] });

    const s = await seedProject(h);
    await setModel(db, s.id, BLOG_MODEL(true));
    const strict = await h.request("POST", `/admin/p/${s.id}/nodes`, { body: { slug: "free", title: "Free", type: "landing", blocks: [{ type: "gallery", data: {} }] } });
    expect(strict.status).toBe(400);
    expect(rules(strict.json)).toEqual({ "/type": "node_type", "/blocks/0/type": "block_type" });
    expect(await db.select().from(nodes).where(eq(nodes.projectId, s.id))).toEqual([]);
    // Declared types pass in the strict project.
    const ok = await h.request("POST", `/admin/p/${s.id}/nodes`, { body: { slug: "post", title: "Post", type: "post", fields: { author: "A" }, blocks: [{ type: "text", data: { body: "b" } }] } });
    expect(ok.status).toBe(201);
  });

  test("a project without a model: fields are free-form and stored as given", async () => {
    const q = await seedProject(h);
    const res = await h.request("POST", `/admin/p/${q.id}/nodes`, { body: { slug: "x", title: "X", type: "post", fields: { author: 3 } } });
    expect(res.status).toBe(201);
    expect((await nodeRow(res.json.data.id))?.fields).toEqual({ author: 3 });
    const bad = await h.request("POST", `/admin/p/${q.id}/nodes`, { body: { slug: "y", title: "Y", fields: ["not", "an", "object"] } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe("invalid_request");
  });
});
