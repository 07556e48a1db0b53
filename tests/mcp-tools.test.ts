import { afterAll, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { blocks, nodes, projects, themes, translations } from "../db/schema";
import { uuidv7 } from "../src/lib/ids";
import { seedNode, seedProject } from "./helpers";
import { call, callError, mcpHarness } from "./mcp-harness";

describe("MCP tools: happy and error paths", async () => {
  const m = await mcpHarness();
  afterAll(() => m.stop());
  const db = m.h.deps.db;

  async function setup(locales = ["en", "fr", "de"]) {
    const p = await seedProject(m.h, { locales });
    const { token } = await m.token(p.slug);
    return { p, client: await m.connect(token) };
  }
  const version = async (id: string): Promise<number> => (await db.select().from(projects).where(eq(projects.id, id)))[0]!.contentVersion;

  test("list_nodes filters by type, status, parent and path prefix, paginates; bad filters are tool errors", async () => {
    const { p, client } = await setup();
    const blog = await seedNode(m.h, p.slug, { slug: "blog", type: "collection" }, true);
    const post = await seedNode(m.h, p.slug, { slug: "hello", type: "entry", parent_id: blog.id }, true);
    const draft = await seedNode(m.h, p.slug, { slug: "draft-post", type: "entry", parent_id: blog.id });
    const about = await seedNode(m.h, p.slug, { slug: "about" });
    const ids = (r: any) => r.nodes.map((n: any) => n.id);

    const all = await call(client, "list_nodes");
    expect(all.total).toBe(4);
    expect(all.nodes.map((n: any) => n.path)).toEqual(["about", "blog", "blog/draft-post", "blog/hello"]);
    expect(ids(await call(client, "list_nodes", { type: "entry" })).sort()).toEqual([post.id, draft.id].sort());
    expect(ids(await call(client, "list_nodes", { status: "draft" })).sort()).toEqual([draft.id, about.id].sort());
    expect(ids(await call(client, "list_nodes", { parent_id: "root" })).sort()).toEqual([blog.id, about.id].sort());
    expect(ids(await call(client, "list_nodes", { parent_id: blog.id })).sort()).toEqual([post.id, draft.id].sort());
    expect(ids(await call(client, "list_nodes", { path_prefix: "blog" }))).toEqual([blog.id, draft.id, post.id]);
    const page2 = await call(client, "list_nodes", { per_page: 3, page: 2 });
    expect(page2).toMatchObject({ total: 4, page: 2, per_page: 3 });
    expect(ids(page2)).toEqual([post.id]);

    expect(await callError(client, "list_nodes", { status: "deleted" })).toContain("status");
    expect(await callError(client, "list_nodes", { per_page: 1000 })).toContain("per_page");
    expect(await callError(client, "list_nodes", { parent_id: "blog" })).toContain("parent_id");
  });

  test("get_node by id or path with blocks, any status, merged with a locale's translation", async () => {
    const { p, client } = await setup();
    const n = await seedNode(m.h, p.slug, {
      slug: "home",
      title: "Home",
      seo: { description: "Welcome" },
      blocks: [
        { type: "hero", data: { heading: "Hi", cta: { label: "Go", href: "/go" } } },
        { type: "text", data: { text: "Body" } },
      ],
    });
    const byId = await call(client, "get_node", { id: n.id });
    expect(byId.node).toMatchObject({ id: n.id, title: "Home", status: "draft", locale: "en", translated: false, translation_status: null });
    expect(byId.node.blocks.map((b: any) => b.type)).toEqual(["hero", "text"]);
    expect((await call(client, "get_node", { path: "/home/" })).node.id).toBe(n.id);

    const hero = byId.node.blocks[0].id;
    await m.h.request("PUT", `/admin/p/${p.slug}/nodes/${n.id}/translations/fr`, {
      body: { meta: { title: "Accueil", description: "Bienvenue" }, blocks: { [hero]: { cta: { label: "Aller" } } }, status: "draft" },
    });
    const fr = await call(client, "get_node", { id: n.id, locale: "fr" });
    expect(fr.node).toMatchObject({ title: "Accueil", locale: "fr", translated: true, translation_status: "draft", seo: { description: "Bienvenue" } });
    expect(fr.node.blocks[0].data).toEqual({ heading: "Hi", cta: { label: "Aller", href: "/go" } });
    expect((await call(client, "get_node", { id: n.id, locale: "de" })).node).toMatchObject({ title: "Home", translated: false });

    expect(await callError(client, "get_node", { id: uuidv7() })).toMatch(/^not_found: node not found/);
    expect(await callError(client, "get_node", { path: "nope" })).toMatch(/^not_found/);
    expect(await callError(client, "get_node", { id: n.id, path: "home" })).toContain("either id or path");
    expect(await callError(client, "get_node", {})).toMatch(/^missing_parameter/);
    expect(await callError(client, "get_node", { id: n.id, locale: "it" })).toMatch(/^invalid_locale/);
    expect(await callError(client, "get_node", { id: "not-a-uuid" })).toContain("id");
  });

  test("create_node creates a draft with blocks and bumps the content version; conflicts and bad input are tool errors", async () => {
    const { p, client } = await setup();
    const before = await version(p.id);
    const created = await call(client, "create_node", {
      slug: "pricing",
      title: "Pricing",
      seo: { description: "Plans", noindex: true },
      blocks: [{ type: "table", data: { rows: 3 } }],
    });
    expect(created.node).toMatchObject({ slug: "pricing", path: "pricing", type: "page", status: "draft", seo: { description: "Plans", noindex: true } });
    const [row] = await db.select().from(nodes).where(eq(nodes.id, created.node.id));
    expect(row).toMatchObject({ projectId: p.id, title: "Pricing", status: "draft" });
    expect(await db.select().from(blocks).where(eq(blocks.nodeId, created.node.id))).toHaveLength(1);
    expect(await version(p.id)).toBeGreaterThan(before);

    const child = await call(client, "create_node", { slug: "team", title: "Team", parent_id: created.node.id });
    expect(child.node.path).toBe("pricing/team");

    expect(await callError(client, "create_node", { slug: "pricing", title: "Again" })).toMatch(/^conflict/);
    expect(await callError(client, "create_node", { slug: "Bad Slug", title: "x" })).toContain("slug");
    expect(await callError(client, "create_node", { slug: "x" })).toContain("title");
    expect(await callError(client, "create_node", { slug: "orphan", title: "x", parent_id: uuidv7() })).toMatch(/^invalid_request: parent_id/);
    expect(await callError(client, "create_node", { slug: "b", title: "x", blocks: [{ type: "t", data: "text" }] })).toContain("blocks");
    expect(
      await db
        .select()
        .from(nodes)
        .where(and(eq(nodes.projectId, p.id), eq(nodes.slug, "orphan"))),
    ).toHaveLength(0);
  });

  test("update_node changes fields, moves with descendants and replaces blocks; bad updates are tool errors", async () => {
    const { p, client } = await setup();
    const docs = await seedNode(m.h, p.slug, { slug: "docs" });
    const guide = await seedNode(m.h, p.slug, {
      slug: "guide",
      parent_id: docs.id,
      blocks: [
        { type: "text", data: { text: "a" } },
        { type: "text", data: { text: "b" } },
      ],
    });
    const up = await call(client, "update_node", { node_id: docs.id, slug: "manual", title: "Manual", seo: { description: "All of it" } });
    expect(up.node).toMatchObject({ path: "manual", title: "Manual", seo: { description: "All of it" } });
    expect((await db.select().from(nodes).where(eq(nodes.id, guide.id)))[0]!.path).toBe("manual/guide");

    const keep = guide.blocks[1].id;
    const re = await call(client, "update_node", {
      node_id: guide.id,
      blocks: [
        { id: keep, type: "text", data: { text: "B" } },
        { type: "quote", data: { text: "new" } },
      ],
    });
    expect(re.node.blocks.map((b: any) => [b.type, b.data.text])).toEqual([
      ["text", "B"],
      ["quote", "new"],
    ]);
    expect(re.node.blocks[0].id).toBe(keep);
    const moved = await call(client, "update_node", { node_id: guide.id, parent_id: null });
    expect(moved.node.path).toBe("guide");

    expect(await callError(client, "update_node", { node_id: guide.id })).toMatch(/^missing_parameter: nothing to update/);
    expect(await callError(client, "update_node", { node_id: docs.id, parent_id: docs.id })).toMatch(/^invalid_request/);
    expect(await callError(client, "update_node", { node_id: docs.id, slug: "guide" })).toMatch(/^conflict/);
    expect(await callError(client, "update_node", { node_id: uuidv7(), title: "x" })).toMatch(/^not_found/);
    expect(await callError(client, "update_node", { node_id: guide.id, blocks: [{ id: uuidv7(), type: "x" }] })).toMatch(/^invalid_request/);
    expect((await db.select().from(nodes).where(eq(nodes.id, docs.id)))[0]!.slug).toBe("manual");
  });

  test("reorder_blocks reorders and keeps ids and data; an incomplete or foreign list is a tool error", async () => {
    const { p, client } = await setup();
    const n = await seedNode(m.h, p.slug, {
      slug: "page",
      blocks: [
        { type: "a", data: { v: 1 } },
        { type: "b", data: { v: 2 } },
        { type: "c", data: { v: 3 } },
      ],
    });
    const [a, b, c] = n.blocks.map((x: any) => x.id);
    const before = await version(p.id);
    const r = await call(client, "reorder_blocks", { node_id: n.id, block_ids: [c, a, b] });
    // One write, one content version (no nested write bumping it twice).
    expect(await version(p.id)).toBe(before + 1);
    expect(r.blocks.map((x: any) => [x.id, x.type, x.order, x.data.v])).toEqual([
      [c, "c", 0, 3],
      [a, "a", 1, 1],
      [b, "b", 2, 2],
    ]);
    const rows = await db.select().from(blocks).where(eq(blocks.nodeId, n.id));
    expect(rows.sort((x, y) => x.order - y.order).map((x) => x.id)).toEqual([c, a, b]);

    expect(await callError(client, "reorder_blocks", { node_id: n.id, block_ids: [c, a] })).toContain(`missing: ${b}`);
    expect(await callError(client, "reorder_blocks", { node_id: n.id, block_ids: [c, a, b, a] })).toContain("twice");
    expect(await callError(client, "reorder_blocks", { node_id: n.id, block_ids: [c, a, uuidv7()] })).toContain("not blocks of this node");
    expect(await callError(client, "reorder_blocks", { node_id: uuidv7(), block_ids: [] })).toMatch(/^not_found/);
  });

  test("publish_node, unpublish_node, archive_node, restore_node follow the status rules", async () => {
    const { p, client } = await setup();
    const n = await seedNode(m.h, p.slug, { slug: "news" });
    const pub = await call(client, "publish_node", { node_id: n.id });
    expect(pub.node.status).toBe("published");
    expect(pub.node.published_at).not.toBeNull();
    expect((await m.h.request("GET", `/admin/p/${p.slug}/nodes/${n.id}`)).json.data.status).toBe("published");
    expect((await call(client, "unpublish_node", { node_id: n.id })).node.status).toBe("draft");
    expect((await call(client, "archive_node", { node_id: n.id })).node.status).toBe("archived");
    expect(await callError(client, "publish_node", { node_id: n.id })).toMatch(/^conflict: cannot publish a node that is archived/);
    expect((await call(client, "restore_node", { node_id: n.id })).node.status).toBe("draft");
    expect(await callError(client, "restore_node", { node_id: n.id })).toMatch(/^conflict/);
    expect(await callError(client, "unpublish_node", { node_id: uuidv7() })).toMatch(/^not_found/);
    expect(await callError(client, "archive_node", { node_id: "x" })).toContain("node_id");
    expect((await db.select().from(nodes).where(eq(nodes.id, n.id)))[0]!.status).toBe("draft");
  });

  test("list_entries lists a collection's entries in every status, with q, sort, status and paging", async () => {
    const { p, client } = await setup();
    // Published, so that entries can be published below it.
    const blog = await seedNode(m.h, p.slug, { slug: "blog", type: "collection" }, true);
    const e1 = await seedNode(m.h, p.slug, { slug: "alpha", title: "Alpha launch", type: "entry", parent_id: blog.id }, true);
    const e2 = await seedNode(m.h, p.slug, { slug: "beta", title: "Beta notes", type: "entry", parent_id: blog.id });
    const e3 = await seedNode(m.h, p.slug, { slug: "gamma", title: "Gamma launch", type: "entry", parent_id: blog.id }, true);
    const ids = (r: any) => r.entries.map((e: any) => e.id);

    const all = await call(client, "list_entries", { collection: "blog" });
    expect(all).toMatchObject({ collection: { id: blog.id, path: "blog" }, total: 3, page: 1, per_page: 20 });
    expect(all.entries[0]).toEqual({
      id: expect.any(String),
      slug: expect.any(String),
      title: expect.any(String),
      path: expect.stringMatching(/^blog\//),
      status: expect.any(String),
      position: expect.any(Number),
      fields: {},
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(ids(await call(client, "list_entries", { collection: blog.id, sort: "title" }))).toEqual([e1.id, e2.id, e3.id]);
    expect(ids(await call(client, "list_entries", { collection: "blog", sort: "-title" }))).toEqual([e3.id, e2.id, e1.id]);
    expect(ids(await call(client, "list_entries", { collection: "blog", q: "LAUNCH", sort: "created_at" }))).toEqual([e1.id, e3.id]);
    expect(ids(await call(client, "list_entries", { collection: "blog", q: "bet" }))).toEqual([e2.id]);
    expect(ids(await call(client, "list_entries", { collection: "blog", q: "%" }))).toEqual([]);
    expect(ids(await call(client, "list_entries", { collection: "blog", status: "draft" }))).toEqual([e2.id]);
    const paged = await call(client, "list_entries", { collection: "blog", sort: "position", per_page: 2, page: 2 });
    expect(paged).toMatchObject({ total: 3, per_page: 2, page: 2 });
    expect(ids(paged)).toEqual([e3.id]);

    expect(await callError(client, "list_entries", { collection: "blog/alpha" })).toMatch(/^invalid_request: node "blog\/alpha" is of type "entry", not a collection/);
    expect(await callError(client, "list_entries", { collection: "nope" })).toMatch(/^not_found/);
    expect(await callError(client, "list_entries", { collection: "blog", sort: "random" })).toContain("sort");
    expect(await callError(client, "list_entries", { collection: "blog", per_page: 101 })).toContain("per_page");
  });

  test("get_translation and upsert_translation read and write a locale's translation", async () => {
    const { p, client } = await setup();
    const n = await seedNode(m.h, p.slug, { slug: "about", blocks: [{ type: "text", data: { text: "About us" } }] });
    const blockId = n.blocks[0].id;
    expect(await callError(client, "get_translation", { node_id: n.id, locale: "fr" })).toMatch(/^not_found: translation not found/);

    const written = await call(client, "upsert_translation", {
      node_id: n.id,
      locale: "fr",
      meta: { title: "À propos", slug: "a-propos" },
      blocks: { [blockId]: { text: "À propos de nous" } },
      status: "published",
    });
    expect(written.translation).toMatchObject({ node_id: n.id, locale: "fr", status: "published", state: "published", meta: { title: "À propos", slug: "a-propos" } });
    const [row] = await db
      .select()
      .from(translations)
      .where(and(eq(translations.nodeId, n.id), eq(translations.locale, "fr")));
    expect(row!.blocks).toEqual({ [blockId]: { text: "À propos de nous" } });
    const read = await call(client, "get_translation", { node_id: n.id, locale: "fr" });
    expect(read.translation.id).toBe(written.translation.id);
    // A draft write over a published translation replaces its working copy; the published version stays (state changed).
    const draft = await call(client, "upsert_translation", { node_id: n.id, locale: "fr", meta: { title: "Qui sommes-nous" }, status: "draft" });
    expect(draft.translation).toMatchObject({ status: "published", state: "changed", meta: { title: "Qui sommes-nous" }, blocks: {} });
    expect((await call(client, "get_translation", { node_id: n.id, locale: "fr" })).translation).toMatchObject({ state: "changed", meta: { title: "Qui sommes-nous" }, blocks: {} });
    // Without a status, a new translation is a draft.
    const fresh = await call(client, "upsert_translation", { node_id: n.id, locale: "de", meta: { title: "Über uns" } });
    expect(fresh.translation).toMatchObject({ locale: "de", status: "draft", state: "draft", meta: { title: "Über uns" } });

    expect(await callError(client, "upsert_translation", { node_id: n.id, locale: "en", meta: { title: "x" } })).toMatch(/^invalid_locale/);
    expect(await callError(client, "upsert_translation", { node_id: n.id, locale: "it", meta: { title: "x" } })).toMatch(/^invalid_locale/);
    expect(await callError(client, "upsert_translation", { node_id: n.id, locale: "de", blocks: { [uuidv7()]: { text: "x" } } })).toMatch(/^invalid_request: block/);
    expect(await callError(client, "upsert_translation", { node_id: n.id, locale: "de", meta: { slug: "Not A Slug" } })).toContain("slug");
    expect(await callError(client, "get_translation", { node_id: n.id, locale: "xx-invalid-!" })).toMatch(/invalid_locale|locale/);
  });

  test("get_theme and update_theme read and partially update the brand; bad values are tool errors", async () => {
    const { p, client: contentOnly } = await setup();
    // The theme needs theme:write: content:write alone is refused, and nothing is written.
    expect(await callError(contentOnly, "update_theme", { accent_color: "#AABBCC" })).toMatch(/^insufficient_scope: update_theme needs .*theme:write/);
    const { token } = await m.token(p.slug, { name: "brand", scopes: ["content:read", "theme:write"] });
    const client = await m.connect(token);
    expect((await call(client, "get_theme")).theme).toEqual({ logo_url: null, favicon_url: null, accent_color: null, name_override: null });
    const up = await call(client, "update_theme", { accent_color: "#AABBCC", logo_url: "https://cdn.example.com/logo.svg", name_override: "Acme" });
    expect(up.theme).toEqual({ logo_url: "https://cdn.example.com/logo.svg", favicon_url: null, accent_color: "#aabbcc", name_override: "Acme" });
    const cleared = await call(client, "update_theme", { name_override: null, favicon_url: "/favicon.ico" });
    expect(cleared.theme).toMatchObject({ accent_color: "#aabbcc", name_override: null, favicon_url: "/favicon.ico" });
    const [row] = await db.select().from(themes).where(eq(themes.projectId, p.id));
    expect(row).toMatchObject({ accentColor: "#aabbcc", nameOverride: null, faviconUrl: "/favicon.ico" });
    expect((await call(client, "get_theme")).theme.favicon_url).toBe("/favicon.ico");

    expect(await callError(client, "update_theme", { accent_color: "red" })).toContain("accent_color");
    expect(await callError(client, "update_theme", { logo_url: "javascript:alert(1)" })).toMatch(/^invalid_request: logo_url/);
    expect((await db.select().from(themes).where(eq(themes.projectId, p.id)))[0]!.logoUrl).toBe("https://cdn.example.com/logo.svg");
  });

  test("get_project returns the bound project's settings and refuses arguments naming another project", async () => {
    const { p, client } = await setup(["en", "fr"]);
    const other = await seedProject(m.h);
    const refused = await callError(client, "get_project", { ref: other.slug, project_id: other.id });
    expect(refused).toStartWith("invalid_input: get_project does not take these fields: ref, project_id");
    expect(refused).not.toContain(other.id);
    const r = await call(client, "get_project");
    expect(r.project).toMatchObject({ id: p.id, slug: p.slug, default_locale: "en", locales: ["en", "fr"], public_base_url: null });
    const reader = await m.token(p.slug, { name: "ai-only", scopes: ["ai:read"] });
    expect(await callError(await m.connect(reader.token), "get_project")).toMatch(/^insufficient_scope: get_project needs the content:read scope/);
  });

  test("resources: nodes listed with a cursor, read as JSON; bad cursors and unknown URIs are errors", async () => {
    const { p, client } = await setup();
    const now = new Date();
    await db.insert(nodes).values(
      Array.from({ length: 105 }, (_, i) => ({
        id: uuidv7(now.getTime()),
        projectId: p.id,
        slug: `n-${String(i).padStart(3, "0")}`,
        path: `n-${String(i).padStart(3, "0")}`,
        type: "page",
        title: `Node ${i}`,
        createdAt: now,
        updatedAt: now,
      })),
    );
    const first = await client.listResources();
    // The first page opens with the content model, then 100 nodes.
    expect(first.resources).toHaveLength(101);
    expect(first.resources.shift()).toMatchObject({ uri: `cms://${p.slug}/model`, name: "model" });
    expect(first.resources[0]).toMatchObject({ name: "n-000", title: "Node 0", mimeType: "application/json", description: "page · draft" });
    expect(first.resources[0]!.uri).toMatch(new RegExp(`^cms://${p.slug}/nodes/[0-9a-f-]{36}$`));
    expect(first.nextCursor).toBeString();
    const second = await client.listResources({ cursor: first.nextCursor });
    expect(second.resources).toHaveLength(5);
    expect(second.nextCursor).toBeUndefined();
    expect(new Set([...first.resources, ...second.resources].map((r) => r.uri)).size).toBe(105);

    const uri = second.resources[4]!.uri;
    const read = await client.readResource({ uri });
    expect(read.contents[0]).toMatchObject({ uri, mimeType: "application/json" });
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toMatchObject({ slug: "n-104", blocks: [] });
    const templates = await client.listResourceTemplates();
    expect(templates.resourceTemplates.map((t) => t.uriTemplate)).toEqual([
      `cms://${p.slug}/nodes/{id}{?locale}`,
      `cms://${p.slug}/paths/{+path}{?locale}`,
      `cms://${p.slug}/nodes/{id}/revisions/{rev}`,
    ]);

    const badCursor = await client.listResources({ cursor: "garbage" }).catch((e: any) => e);
    expect(badCursor.code).toBe(-32602);
    for (const bad of [`cms://${p.slug}/nodes/${uuidv7()}`, `cms://${p.slug}/nodes/x`, "https://example.com/x"]) {
      const err = await client.readResource({ uri: bad }).catch((e: any) => e);
      expect(err.code).toBe(-32002);
    }
  });
});
