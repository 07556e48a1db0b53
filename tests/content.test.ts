import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { blocks, nodes, projects } from "../db/schema";
import { harness, keyWith, seedNode, seedProject } from "./helpers";

describe("content admin API", async () => {
  const h = await harness();

  test("create a node with blocks, read it back, list with filters", async () => {
    const p = await seedProject(h);
    const res = await h.request("POST", `/admin/p/${p.slug}/nodes`, {
      body: { slug: "about", title: "About", seo: { description: "d" }, blocks: [{ type: "text", data: { text: "hi" } }, { type: "image" }] },
    });
    expect(res.status).toBe(201);
    const n = res.json.data;
    expect(n).toMatchObject({ slug: "about", path: "about", type: "page", status: "draft", parent_id: null, position: 0, seo: { description: "d" } });
    expect(n.blocks.map((b: any) => [b.type, b.order])).toEqual([
      ["text", 0],
      ["image", 1],
    ]);
    const read = await h.request("GET", `/admin/p/${p.id}/nodes/${n.id}`);
    expect(read.json.data.blocks).toEqual(n.blocks);
    await seedNode(h, p.slug, { slug: "blog", type: "collection" }, true);
    const list = await h.request("GET", `/admin/p/${p.slug}/nodes?type=collection`);
    expect(list.json.data.map((x: any) => x.slug)).toEqual(["blog"]);
    expect(list.json.total).toBe(1);
    const drafts = await h.request("GET", `/admin/p/${p.slug}/nodes?status=draft`);
    expect(drafts.json.data.map((x: any) => x.slug)).toEqual(["about"]);
  });

  test("moving or renaming a node rewrites descendant paths in one transaction", async () => {
    const p = await seedProject(h);
    const a = await seedNode(h, p.slug, { slug: "a" });
    const b = await seedNode(h, p.slug, { slug: "b", parent_id: a.id });
    const c = await seedNode(h, p.slug, { slug: "c", parent_id: b.id });
    const other = await seedNode(h, p.slug, { slug: "other" });
    expect(c.path).toBe("a/b/c");
    const moved = await h.request("PATCH", `/admin/p/${p.slug}/nodes/${b.id}`, { body: { parent_id: other.id, slug: "bee" } });
    expect(moved.status).toBe(200);
    expect(moved.json.data.path).toBe("other/bee");
    const [row] = await h.deps.db.select().from(nodes).where(eq(nodes.id, c.id));
    expect(row!.path).toBe("other/bee/c");
    // Moving to the root
    const root = await h.request("PATCH", `/admin/p/${p.slug}/nodes/${b.id}`, { body: { parent_id: null } });
    expect(root.json.data.path).toBe("bee");
    const [row2] = await h.deps.db.select().from(nodes).where(eq(nodes.id, c.id));
    expect(row2!.path).toBe("bee/c");
  });

  test("path conflicts are 409 and leave every path unchanged", async () => {
    const p = await seedProject(h);
    const a = await seedNode(h, p.slug, { slug: "a" });
    await seedNode(h, p.slug, { slug: "x", parent_id: a.id });
    const b = await seedNode(h, p.slug, { slug: "b" });
    await seedNode(h, p.slug, { slug: "x", parent_id: b.id });
    const y = await seedNode(h, p.slug, { slug: "y", parent_id: b.id });
    const dup = await h.request("POST", `/admin/p/${p.slug}/nodes`, { body: { slug: "a", title: "dup" } });
    expect(dup.status).toBe(409);
    expect(dup.json.error.code).toBe("conflict");
    const before = (await h.deps.db.select({ id: nodes.id, path: nodes.path }).from(nodes).where(eq(nodes.projectId, p.id))).sort((l, r) => l.id.localeCompare(r.id));
    // Renaming b to a clashes with a; moving y under a keeps working.
    const clash = await h.request("PATCH", `/admin/p/${p.slug}/nodes/${b.id}`, { body: { slug: "a" } });
    expect(clash.status).toBe(409);
    const after = (await h.deps.db.select({ id: nodes.id, path: nodes.path }).from(nodes).where(eq(nodes.projectId, p.id))).sort((l, r) => l.id.localeCompare(r.id));
    expect(after).toEqual(before);
    expect((await h.request("PATCH", `/admin/p/${p.slug}/nodes/${y.id}`, { body: { parent_id: a.id } })).json.data.path).toBe("a/y");
    const cycle = await h.request("PATCH", `/admin/p/${p.slug}/nodes/${a.id}`, { body: { parent_id: a.id } });
    expect(cycle.status).toBe(400);
  });

  test("block array writes keep ids of existing blocks and delete the rest", async () => {
    const p = await seedProject(h);
    const n = await seedNode(h, p.slug, { slug: "page", blocks: [{ type: "a" }, { type: "b" }, { type: "c" }] });
    const [a, b, c] = n.blocks;
    const res = await h.request("PUT", `/admin/p/${p.slug}/nodes/${n.id}/blocks`, {
      body: [{ id: c.id, type: "c", data: { v: 1 } }, { type: "new" }, { id: a.id, type: "a" }],
    });
    expect(res.status).toBe(200);
    expect(res.json.data.map((x: any) => [x.id === c.id, x.type, x.order])).toEqual([
      [true, "c", 0],
      [false, "new", 1],
      [false, "a", 2],
    ]);
    expect(res.json.data[2].id).toBe(a.id);
    const rows = await h.deps.db.select().from(blocks).where(eq(blocks.nodeId, n.id));
    expect(rows.map((r) => r.id)).not.toContain(b.id);
    expect(rows).toHaveLength(3);
    const foreign = await h.request("PUT", `/admin/p/${p.slug}/nodes/${n.id}/blocks`, { body: [{ id: crypto.randomUUID(), type: "x" }] });
    expect(foreign.status).toBe(400);
    expect(await h.deps.db.select().from(blocks).where(eq(blocks.nodeId, n.id))).toHaveLength(3);
  });

  test("status transitions and content version", async () => {
    const p = await seedProject(h);
    const n = await seedNode(h, p.slug, { slug: "t" });
    const version = async (): Promise<number> => (await h.deps.db.select().from(projects).where(eq(projects.id, p.id)))[0]!.contentVersion;
    const v0 = await version();
    const pub = await h.request("POST", `/admin/p/${p.slug}/nodes/${n.id}/publish`);
    expect(pub.json.data.status).toBe("published");
    expect(pub.json.data.published_at).not.toBeNull();
    expect(await version()).toBeGreaterThan(v0);
    expect((await h.request("POST", `/admin/p/${p.slug}/nodes/${n.id}/unpublish`)).json.data.status).toBe("draft");
    expect((await h.request("POST", `/admin/p/${p.slug}/nodes/${n.id}/archive`)).json.data.status).toBe("archived");
    const bad = await h.request("POST", `/admin/p/${p.slug}/nodes/${n.id}/publish`);
    expect(bad.status).toBe(409);
    expect((await h.request("POST", `/admin/p/${p.slug}/nodes/${n.id}/restore`)).json.data.status).toBe("draft");
  });

  test("unknown fields are refused by name (400 invalid_input), never written (issue 22 §3)", async () => {
    const p = await seedProject(h);
    const other = await seedProject(h);
    const res = await h.request("POST", `/admin/p/${p.slug}/nodes`, {
      body: { slug: "m", title: "m", id: "00000000-0000-7000-8000-000000000000", project_id: other.id, status: "published" },
    });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe("invalid_input");
    expect(res.json.error.details.fields).toEqual(["id", "project_id", "status"]);
    expect(await h.deps.db.select().from(nodes).where(eq(nodes.projectId, p.id))).toEqual([]);
  });

  test("bad bodies give 400 and write nothing", async () => {
    const p = await seedProject(h);
    const count = async (): Promise<number> => (await h.deps.db.select().from(nodes).where(eq(nodes.projectId, p.id))).length;
    for (const body of [{ title: "no slug" }, { slug: "ok", title: 5 }, { slug: "Bad/Slug", title: "x" }, { slug: "ok", title: "x", parent_id: crypto.randomUUID() }, { slug: "ok", title: "" }]) {
      const r = await h.request("POST", `/admin/p/${p.slug}/nodes`, { body });
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe("invalid_request");
    }
    expect(await count()).toBe(0);
  });

  test("scopes and other projects on every content route", async () => {
    const a = await seedProject(h);
    const b = await seedProject(h);
    const nb = await seedNode(h, b.slug, { slug: "secret" });
    const reader = await keyWith(h, ["content:read"]);
    // theme:write: the theme's own scope (issue 37), so that the theme routes too reach the project check.
    const limited = await keyWith(h, ["content:read", "content:write", "content:publish", "theme:write"], [a.id]);
    const routes: Array<[string, string, unknown?]> = [
      ["GET", `/admin/p/${b.slug}/nodes`],
      ["POST", `/admin/p/${b.slug}/nodes`, { slug: "z", title: "z" }],
      ["GET", `/admin/p/${b.slug}/nodes/${nb.id}`],
      ["PATCH", `/admin/p/${b.slug}/nodes/${nb.id}`, { title: "hacked" }],
      ["PUT", `/admin/p/${b.slug}/nodes/${nb.id}/blocks`, []],
      ["POST", `/admin/p/${b.slug}/nodes/${nb.id}/publish`],
      ["DELETE", `/admin/p/${b.slug}/nodes/${nb.id}`],
      ["GET", `/admin/p/${b.slug}/theme`],
      ["PUT", `/admin/p/${b.slug}/theme`, { accent_color: "#000000" }],
      ["GET", `/admin/p/${b.slug}/nodes/${nb.id}/translations`],
      ["PUT", `/admin/p/${b.slug}/nodes/${nb.id}/translations/fr`, { meta: { title: "x" } }],
    ];
    for (const [method, path, body] of routes) {
      expect((await h.request(method, path, { key: null, body })).status).toBe(401);
      expect((await h.request(method, path, { key: limited, body })).status).toBe(404);
      if (method !== "GET") {
        const r = await h.request(method, path, { key: reader, body });
        expect(r.status).toBe(403);
        // Publishing and deleting need content:publish (issue 27), the theme theme:write or projects:write (issue 37), the other writes content:write.
        const needed = path.endsWith("/theme") ? "projects:write or theme:write" : /\/(publish|nodes\/[^/]+)$/.test(path) && method !== "PATCH" ? "content:publish" : "content:write";
        expect(r.json.error.message).toContain(needed);
      }
    }
    // content:write alone does not write the theme, even of a project the key reaches.
    const writerOfA = await keyWith(h, ["content:read", "content:write", "content:publish"], [a.id]);
    const theme = await h.request("PUT", `/admin/p/${a.slug}/theme`, { key: writerOfA, body: { accent_color: "#000000" } });
    expect(theme.status).toBe(403);
    expect(theme.json.error.details.required).toEqual(["projects:write", "theme:write"]);
    // A node of project B is not reachable through project A either.
    const cross = await h.request("GET", `/admin/p/${a.slug}/nodes/${nb.id}`);
    expect(cross.status).toBe(404);
    const [row] = await h.deps.db.select().from(nodes).where(eq(nodes.id, nb.id));
    expect(row!.title).toBe("secret");
  });

  test("deleting a project deletes everything in it", async () => {
    const p = await seedProject(h);
    const n = await seedNode(h, p.slug, { slug: "x", blocks: [{ type: "t" }] });
    expect((await h.request("DELETE", `/admin/projects/${p.id}`)).status).toBe(204);
    expect(await h.deps.db.select().from(nodes).where(eq(nodes.id, n.id))).toHaveLength(0);
    expect(await h.deps.db.select().from(blocks).where(eq(blocks.nodeId, n.id))).toHaveLength(0);
  });
});

