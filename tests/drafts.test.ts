// Issue 37: a working copy beside the published version. Every write a content:write-only caller
// can make (REST, MCP with a static token, MCP over OAuth) leaves what delivery answers byte for byte
// unchanged; publishing shows the change (URL, sitemap, entries order), discarding brings the
// working copy back, preview shows the working copy while delivery shows the published version.
import { afterAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { eq, sql } from "drizzle-orm";
import { publishedNodes, revisions } from "../db/schema";
import { rows } from "../src/lib/json";
import { get } from "./delivery.helpers";
import { HIGH_LIMITS, harness, keyWith, seedNode, seedProject, type TestHarness } from "./helpers";
import { call, callError } from "./mcp-harness";
import { ConsentingProvider, oauthMcpClient, seedUser } from "./oauth.helpers";

describe("drafts of published pages", async () => {
  let app: TestHarness | null = null;
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (r) => (app as TestHarness).app.handle(r) });
  const base = `http://127.0.0.1:${server.port}`;
  const h = await harness({ ...HIGH_LIMITS, PUBLIC_URL: base });
  app = h;
  const mcpUrl = new URL(`${base}/mcp`);
  const clients: Client[] = [];
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => {});
    server.stop(true);
  });
  const p = await seedProject(h, { locales: ["en", "fr"], default_locale: "en", public_base_url: "https://site.example" });
  const writer = await keyWith(h, ["content:read", "content:write"], [p.id]);
  const ok = async (res: Promise<{ status: number; text: string; json: any }>, status = 200) => {
    const r = await res;
    if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${r.text}`);
    return r.json?.data;
  };

  // A small site: a published home with blocks, a published section with two published entries, a
  // published French translation, and a published page under a parent that was unpublished since.
  const home = await seedNode(
    h,
    p.slug,
    {
      slug: "home",
      title: "Home",
      seo: { description: "Welcome" },
      fields: { tagline: "old" },
      blocks: [
        { type: "text", data: { text: "one" } },
        { type: "text", data: { text: "two" } },
      ],
    },
    true,
  );
  await ok(h.request("PUT", `/admin/p/${p.slug}/nodes/${home.id}/translations/fr`, { body: { meta: { title: "Accueil", slug: "accueil" }, status: "published" } }));
  const blog = await seedNode(h, p.slug, { slug: "blog", title: "Blog", type: "collection" }, true);
  const first = await seedNode(h, p.slug, { slug: "first", title: "First", parent_id: blog.id }, true);
  const second = await seedNode(h, p.slug, { slug: "second", title: "Second", parent_id: blog.id }, true);
  const embargo = await seedNode(h, p.slug, { slug: "embargo", title: "Embargo" }, true);
  const secret = await seedNode(h, p.slug, { slug: "secret", title: "Secret", parent_id: embargo.id }, true);
  await ok(h.request("POST", `/admin/p/${p.slug}/nodes/${embargo.id}/unpublish`));

  /** Every delivery answer a reader can ask for here, as bytes. */
  const PUBLIC = [
    "/nodes/by-path/home",
    "/nodes/by-path/accueil?locale=fr",
    `/nodes/${home.id}`,
    `/translations/nodes/${home.id}?locale=fr`,
    "/nodes/by-path/blog/first",
    "/nodes/by-path/secret",
    "/nodes/by-path/embargo/secret",
    "/entries?collection=blog",
    "/nodes",
    "/sitemap.xml",
    "/theme",
  ];
  const snapshotDelivery = async (): Promise<Record<string, string>> => {
    const out: Record<string, string> = {};
    for (const path of PUBLIC) {
      const r = await get(h, `/api/p/${p.slug}${path}`);
      out[path] = `${r.status} ${r.text}`;
    }
    return out;
  };
  const before = await snapshotDelivery();

  test("the site reads as published before anything (the snapshot reaches real answers)", () => {
    expect(before["/nodes/by-path/home"]).toStartWith("200 ");
    expect(JSON.parse(before["/nodes/by-path/home"]!.slice(4)).data.title).toBe("Home");
    expect(before["/nodes/by-path/accueil?locale=fr"]).toStartWith("200 ");
    expect(before["/nodes/by-path/embargo/secret"]).toStartWith("404 ");
    expect(before["/nodes/by-path/secret"]).toStartWith("404 ");
    expect(before["/sitemap.xml"]).toContain("https://site.example/blog/first");
  });

  test("REST with content:write only: every kind of write changes the working copy and nothing a reader sees", async () => {
    const key = { key: writer };
    await ok(
      h.request("PATCH", `/admin/p/${p.slug}/nodes/${home.id}`, {
        ...key,
        body: { title: "Hijacked", slug: "home-new", seo: { description: "Changed" }, fields: { tagline: "new" }, position: 9 },
      }),
    );
    const blocks = (await ok(h.request("GET", `/admin/p/${p.slug}/nodes/${home.id}`))).blocks as { id: string }[];
    await ok(
      h.request("PUT", `/admin/p/${p.slug}/nodes/${home.id}/blocks`, {
        ...key,
        body: [
          { type: "text", data: { text: "replaced" } },
          { id: blocks[1]!.id, type: "text", data: { text: "two!" } },
        ],
      }),
    );
    const after = (await ok(h.request("GET", `/admin/p/${p.slug}/nodes/${home.id}`))).blocks as { id: string }[];
    await ok(h.request("PUT", `/admin/p/${p.slug}/nodes/${home.id}/blocks/order`, { ...key, body: { block_ids: [after[1]!.id, after[0]!.id] } }));
    // A translation written "published" by a caller who may not publish is a draft.
    const tr = await ok(h.request("PUT", `/admin/p/${p.slug}/nodes/${home.id}/translations/fr`, { ...key, body: { meta: { title: "Piraté", slug: "pirate" }, status: "published" } }));
    expect(tr.status).toBe("published");
    expect(tr.state).toBe("changed");
    // The embargoed page moved out from under its unpublished parent, a post moved and renamed.
    await ok(h.request("PATCH", `/admin/p/${p.slug}/nodes/${secret.id}`, { ...key, body: { parent_id: null } }));
    await ok(h.request("PATCH", `/admin/p/${p.slug}/nodes/${first.id}`, { ...key, body: { title: "First, edited", slug: "first-edited" } }));
    await ok(h.request("POST", `/admin/p/${p.slug}/nodes`, { ...key, body: { slug: "draft-page", title: "Draft" } }), 201);
    // What readers see otherwise needs more than content:write.
    expect((await h.request("PUT", `/admin/p/${p.slug}/theme`, { ...key, body: { name_override: "Renamed" } })).status).toBe(403);
    expect((await h.request("POST", `/admin/p/${p.slug}/nodes/${home.id}/publish`, key)).status).toBe(403);
    expect((await h.request("DELETE", `/admin/p/${p.slug}/nodes/${home.id}/translations/fr`, key)).status).toBe(403);

    expect(await snapshotDelivery()).toEqual(before);
    // The working copies did change, and say so.
    const working = await ok(h.request("GET", `/admin/p/${p.slug}/nodes/${home.id}`));
    expect(working).toMatchObject({ title: "Hijacked", path: "home-new", status: "published", state: "changed" });
    expect((await ok(h.request("GET", `/admin/p/${p.slug}/nodes/${secret.id}`))).path).toBe("secret");
    const changed = await ok(h.request("GET", `/admin/p/${p.slug}/nodes?state=changed`));
    expect(changed.map((n: { slug: string }) => n.slug).sort()).toEqual(["first-edited", "home-new", "secret"]);
  });

  test("MCP with a static token holding content:write only: the same writes leave delivery unchanged", async () => {
    const token = (await ok(h.request("POST", `/admin/p/${p.slug}/ai/mcp/tokens`, { body: { name: "drafting agent", scopes: ["content:read", "content:write"] } }), 201)).token as string;
    const client = new Client({ name: "drafting agent", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    clients.push(client);
    await call(client, "update_node", { node_id: second.id, title: "Agent title", fields: { tagline: "agent" } });
    await call(client, "upsert_translation", { node_id: home.id, locale: "fr", meta: { title: "Agent FR" }, status: "published" });
    expect(await callError(client, "update_theme", { name_override: "Agent site" })).toMatch(/scope|theme:write|projects:write/);
    expect(await snapshotDelivery()).toEqual(before);
  });

  test("MCP over OAuth, content:publish unticked: the same", async () => {
    const user = await seedUser(h, "editor", [p.id]);
    const provider = new ConsentingProvider({ name: "drafts client", redirectUrl: "http://127.0.0.1:47037/callback", user, projectId: p.id, tick: ["content:read", "content:write"] });
    const client = await oauthMcpClient(mcpUrl, provider, "drafts-oauth");
    clients.push(client);
    await call(client, "update_node", { node_id: blog.id, title: "OAuth blog" });
    await call(client, "update_node", { node_id: second.id, blocks: [{ type: "text", data: { text: "oauth" } }] });
    expect(await snapshotDelivery()).toEqual(before);
  });

  test("preview shows the working copy while delivery shows the published version", async () => {
    const token = (await ok(h.request("POST", `/admin/p/${p.slug}/preview-tokens`, { body: { name: "preview" } }), 201)).token as string;
    const preview = await get(h, `/api/p/${p.slug}/nodes/by-path/home-new?preview=${token}`);
    expect(preview.status).toBe(200);
    expect(preview.json.data.title).toBe("Hijacked");
    expect(preview.json.data.blocks.map((b: { data: { text: string } }) => b.data.text)).toEqual(["two!", "replaced"]);
    const live = await get(h, `/api/p/${p.slug}/nodes/by-path/home`);
    expect(live.json.data.title).toBe("Home");
    expect(live.json.data.blocks.map((b: { data: { text: string } }) => b.data.text)).toEqual(["one", "two"]);
  });

  test("a dry run of publish_node shows the published version against what would be published, and changes nothing", async () => {
    const dry = await h.request("POST", `/admin/p/${p.slug}/nodes/${home.id}/publish?dry_run=true`);
    expect(dry.status).toBe(200);
    const change = dry.json.changes.find((c: { node_id: string }) => c.node_id === home.id);
    expect(change.published).toBe(true);
    const byPath = Object.fromEntries(change.diff.map((d: { path: string; before?: unknown; after?: unknown }) => [d.path, d]));
    expect(byPath["/title"]).toEqual({ path: "/title", before: "Home", after: "Hijacked" });
    expect(byPath["/slug"]).toEqual({ path: "/slug", before: "home", after: "home-new" });
    expect(await snapshotDelivery()).toEqual(before);
  });

  test("publishing shows the change on delivery, in the sitemap and in the entries order", async () => {
    await ok(h.request("POST", `/admin/p/${p.slug}/nodes/${home.id}/publish`));
    const live = await get(h, `/api/p/${p.slug}/nodes/by-path/home-new`);
    expect(live.status).toBe(200);
    expect(live.json.data.title).toBe("Hijacked");
    expect(live.json.data.blocks.map((b: { data: { text: string } }) => b.data.text)).toEqual(["two!", "replaced"]);
    expect((await get(h, `/api/p/${p.slug}/nodes/by-path/home`)).status).toBe(404);
    // The French translation's changes went with the node (the agent's write dropped its slug): its state is published again.
    const fr = await get(h, `/api/p/${p.slug}/nodes/by-path/home-new?locale=fr`);
    expect(fr.status).toBe(200);
    expect(fr.json.data.title).toBe("Agent FR");
    const state = await ok(h.request("GET", `/admin/p/${p.slug}/nodes/${home.id}`));
    expect(state.state).toBe("published");
    // The last revision says it published.
    const [last] = await h.deps.db.select({ published: revisions.published, operation: revisions.operation }).from(revisions).where(eq(revisions.nodeId, home.id)).orderBy(sql`number desc`).limit(1);
    expect(last).toEqual({ published: true, operation: "publish_node" });

    // A post renamed and moved in its working copy: its URL changes when it is published, and the entries order with it.
    const entriesBefore = (await get(h, `/api/p/${p.slug}/entries?collection=blog&sort=-updated_at`)).json.data.map((e: { slug: string }) => e.slug);
    expect(entriesBefore).toEqual(["second", "first"]);
    expect((await get(h, `/api/p/${p.slug}/sitemap.xml`)).text).not.toContain("first-edited");
    await ok(h.request("POST", `/admin/p/${p.slug}/nodes/${first.id}/publish`));
    expect((await get(h, `/api/p/${p.slug}/nodes/by-path/blog/first-edited`)).json.data.title).toBe("First, edited");
    expect((await get(h, `/api/p/${p.slug}/nodes/by-path/blog/first`)).status).toBe(404);
    const sitemap = (await get(h, `/api/p/${p.slug}/sitemap.xml`)).text;
    expect(sitemap).toContain("https://site.example/blog/first-edited");
    expect(sitemap).not.toContain("https://site.example/blog/first<");
    expect((await get(h, `/api/p/${p.slug}/entries?collection=blog&sort=-updated_at`)).json.data.map((e: { slug: string }) => e.slug)).toEqual(["first-edited", "second"]);
  });

  test("a page is published under a published parent: otherwise 409 naming what to publish first", async () => {
    const parent = await seedNode(h, p.slug, { slug: "unreleased", title: "Unreleased" });
    const child = await seedNode(h, p.slug, { slug: "child", title: "Child", parent_id: parent.id });
    const res = await h.request("POST", `/admin/p/${p.slug}/nodes/${child.id}/publish`);
    expect(res.status).toBe(409);
    expect(res.json.error.details.must_publish).toEqual([{ id: parent.id, path: "unreleased", title: "Unreleased" }]);
    expect((await h.deps.db.select().from(publishedNodes).where(eq(publishedNodes.id, child.id))).length).toBe(0);
    await ok(h.request("POST", `/admin/p/${p.slug}/nodes/${parent.id}/publish`));
    await ok(h.request("POST", `/admin/p/${p.slug}/nodes/${child.id}/publish`));
    expect((await get(h, `/api/p/${p.slug}/nodes/by-path/unreleased/child`)).status).toBe(200);
  });

  test("moving a published parent moves its children's URLs when it is published, not before", async () => {
    await ok(h.request("PATCH", `/admin/p/${p.slug}/nodes/${blog.id}`, { key: writer, body: { slug: "journal" } }));
    expect((await get(h, `/api/p/${p.slug}/nodes/by-path/blog/second`)).status).toBe(200);
    expect((await get(h, `/api/p/${p.slug}/nodes/by-path/journal/second`)).status).toBe(404);
    await ok(h.request("POST", `/admin/p/${p.slug}/nodes/${blog.id}/publish`));
    expect((await get(h, `/api/p/${p.slug}/nodes/by-path/journal/second`)).status).toBe(200);
    expect((await get(h, `/api/p/${p.slug}/nodes/by-path/blog/second`)).status).toBe(404);
    expect((await get(h, `/api/p/${p.slug}/sitemap.xml`)).text).toContain("https://site.example/journal/first-edited");
  });

  test("discard_changes brings the working copy back to the published version (content:write suffices; readers see nothing)", async () => {
    const published = await snapshotDelivery();
    await ok(h.request("PATCH", `/admin/p/${p.slug}/nodes/${second.id}`, { key: writer, body: { title: "Second, draft", slug: "second-draft", parent_id: null } }));
    await ok(h.request("PUT", `/admin/p/${p.slug}/nodes/${second.id}/blocks`, { key: writer, body: [{ type: "text", data: { text: "draft block" } }] }));
    const back = await ok(h.request("POST", `/admin/p/${p.slug}/nodes/${second.id}/discard`, { key: writer }));
    expect(back).toMatchObject({ title: "Second", slug: "second", path: "journal/second", parent_id: blog.id, state: "published" });
    const live = await get(h, `/api/p/${p.slug}/nodes/by-path/journal/second`);
    expect(back.blocks.map((b: { data: unknown }) => b.data)).toEqual(live.json.data.blocks.map((b: { data: unknown }) => b.data));
    expect(await snapshotDelivery()).toEqual(published);
    // Nothing published to go back to: 409.
    const draft = await seedNode(h, p.slug, { slug: "never", title: "Never" });
    expect((await h.request("POST", `/admin/p/${p.slug}/nodes/${draft.id}/discard`, { key: writer })).status).toBe(409);
  });

  test("a translation is published on its own with locale, and taken off the same way", async () => {
    await ok(h.request("PUT", `/admin/p/${p.slug}/nodes/${second.id}/translations/fr`, { key: writer, body: { meta: { title: "Deuxième", slug: "deuxieme" } } }));
    expect((await get(h, `/api/p/${p.slug}/translations/nodes/${second.id}?locale=fr`)).status).toBe(404);
    const node = await ok(h.request("POST", `/admin/p/${p.slug}/nodes/${second.id}/publish`, { body: { locale: "fr" } }));
    expect(node.id).toBe(second.id);
    const fr = await get(h, `/api/p/${p.slug}/translations/nodes/${second.id}?locale=fr`);
    expect(fr.status).toBe(200);
    expect(fr.json.data.title).toBe("Deuxième");
    await ok(h.request("POST", `/admin/p/${p.slug}/nodes/${second.id}/unpublish`, { body: { locale: "fr" } }));
    expect((await get(h, `/api/p/${p.slug}/translations/nodes/${second.id}?locale=fr`)).status).toBe(404);
    expect((await get(h, `/api/p/${p.slug}/nodes/by-path/journal/second`)).status).toBe(200);
  });

  test("a second app over the same database agrees at once", async () => {
    const { createApp } = await import("../src/app");
    const other = createApp({ ...h.deps });
    const read = async (path: string) => {
      const res = await other.app.handle(new Request(`http://localhost/api/p/${p.slug}${path}`));
      return { status: res.status, body: await res.text() };
    };
    const seen = await read("/nodes/by-path/journal/second");
    expect(seen.status).toBe(200);
    await ok(h.request("PATCH", `/admin/p/${p.slug}/nodes/${second.id}`, { body: { title: "Second, republished" } }));
    expect((await read("/nodes/by-path/journal/second")).body).toBe(seen.body);
    await ok(h.request("POST", `/admin/p/${p.slug}/nodes/${second.id}/publish`));
    const again = await read("/nodes/by-path/journal/second");
    expect(JSON.parse(again.body).data.title).toBe("Second, republished");
  });

  test("the published tables hold no working copy: an unpublished node's row is gone, or a tombstone while published pages sit below it", async () => {
    const found = rows<{ id: string; status: string }>(await h.deps.db.execute(sql`select id, status from published_nodes where id in (${embargo.id}::uuid, ${secret.id}::uuid)`));
    expect(found.sort((a, b) => a.id.localeCompare(b.id))).toEqual(
      [
        { id: embargo.id, status: "draft" },
        { id: secret.id, status: "published" },
      ].sort((a, b) => a.id.localeCompare(b.id)),
    );
  });
});
