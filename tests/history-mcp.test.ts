// Revisions over MCP (issue 25), through the SDK's own Client: writes with a static MCP token and
// over OAuth record the credential (token id and name; the user and the client), translate_node
// records the caller; list_revisions, get_revision, restore_revision, list_trash and the revision
// resource answer the same as REST.
import { afterAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { eq } from "drizzle-orm";
import { revisions } from "../db/schema";
import { startFakeVendors } from "./fake-vendors";
import { HIGH_LIMITS, harness, seedNode, seedProject, type TestHarness } from "./helpers";
import { call, callError } from "./mcp-harness";
import { ConsentingProvider, oauthMcpClient, seedUser } from "./oauth.helpers";

const vendors = await startFakeVendors();

describe("revisions over MCP", async () => {
  let h: TestHarness | null = null;
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (r) => h!.app.handle(r) });
  const base = `http://127.0.0.1:${server.port}`;
  const mcpUrl = new URL(`${base}/mcp`);
  h = await harness({ ...HIGH_LIMITS, PUBLIC_URL: base, AI_ALLOW_PRIVATE_URLS: "true", AI_TIMEOUT_MS: "2000" }, { resolveHost: async () => ["93.184.216.34"] });
  const db = h.deps.db;
  const p = await seedProject(h);
  const provider = await h.request("POST", `/admin/p/${p.id}/ai/providers`, {
    body: { name: "v", kind: "openai", model: "gpt-test", base_url: vendors.base("ok"), api_key: "sk-test-1234567890", is_default: true },
  });
  expect(provider.status).toBe(201);
  const clients: Client[] = [];
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => {});
    server.stop(true);
    await vendors.stop();
  });
  const latest = async (nodeId: string) => (await db.select().from(revisions).where(eq(revisions.nodeId, nodeId)).orderBy(revisions.number)).at(-1);

  async function staticClient(): Promise<{ client: Client; actor: Record<string, unknown> }> {
    const res = await h!.request("POST", `/admin/p/${p.id}/ai/mcp/tokens`, { body: { name: "history agent" } });
    if (res.status !== 201) throw new Error(`token: ${res.status} ${res.text}`);
    const client = new Client({ name: "history", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { requestInit: { headers: { authorization: `Bearer ${res.json.data.token}` } } }));
    clients.push(client);
    return { client, actor: { kind: "mcp_token", id: res.json.data.id, name: "history agent" } };
  }

  async function oauthClient(): Promise<{ client: Client; actor: () => Promise<Record<string, unknown>> }> {
    const user = await seedUser(h!, "editor", [p.id]);
    const prov = new ConsentingProvider({ name: "history client", redirectUrl: "http://127.0.0.1:47003/callback", user, projectId: p.id });
    const client = await oauthMcpClient(mcpUrl, prov, "history-oauth");
    clients.push(client);
    const clientId = prov.clientInformation()?.client_id ?? "";
    // The access token's row id is the credential id; the user and the client are named.
    // The actor's id is the user's (stable across token refreshes), as in the activity log.
    const actor = async () => ({ kind: "oauth", id: user.id, name: user.email, user: { id: user.id, email: user.email }, client: { id: clientId, name: "history client" } });
    return { client, actor };
  }

  test("a static MCP token: update_node, publish_node, translate_node record the token (id, name) and the operation", async () => {
    const { client, actor } = await staticClient();
    const n = await seedNode(h!, p.slug, { slug: "mcp-static", blocks: [{ type: "text", data: { text: "Hello" } }] });
    await call(client, "update_node", { node_id: n.id, title: "From the agent" });
    await call(client, "publish_node", { node_id: n.id });
    await call(client, "translate_node", { node_id: n.id, locale: "fr" });
    const listed = await call(client, "list_revisions", { node_id: n.id });
    expect(listed.revisions.map((r: { number: number; operation: string; actor: { kind: string } }) => [r.number, r.operation, r.actor.kind])).toEqual([
      [4, "translate_node", "mcp_token"],
      [3, "publish_node", "mcp_token"],
      [2, "update_node", "mcp_token"],
      [1, "create_node", "admin_key"],
    ]);
    for (const r of listed.revisions.slice(0, 3)) expect(r.actor).toEqual(actor);
    const snap = (await latest(n.id))?.snapshot as any;
    expect(snap.translations[0]).toMatchObject({ locale: "fr", status: "draft", blocks: { [n.blocks[0].id]: { text: "[translated] Hello" } } });
    // The vendor key is nowhere in the snapshots.
    expect(JSON.stringify(await db.select().from(revisions).where(eq(revisions.projectId, p.id)))).not.toContain("sk-test-1234567890");
  });

  test("OAuth: writes record the user (id, email) and the client (id, name); get_revision, restore_revision and the resource answer", async () => {
    const { client, actor } = await oauthClient();
    const created = await call(client, "create_node", { slug: "mcp-oauth", title: "One", blocks: [{ type: "text", data: { text: "a" } }] });
    const id = created.node.id;
    await call(client, "update_node", { node_id: id, title: "Two", blocks: [{ type: "text", data: { text: "b" } }] });
    const expected = await actor();
    expect((await latest(id))?.actor as unknown).toEqual(expected);
    const two = await call(client, "get_revision", { node_id: id, revision: 2 });
    expect(two.revision).toMatchObject({ number: 2, operation: "update_node", actor: expected, snapshot: { title: "Two" } });
    // update_node with blocks without ids replaces the block: one block out, one in.
    expect(two.revision.diff.changes.map((c: { path: string }) => c.path).sort()).toEqual(["/blocks/0", "/blocks/0", "/title"]);
    expect(two.revision.diff.changes).toContainEqual({ path: "/title", before: "One", after: "Two" });
    const restored = await call(client, "restore_revision", { node_id: id, revision: 1 });
    expect(restored).toEqual({ node_id: id, revision: 3, restored: [id] });
    expect(await latest(id)).toMatchObject({ number: 3, operation: "restore_revision", actor: expected });
    const node = await call(client, "get_node", { id });
    expect(node.node.title).toBe("One");
    expect(node.node.blocks[0].id).toBe(created.node.blocks[0].id);
    // The revision as a resource; a pruned or unknown one reads as unknown (-32002).
    const res = await client.readResource({ uri: `cms://${p.slug}/nodes/${id}/revisions/2` });
    expect(JSON.parse((res.contents[0] as { text: string }).text)).toMatchObject({ node_id: id, number: 2, snapshot: { title: "Two" } });
    await expect(client.readResource({ uri: `cms://${p.slug}/nodes/${id}/revisions/9` })).rejects.toThrow(/-32002|not found/i);
    expect(await callError(client, "get_revision", { node_id: id, revision: 9 })).toMatch(/revision not found/);
  });

  test("list_trash and restore_revision bring a deleted node back over MCP; the tool annotations", async () => {
    const { client } = await staticClient();
    const n = await seedNode(h!, p.slug, { slug: "mcp-trash" }, true);
    expect((await h!.request("DELETE", `/admin/p/${p.slug}/nodes/${n.id}`)).status).toBe(204);
    const trash = await call(client, "list_trash", {});
    expect(trash.trash.find((t: { node_id: string }) => t.node_id === n.id)).toMatchObject({ revision: 3, path: "mcp-trash", status: "published", deleted_with: n.id });
    expect(await call(client, "restore_revision", { node_id: n.id, revision: 3 })).toEqual({ node_id: n.id, revision: 4, restored: [n.id] });
    expect((await h!.request("GET", `/api/p/${p.slug}/nodes/by-path/mcp-trash`, { key: null })).status).toBe(200);
    const { tools } = await client.listTools();
    const ann = (name: string) => tools.find((t) => t.name === name)?.annotations;
    expect(ann("restore_revision")).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    for (const name of ["list_revisions", "get_revision", "list_trash"]) expect(ann(name)).toMatchObject({ readOnlyHint: true });
  });
});
