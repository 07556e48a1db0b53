// The content model over MCP (issue 24): the write tools (create_node, update_node, reorder_blocks,
// upsert_translation) refuse invalid content with a tool error carrying the same violations list as
// REST (code invalid_content, each pointer on its own line), write nothing, and accept valid
// content; with a static MCP token and with an OAuth access token got through the SDK's own flow.
import { afterAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { eq } from "drizzle-orm";
import { blocks, nodes, translations } from "../db/schema";
import { HIGH_LIMITS, harness, seedNode, seedProject, type TestHarness } from "./helpers";
import { call, callError } from "./mcp-harness";
import { BLOG_MODEL, setModel } from "./model.helpers";
import { ConsentingProvider, oauthMcpClient, seedUser } from "./oauth.helpers";

describe("content model on MCP writes", async () => {
  let h: TestHarness | null = null;
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (r) => h!.app.handle(r) });
  const base = `http://127.0.0.1:${server.port}`;
  const mcpUrl = new URL(`${base}/mcp`);
  h = await harness({ ...HIGH_LIMITS, PUBLIC_URL: base }, { resolveHost: async () => ["93.184.216.34"] });
  const db = h.deps.db;
  const p = await seedProject(h);
  await setModel(db, p.id, BLOG_MODEL());
  const clients: Client[] = [];
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => {});
    server.stop(true);
  });

  async function staticClient(): Promise<Client> {
    const res = await h!.request("POST", `/admin/p/${p.id}/ai/mcp/tokens`, { body: { name: "agent" } });
    if (res.status !== 201) throw new Error(`token: ${res.status} ${res.text}`);
    const client = new Client({ name: "model-writes", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { requestInit: { headers: { authorization: `Bearer ${res.json.data.token}` } } }));
    clients.push(client);
    return client;
  }

  async function oauthClient(): Promise<Client> {
    const user = await seedUser(h!, "editor", [p.id]);
    const provider = new ConsentingProvider({ name: "model writes", redirectUrl: "http://127.0.0.1:47002/callback", user, projectId: p.id });
    const client = await oauthMcpClient(mcpUrl, provider, "model-writes-oauth");
    expect(provider.tokens()?.access_token).toMatch(/^cms_at_/);
    clients.push(client);
    return client;
  }

  /** The violations of a tool error, read from its text: one "- pointer (rule): message" line each. */
  const listed = (text: string): Record<string, string> => Object.fromEntries([...text.matchAll(/^- (\S+) \((\w+)\): .+$/gm)].map((m) => [m[1], m[2]]));

  for (const [via, connect] of [
    ["a static MCP token", staticClient],
    ["an OAuth access token", oauthClient],
  ] as const) {
    test(`create_node and update_node with ${via}: invalid → tool error listing every violation, nothing written; valid → accepted`, async () => {
      const client = await connect();
      const slug = `mcp-bad-${via.length}`;
      const text = await callError(client, "create_node", {
        slug,
        title: "Bad",
        type: "post",
        fields: { summary: "s".repeat(61) },
        blocks: [{ type: "hero", data: { heading: "h".repeat(41) } }],
      });
      expect(text).toMatch(/^invalid_content: /);
      expect(listed(text)).toEqual({ "/fields/author": "required", "/fields/summary": "maxLength", "/blocks/0/data/heading": "maxLength" });
      // The same list in the details, as REST answers it.
      const details = JSON.parse(/\(details: (.*)\)$/m.exec(text)![1]!);
      expect(details.violations.map((v: { pointer: string }) => v.pointer).sort()).toEqual(["/blocks/0/data/heading", "/fields/author", "/fields/summary"]);
      expect(await db.select().from(nodes).where(eq(nodes.slug, slug))).toEqual([]);

      const made = await call(client, "create_node", { slug: `mcp-good-${via.length}`, title: "Good", type: "post", fields: { author: "Ann" }, blocks: [{ type: "hero", data: { heading: "Hi" } }] });
      expect(made.node.fields).toEqual({ author: "Ann" });
      const id = made.node.id as string;

      const upd = await callError(client, "update_node", { node_id: id, fields: { author: "" } });
      expect(listed(upd)).toEqual({ "/fields/author": "minLength" });
      expect((await db.select().from(nodes).where(eq(nodes.id, id)))[0]?.fields).toEqual({ author: "Ann" });
      const ok = await call(client, "update_node", { node_id: id, fields: { author: "Bob", tags: ["a"] } });
      expect(ok.node.fields).toEqual({ author: "Bob", tags: ["a"] });
      const read = await call(client, "get_node", { id });
      expect(read.node.fields).toEqual({ author: "Bob", tags: ["a"] });
    });

    test(`upsert_translation and reorder_blocks with ${via}: checked against the model`, async () => {
      const client = await connect();
      const n = await seedNode(h!, p.id, {
        slug: `mcp-tr-${via.length}`,
        type: "post",
        fields: { author: "Ann", summary: "Short" },
        blocks: [
          { type: "text", data: { body: "long body" } },
          { type: "hero", data: { heading: "H" } },
        ],
      });
      const [text, hero] = n.blocks.map((b: { id: string }) => b.id);
      const bad = await callError(client, "upsert_translation", { node_id: n.id, locale: "fr", fields: { author: "Anne", summary: "x".repeat(61) }, blocks: { [hero]: { heading: "y".repeat(41) } } });
      expect(listed(bad)).toEqual({ "/fields/author": "translatable", "/fields/summary": "maxLength", [`/blocks/${hero}/heading`]: "maxLength" });
      expect(await db.select().from(translations).where(eq(translations.nodeId, n.id))).toEqual([]);
      const ok = await call(client, "upsert_translation", { node_id: n.id, locale: "fr", fields: { summary: "Court" } });
      expect(ok.translation.fields).toEqual({ summary: "Court" });
      const fr = await call(client, "get_node", { id: n.id, locale: "fr" });
      expect(fr.node.fields).toEqual({ author: "Ann", summary: "Court" });

      // A stricter model version: the text block no longer validates, so a reorder is refused.
      const stricter = BLOG_MODEL();
      (stricter.block_types as any[])[1].schema.properties.body.maxLength = 4;
      await setModel(db, p.id, stricter);
      try {
        const refused = await callError(client, "reorder_blocks", { node_id: n.id, block_ids: [hero, text] });
        expect(listed(refused)).toEqual({ "/blocks/1/data/body": "maxLength" });
        const order = (await db.select().from(blocks).where(eq(blocks.nodeId, n.id))).sort((a, b) => a.order - b.order).map((b) => b.id);
        expect(order).toEqual([text, hero]);
      } finally {
        await setModel(db, p.id, BLOG_MODEL());
      }
      const reordered = await call(client, "reorder_blocks", { node_id: n.id, block_ids: [hero, text] });
      expect(reordered.blocks.map((b: { id: string }) => b.id)).toEqual([hero, text]);
    });
  }
});
