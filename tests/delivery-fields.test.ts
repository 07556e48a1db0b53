import { beforeAll, describe, expect, test } from "bun:test";
import { get, transition, translate } from "./delivery.helpers";
import { setFields, setModel, setTranslationFields } from "./delivery-model.helpers";
import { harness, seedNode, seedProject } from "./helpers";

const MODEL = {
  block_types: [
    { name: "card", description: "", schema: { type: "object", properties: { target: { type: "string", format: "node" }, label: { type: "string", translatable: true } } } },
    { name: "text", description: "", schema: { type: "object", properties: { text: { type: "string", translatable: true } } } },
  ],
  node_types: [
    {
      name: "post",
      description: "",
      fields: {
        type: "object",
        properties: {
          author: { type: "string" },
          summary: { type: "string", translatable: true },
          meta: { type: "object", properties: { note: { type: "string", translatable: true }, kept: { type: "string" } } },
          related: { type: "string", format: "node" },
          see_also: { type: "array", items: { type: "string", format: "node" } },
          links: { type: "array", items: { type: "object", properties: { node: { type: "string", format: "node" }, why: { type: "string" } } } },
        },
      },
      blocks: null,
      children: null,
    },
  ],
};

describe("delivery: node fields and references", async () => {
  const h = await harness();
  const db = h.deps.db;
  const p = await seedProject(h, { public_base_url: "https://www.example.com" });
  const other = await seedProject(h);
  const api = (rest: string): string => `/api/p/${p.slug}${rest}`;
  let about: any;
  let team: any;
  let draft: any;
  let gone: any;
  let hidden: any;
  let foreign: any;
  let post: any;
  let card: string;

  beforeAll(async () => {
    await setModel(db, p.id, MODEL);
    about = await seedNode(h, p.slug, { slug: "about", title: "About us" }, true);
    team = await seedNode(h, p.slug, { slug: "team", title: "Team", parent_id: about.id }, true);
    draft = await seedNode(h, p.slug, { slug: "draft", title: "Draft" });
    gone = await seedNode(h, p.slug, { slug: "gone", title: "Gone" }, true);
    // A published page below a parent unpublished since: not delivered.
    const closed = await seedNode(h, p.slug, { slug: "closed", title: "Closed" }, true);
    hidden = await seedNode(h, p.slug, { slug: "inside", title: "Inside", parent_id: closed.id }, true);
    await transition(h, p.slug, closed.id, "unpublish");
    foreign = await seedNode(h, other.slug, { slug: "elsewhere", title: "Elsewhere" }, true);
    await translate(h, p.slug, about.id, "fr", { meta: { title: "À propos", slug: "a-propos" } });
    await translate(h, p.slug, team.id, "fr", { meta: { title: "L'équipe", slug: "equipe" } });
    const blog = await seedNode(h, p.slug, { slug: "blog", title: "Blog", type: "collection" }, true);
    post = await seedNode(
      h,
      p.slug,
      {
        slug: "hello",
        title: "Hello",
        type: "post",
        parent_id: blog.id,
        blocks: [
          { type: "card", data: { target: team.id, label: "Meet the team" } },
          { type: "text", data: { text: "hi" } },
        ],
      },
      true,
    );
    card = post.blocks[0].id;
    expect((await h.request("DELETE", `/admin/p/${p.slug}/nodes/${gone.id}`)).status).toBe(204);
    await translate(h, p.slug, post.id, "fr", { meta: { title: "Bonjour", slug: "bonjour" }, blocks: { [card]: { label: "L'équipe" } } });
    // Set directly: the last two see_also items are ones the model refuses (content from before it).
    await setFields(db, p.id, post.id, {
      author: "Ada",
      summary: "A first post",
      meta: { note: "base note", kept: "kept" },
      related: about.id,
      see_also: [draft.id, gone.id, foreign.id, hidden.id, about.id.toUpperCase(), "not-a-uuid", 42],
      links: [{ node: team.id, why: "people" }, { why: "no node" }],
    });
    await setTranslationFields(db, p.id, post.id, "fr", { summary: "Un premier article", meta: { note: "note fr" } });
    // Written to the working copies: published (the node, then its fr translation), they are what delivery serves.
    await transition(h, p.slug, post.id, "publish");
    expect((await h.request("POST", `/admin/p/${p.slug}/nodes/${post.id}/publish`, { body: { locale: "fr" } })).status).toBe(200);
  });

  const aboutEn = () => ({ id: about.id, path: "about", title: "About us", type: "page" });
  const teamEn = () => ({ id: team.id, path: "about/team", title: "Team", type: "page" });

  test("by path in the default locale: fields with references expanded, missing and undelivered targets null", async () => {
    const res = await get(h, api("/nodes/by-path/blog/hello"));
    expect(res.status).toBe(200);
    expect(res.json.data.fields).toEqual({
      author: "Ada",
      summary: "A first post",
      meta: { note: "base note", kept: "kept" },
      related: aboutEn(),
      see_also: [null, null, null, null, aboutEn(), null, null],
      links: [{ node: teamEn(), why: "people" }, { why: "no node" }],
    });
    // Block data: the card's target expanded too; other blocks untouched.
    expect(res.json.data.blocks.map((b: any) => b.data)).toEqual([{ target: teamEn(), label: "Meet the team" }, { text: "hi" }]);
    // By id: the same answer.
    expect((await get(h, api(`/nodes/${post.id}`))).json).toEqual(res.json);
  });

  test("in a locale: translatable fields overridden (deep merge), references with the target's localised path and title", async () => {
    const res = await get(h, api("/nodes/by-path/blog/bonjour?locale=fr"));
    expect(res.status).toBe(200);
    const aboutFr = { id: about.id, path: "a-propos", title: "À propos", type: "page" };
    const teamFr = { id: team.id, path: "a-propos/equipe", title: "L'équipe", type: "page" };
    expect(res.json.data.fields).toEqual({
      author: "Ada",
      summary: "Un premier article",
      meta: { note: "note fr", kept: "kept" },
      related: aboutFr,
      see_also: [null, null, null, null, aboutFr, null, null],
      links: [{ node: teamFr, why: "people" }, { why: "no node" }],
    });
    expect(res.json.data.blocks[0].data).toEqual({ target: teamFr, label: "L'équipe" });
    const tr = await get(h, api(`/translations/nodes/${post.id}?locale=fr`));
    expect(tr.status).toBe(200);
    expect(tr.json).toEqual(res.json);
  });

  test("the node list rows carry fields with references expanded (default locale)", async () => {
    const res = await get(h, api("/nodes"));
    expect(res.status).toBe(200);
    const row = res.json.data.find((n: any) => n.id === post.id);
    expect(row.fields.related).toEqual(aboutEn());
    expect(row.fields.see_also).toEqual([null, null, null, null, aboutEn(), null, null]);
    expect(row.fields.summary).toBe("A first post");
    expect(res.json.data.find((n: any) => n.id === about.id).fields).toEqual({});
  });

  test("a target published later is expanded at once (its publish is a write of the project)", async () => {
    expect((await get(h, api("/nodes/by-path/blog/hello"))).json.data.fields.see_also[0]).toBeNull();
    await transition(h, p.slug, draft.id, "publish");
    const res = await get(h, api("/nodes/by-path/blog/hello"));
    expect(res.json.data.fields.see_also[0]).toEqual({ id: draft.id, path: "draft", title: "Draft", type: "page" });
    await transition(h, p.slug, draft.id, "unpublish");
    expect((await get(h, api("/nodes/by-path/blog/hello"))).json.data.fields.see_also[0]).toBeNull();
  });

  test("without a model, fields are delivered as stored (no reference is known)", async () => {
    const node = await seedNode(h, other.slug, { slug: "plain", title: "Plain" }, true);
    await setFields(db, other.id, node.id, { related: about.id, n: 1 });
    await transition(h, other.slug, node.id, "publish");
    const res = await get(h, `/api/p/${other.slug}/nodes/by-path/plain`);
    expect(res.status).toBe(200);
    expect(res.json.data.fields).toEqual({ related: about.id, n: 1 });
    expect((await get(h, `/api/p/${other.slug}/nodes/by-path/elsewhere`)).json.data.fields).toEqual({});
  });
});
