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
import { dueSchedules, fireSchedule } from "../src/schedule/service";
import { decideInBrowser } from "./approvals.helpers";
import { get, until } from "./delivery.helpers";
import { HIGH_LIMITS, harness, keyWith, seedNode, seedProject, type TestHarness, waitFor } from "./helpers";
import { call, callError } from "./mcp-harness";
import { ConsentingProvider, oauthMcpClient, seedUser } from "./oauth.helpers";

describe("drafts of published pages", async () => {
  let app: TestHarness | null = null;
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (r) => (app as TestHarness).app.handle(r) });
  const base = `http://127.0.0.1:${server.port}`;
  const h = await harness({ ...HIGH_LIMITS, PUBLIC_URL: base, WEBHOOKS_ALLOW_PRIVATE_URLS: "true" });
  app = h;
  const mcpUrl = new URL(`${base}/mcp`);
  const clients: Client[] = [];
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => {});
    server.stop(true);
  });
  const p = await seedProject(h, { locales: ["en", "fr"], default_locale: "en", public_base_url: "https://site.example" });
  const writer = await keyWith(h, ["content:read", "content:write"], [p.id]);
  // An endpoint for every event: the events themselves are read from the outbox's table (nothing need receive them).
  expect((await h.request("POST", `/admin/p/${p.slug}/webhooks`, { body: { url: "http://127.0.0.1:9/hook", events: ["*"] } })).status).toBe(201);
  const eventsOf = async (nodeId: string) =>
    rows<{ type: string; payload: string }>(await h.deps.db.execute(sql`select type, payload from webhook_events where project_id = ${p.id} order by seq`))
      .map((e) => ({ type: e.type, data: JSON.parse(e.payload).data }))
      .filter((e) => e.data.node?.id === nodeId);
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
    // discard_changes over MCP, through the one write path: a dry run writes nothing, a stale
    // expected revision is a conflict, and the real call brings the published version back.
    const { node: working } = await call(client, "get_node", { id: second.id });
    const dry = await call(client, "discard_changes", { node_id: second.id, dry_run: true });
    expect(dry.dry_run).toBe(true);
    expect(dry.changes[0].diff).toContainEqual({ path: "/title", before: "Agent title", after: "Second" });
    expect((await call(client, "get_node", { id: second.id })).node).toMatchObject({ title: "Agent title", state: "changed", revision: working.revision });
    expect(await callError(client, "discard_changes", { node_id: second.id, expected_revision: working.revision - 1 })).toMatch(/^conflict/);
    const back = await call(client, "discard_changes", { node_id: second.id, expected_revision: working.revision });
    expect(back.node).toMatchObject({ title: "Second", state: "published", revision: working.revision + 1 });
    const [revision] = await h.deps.db
      .select({ operation: revisions.operation, published: revisions.published, actor: revisions.actor })
      .from(revisions)
      .where(eq(revisions.nodeId, second.id))
      .orderBy(sql`number desc`)
      .limit(1);
    expect(revision).toMatchObject({ operation: "discard_changes", published: false, actor: { kind: "mcp_token", name: "drafting agent" } });
    // Publishing one translation needs content:publish: the agent is sent to a person.
    const asked = await client.callTool({ name: "publish_node", arguments: { node_id: home.id, locale: "fr" } });
    expect(asked.isError).toBe(true);
    expect((asked.content as { text: string }[])[0]?.text).toStartWith("approval_required:");
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

  test("the approval page of an agent's publish_node shows the published version against what would be published", async () => {
    const { token: agent } = {
      token: (await ok(h.request("POST", `/admin/p/${p.slug}/ai/mcp/tokens`, { body: { name: "asking agent", scopes: ["content:read", "content:write"] } }), 201)).token as string,
    };
    const client = new Client({ name: "asking agent", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { requestInit: { headers: { authorization: `Bearer ${agent}` } } }));
    clients.push(client);
    const asked = await client.callTool({ name: "publish_node", arguments: { node_id: home.id } });
    expect(asked.isError).toBe(true);
    const text = (asked.content as { text: string }[]).map((c) => c.text).join("\n");
    const url = /https?:\/\/\S+\/approvals\/[0-9a-f-]{36}/.exec(text)?.[0];
    expect(url).toBeDefined();
    const editor = await seedUser(h, "editor", [p.id]);
    const { review } = await decideInBrowser((r) => h.app.handle(r), url ?? "", editor, null);
    expect(review.status).toBe(200);
    const row = (field: string) => new RegExp(`<tr><td><code>${field}</code></td><td><code>([^<]*)</code></td><td><code>([^<]*)</code></td></tr>`).exec(review.html)?.slice(1);
    expect(row("/title")).toEqual(["&#34;Home&#34;", "&#34;Hijacked&#34;"]);
    expect(row("/slug")).toEqual(["&#34;home&#34;", "&#34;home-new&#34;"]);
    expect(await snapshotDelivery()).toEqual(before);
  });

  test("publishing shows the change on delivery, in the sitemap and in the entries order", async () => {
    const earlier = (await eventsOf(home.id)).length;
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
    // Webhooks: the working-copy writes were node.updated; node.published carries the version published.
    const all = await eventsOf(home.id);
    expect(all.slice(0, earlier).filter((e) => e.type === "node.updated").length).toBeGreaterThanOrEqual(3);
    // The publish itself: one node.published (its French changes ride with it: no event of their own).
    const events = all.slice(earlier);
    expect(events.map((e) => e.type)).toEqual(["node.published"]);
    const published = events[0];
    expect(published?.data.version).toMatchObject({ title: "Hijacked", slug: "home-new", path: "home-new", seo: { description: "Changed" } });
    expect(published?.data.version.blocks.map((b: { data: { text: string } }) => b.data.text)).toEqual(["two!", "replaced"]);
    // …and what changed against the version readers saw before.
    const changes = Object.fromEntries(published?.data.changes.map((c: { path: string }) => [c.path, c]));
    expect(changes["/title"]).toEqual({ path: "/title", before: "Home", after: "Hijacked" });
    expect(changes["/path"]).toEqual({ path: "/path", before: "home", after: "home-new" });

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

  test("scheduled publishing publishes the working copy as it is when the time comes", async () => {
    const page = await seedNode(h, p.slug, { slug: "launch", title: "Launch v1" });
    await ok(h.request("PATCH", `/admin/p/${p.slug}/nodes/${page.id}`, { body: { publish_at: new Date(Date.now() + 300).toISOString() } }));
    await ok(h.request("PATCH", `/admin/p/${p.slug}/nodes/${page.id}`, { key: writer, body: { title: "Launch v2" } }));
    expect((await get(h, `/api/p/${p.slug}/nodes/by-path/launch`)).status).toBe(404);
    // Due by the database's clock, which the scheduler reads.
    const due = await waitFor(async () => (await dueSchedules(h.deps.db)).find((d) => d.nodeId === page.id) ?? false, { timeout: 5000, interval: 50, what: "the schedule to be due" });
    expect(await fireSchedule(h.deps.db, due)).toBe(true);
    const live = await get(h, `/api/p/${p.slug}/nodes/by-path/launch`);
    expect(live.status).toBe(200);
    expect(live.json.data.title).toBe("Launch v2");
    expect((await ok(h.request("GET", `/admin/p/${p.slug}/nodes/${page.id}`))).state).toBe("published");
  });

  test("other instances over the same database agree: published versions only, a publish seen through NOTIFY", async () => {
    const { createApp } = await import("../src/app");
    const reader = (instance: ReturnType<typeof createApp>) => async (path: string) => {
      const res = await instance.app.handle(new Request(`http://localhost/api/p/${p.slug}${path}`));
      return { status: res.status, body: await res.text() };
    };
    const b = reader(createApp({ ...h.deps }));
    const seen = await b("/nodes/by-path/journal/second");
    expect(seen.status).toBe(200);
    await ok(h.request("PATCH", `/admin/p/${p.slug}/nodes/${second.id}`, { body: { title: "Second, republished" } }));
    // An instance started after the working-copy write reads the database: the published version.
    const c = reader(createApp({ ...h.deps }));
    expect(await c("/nodes/by-path/journal/second")).toEqual(seen);
    await ok(h.request("POST", `/admin/p/${p.slug}/nodes/${second.id}/publish`));
    for (const read of [b, c]) {
      const { value } = await until(
        () => read("/nodes/by-path/journal/second"),
        (r) => JSON.parse(r.body).data.title === "Second, republished",
        2000,
      );
      expect(JSON.parse(value.body).data.title).toBe("Second, republished");
    }
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
