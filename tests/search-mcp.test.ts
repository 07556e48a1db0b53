// search_content's result links each hit as an MCP resource_link (the operation's `links`,
// src/search/operations.ts, turned into content by src/mcp/tools.ts): a client of 2025-06-18 or
// later finds a page with one call and reads it with resources/read; an older client gets the
// result it knows (structured content and the JSON text). PGlite and PostgreSQL alike.
import { afterAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult, JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { transition } from "./delivery.helpers";
import { seedNode, seedProject } from "./helpers";
import { INIT, mcpHarness } from "./mcp-harness";

/** The SDK's own transport, asking initialize for an older protocol revision, as a client built on an older SDK does. */
class OlderRevisionTransport extends StreamableHTTPClientTransport {
  constructor(
    url: URL,
    token: string,
    private readonly revision: string,
  ) {
    super(url, { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  }

  override send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const asked = "method" in message && message.method === "initialize" ? { ...message, params: { ...message.params, protocolVersion: this.revision } } : message;
    return super.send(asked, options);
  }
}

type Content = CallToolResult["content"][number];
const linksOf = (r: unknown): Extract<Content, { type: "resource_link" }>[] =>
  ((r as { content?: Content[] }).content ?? []).filter((c): c is Extract<Content, { type: "resource_link" }> => c.type === "resource_link");

describe("search: MCP resource links", async () => {
  const m = await mcpHarness();
  const h = m.h;
  const opened: Client[] = [];
  afterAll(async () => {
    for (const c of opened) await c.close().catch(() => {});
    m.stop();
  });
  const p = await seedProject(h);
  const blog = await seedNode(h, p.slug, { slug: "blog", title: "Blog", type: "collection" }, true);
  const published = await seedNode(h, p.slug, { slug: "ferns", title: "Ferns in shade", parent_id: blog.id, blocks: [{ type: "text", data: { body: "Moss and ferns." } }] }, true);
  const draft = await seedNode(h, p.slug, { slug: "moss", title: "Moss garden", blocks: [{ type: "text", data: { body: "A draft about moss." } }] });
  const archived = await seedNode(h, p.slug, { slug: "old-moss", title: "Old moss notes" }, true);
  await transition(h, p.slug, archived.id, "archive");
  const { token } = await m.token(p.slug, { name: "finder", scopes: ["content:read"] });

  const olderClient = async (revision: string): Promise<Client> => {
    const client = new Client({ name: "older-client", version: "1.0.0" });
    const transport = new OlderRevisionTransport(new URL(m.url), token, revision);
    await client.connect(transport);
    // The server agreed: every later request carries this revision in MCP-Protocol-Version.
    expect(transport.protocolVersion).toBe(revision);
    opened.push(client);
    return client;
  };

  test("the SDK client: one resource_link per hit, in the hits' order, each read with resources/read (a draft's and an archived node's too)", async () => {
    const client = await m.connect(token);
    const r = await client.callTool({ name: "search_content", arguments: { query: "moss" } });
    expect(r.isError).toBeFalsy();
    const hits = (r.structuredContent as { hits: any[] }).hits;
    expect(hits.map((x) => x.id).sort()).toEqual([published.id, draft.id, archived.id].sort());
    const content = r.content as Content[];
    expect(content[0]).toEqual({ type: "text", text: JSON.stringify(r.structuredContent) });
    const links = linksOf(r);
    expect(content).toHaveLength(1 + hits.length);
    expect(links).toEqual(
      hits.map((x) => ({ type: "resource_link", uri: `cms://${p.slug}/nodes/${x.id}`, name: x.path, title: x.title, description: `${x.type} · ${x.state}`, mimeType: "application/json" })),
    );
    expect(links.find((l) => l.uri.endsWith(draft.id))).toMatchObject({ name: "moss", title: "Moss garden", description: "page · draft" });
    expect(links.find((l) => l.uri.endsWith(published.id))).toMatchObject({ name: "blog/ferns" });
    // The second call: each linked page itself, as resources/read answers it.
    for (const link of links) {
      const read = await client.readResource({ uri: link.uri });
      expect(read.contents).toHaveLength(1);
      expect(read.contents[0]).toMatchObject({ uri: link.uri, mimeType: "application/json" });
      const node = JSON.parse((read.contents[0] as { text: string }).text);
      expect(node).toMatchObject({ id: link.uri.slice(link.uri.lastIndexOf("/") + 1), title: link.title, path: link.name });
      expect(Array.isArray(node.blocks)).toBe(true);
    }
    // No hit, no link; the published versions only, their links only.
    const none = await client.callTool({ name: "search_content", arguments: { query: "zzyzx" } });
    expect(none.content).toEqual([{ type: "text", text: JSON.stringify(none.structuredContent) }]);
    const live = await client.callTool({ name: "search_content", arguments: { query: "moss", include_drafts: false } });
    expect(linksOf(live).map((l) => l.uri)).toEqual([`cms://${p.slug}/nodes/${published.id}`]);
  });

  test("a client that negotiated 2025-06-18 gets the links; 2025-03-26 and 2024-11-05 clients get the result they know", async () => {
    const current = await olderClient("2025-06-18");
    expect(linksOf(await current.callTool({ name: "search_content", arguments: { query: "moss garden" } })).map((l) => l.uri)).toEqual([`cms://${p.slug}/nodes/${draft.id}`]);
    for (const revision of ["2025-03-26", "2024-11-05"]) {
      const client = await olderClient(revision);
      const r = await client.callTool({ name: "search_content", arguments: { query: "moss garden" } });
      expect(r.isError).toBeFalsy();
      expect((r.structuredContent as { hits: any[] }).hits.map((x) => x.id)).toEqual([draft.id]);
      expect(r.content).toEqual([{ type: "text", text: JSON.stringify(r.structuredContent) }]);
      // The hit's uri still reads the page.
      const read = await client.readResource({ uri: `cms://${p.slug}/nodes/${draft.id}` });
      expect(JSON.parse((read.contents[0] as { text: string }).text)).toMatchObject({ id: draft.id });
    }
  });

  test("raw requests: 2026-07-28 carries the links; a 2025 request without the version header (2025-03-26) does not", async () => {
    const call = { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "search_content", arguments: { query: "moss garden" } } };
    const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} };
    const modern = await m.post(
      { ...call, params: { ...call.params, _meta: meta } },
      { token, headers: { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "search_content" } },
    );
    expect(modern.status).toBe(200);
    expect(modern.json.result.resultType).toBe("complete");
    expect(linksOf(modern.json.result)).toEqual([
      { type: "resource_link", uri: `cms://${p.slug}/nodes/${draft.id}`, name: "moss", title: "Moss garden", description: "page · draft", mimeType: "application/json" },
    ]);
    expect((await m.post(INIT("2025-06-18"), { token })).status).toBe(200);
    const bare = await m.post(call, { token });
    expect(bare.status).toBe(200);
    expect(bare.json.result.content).toEqual([{ type: "text", text: JSON.stringify(bare.json.result.structuredContent) }]);
    const withHeader = await m.post(call, { token, headers: { "mcp-protocol-version": "2025-06-18" } });
    expect(linksOf(withHeader.json.result)).toHaveLength(1);
  });
});