describe("authentication comes before validation; unstorable input is refused", async () => {
  const h = await harness();

  test("a bad body from a caller without a key, scope or project is 401, 403 or 404, never 400", async () => {
    const a = await seedProject(h);
    const b = await seedProject(h);
    const bad = { slug: "Not A Slug", title: 42 };
    expect((await h.request("POST", `/admin/p/${a.slug}/nodes`, { key: null, body: bad })).status).toBe(401);
    expect((await h.request("POST", `/admin/p/${a.slug}/nodes`, { key: await keyWith(h, ["content:read"]), body: bad })).status).toBe(403);
    expect((await h.request("POST", `/admin/p/${b.slug}/nodes`, { key: await keyWith(h, ["content:write"], [a.id]), body: bad })).status).toBe(404);
    expect((await h.request("POST", "/admin/projects", { key: null, body: { slug: 5 } })).status).toBe(401);
    expect((await h.request("POST", `/admin/p/${a.slug}/nodes`, { body: bad })).status).toBe(400);
  });

  test("NUL characters and unpaired surrogates in bodies, paths and queries are 400, nothing written", async () => {
    const p = await seedProject(h);
    const count = async (): Promise<number> => (await h.deps.db.select().from(nodes).where(eq(nodes.projectId, p.id))).length;
    for (const title of ["a\u0000b", "x\ud800y"]) {
      const r = await h.request("POST", `/admin/p/${p.slug}/nodes`, { body: { slug: "nul", title } });
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe("invalid_request");
    }
    const inData = await h.request("POST", `/admin/p/${p.slug}/nodes`, { body: { slug: "nul", title: "ok", blocks: [{ type: "t", data: { "k\u0000": 1 } }] } });
    expect(inData.status).toBe(400);
    expect((await h.request("GET", `/admin/p/${p.slug}/nodes?type=%00`)).status).toBe(400);
    expect((await h.request("GET", `/admin/p/${p.slug}/nodes?path_prefix=a%00`)).status).toBe(400);
    expect((await h.request("GET", `/api/p/${p.slug}/nodes/by-path/a%00b`, { key: null })).status).toBe(400);
    expect(await count()).toBe(0);
  });

  test("paths are capped at 1024 characters, also for descendants after a move", async () => {
    const p = await seedProject(h);
    let parent: string | null = null;
    const seg = "s".repeat(60);
    for (let i = 0; i < 16; i++) parent = (await seedNode(h, p.slug, { slug: `${seg}${i}`.slice(-62), parent_id: parent })).id;
    const deep = await h.request("POST", `/admin/p/${p.slug}/nodes`, { body: { slug: "x".repeat(60), title: "too deep", parent_id: parent } });
    expect(deep.status).toBe(400);
    const other = await seedNode(h, p.slug, { slug: "y".repeat(60) });
    const all = await h.request("GET", `/admin/p/${p.slug}/nodes?per_page=100`);
    const root = all.json.data.find((n: any) => n.parent_id === null && n.slug !== other.slug);
    const move = await h.request("PATCH", `/admin/p/${p.slug}/nodes/${root.id}`, { body: { parent_id: other.id } });
    expect(move.status).toBe(400);
    const after = await h.request("GET", `/admin/p/${p.slug}/nodes/${root.id}`);
    expect(after.json.data.parent_id).toBeNull();
  });

  test('arrays where objects belong (seo, block data) are 400, never stored as {"0": …}', async () => {
    const p = await seedProject(h);
    for (const body of [
      { slug: "a", title: "a", seo: [1, 2] },
      { slug: "a", title: "a", blocks: [{ type: "t", data: [1] }] },
    ]) {
      const r = await h.request("POST", `/admin/p/${p.slug}/nodes`, { body });
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe("invalid_request");
    }
    expect(await h.deps.db.select().from(nodes).where(eq(nodes.projectId, p.id))).toHaveLength(0);
  });

  test("slugs shaped like ids, empty project limits and backslash asset paths are refused", async () => {
    expect((await h.request("POST", "/admin/projects", { body: { slug: crypto.randomUUID(), name: "x" } })).status).toBe(400);
    const empty = await h.request("POST", "/admin/keys", { body: { name: "none", project_ids: [] } });
    expect(empty.status).toBe(400);
    const p = await seedProject(h);
    expect((await h.request("PUT", `/admin/p/${p.slug}/theme`, { body: { logo_url: "/\\evil.example/x.png" } })).status).toBe(400);
    expect((await h.request("PUT", `/admin/p/${p.slug}/theme`, { body: { logo_url: "/img/logo.png" } })).status).toBe(200);
  });
});
