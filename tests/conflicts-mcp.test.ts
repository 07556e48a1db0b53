// Optimistic concurrency over MCP with the SDK's own Client (issue 25): expected_revision on the
// node-writing tools, racing writers, a person's REST edit never overwritten by an agent.
import { afterAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { nodes } from "../db/schema";
import { seedNode, seedProject } from "./helpers";
import { call, callError, mcpHarness } from "./mcp-harness";

describe("conflicts over MCP", async () => {
  const m = await mcpHarness();
  afterAll(() => m.stop());
  const row = async (id: string) => (await m.h.deps.db.select().from(nodes).where(eq(nodes.id, id)))[0]!;

  test("tools read the revision, take expected_revision, and tell agents to send it", async () => {
    const p = await seedProject(m.h);
    const client = await m.connect((await m.token(p.slug)).token);
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const name of ["update_node", "reorder_blocks", "publish_node", "unpublish_node", "archive_node", "restore_node", "upsert_translation", "translate_node"]) {
      const tool = byName.get(name)!;
      expect([name, Object.keys(tool.inputSchema.properties ?? {})]).toEqual([name, expect.arrayContaining(["expected_revision"])]);
      expect(tool.description).toContain("Send expected_revision");
    }
    expect(Object.keys(byName.get("create_node")!.inputSchema.properties ?? {})).not.toContain("expected_revision");
    const created = await call(client, "create_node", { slug: "doc", title: "Doc" });
    expect(created.node.revision).toBe(1);
    expect((await call(client, "get_node", { id: created.node.id })).node.revision).toBe(1);
  });

  test("an agent's stale write after a person's REST edit is a conflict tool error; nothing is overwritten", async () => {
    const p = await seedProject(m.h);
    const n = await seedNode(m.h, p.slug, { slug: "about", title: "About" });
    const client = await m.connect((await m.token(p.slug, { name: "bot" })).token);
    const read = await call(client, "get_node", { id: n.id });
    // The person edits in between.
    expect((await m.h.request("PATCH", `/admin/p/${p.slug}/nodes/${n.id}`, { body: { title: "About us" }, headers: { "if-match": `"r${read.node.revision}"` } })).status).toBe(200);
    const text = await callError(client, "update_node", { node_id: n.id, title: "About (agent)", expected_revision: read.node.revision });
    expect(text).toMatch(/^conflict: node .* is at revision 2, not 1/);
    expect(text).toContain('"operation":"update_node"');
    expect(text).toContain('"kind":"admin_key"');
    expect((await row(n.id)).title).toBe("About us");
    expect(await callError(client, "upsert_translation", { node_id: n.id, locale: "fr", meta: { title: "À propos" }, expected_revision: 1 })).toMatch(/^conflict/);
    expect(await callError(client, "publish_node", { node_id: n.id, expected_revision: 1 })).toMatch(/^conflict/);
    expect((await row(n.id)).status).toBe("draft");
    // Read again, retry: it lands.
    const again = await call(client, "get_node", { id: n.id });
    const done = await call(client, "update_node", { node_id: n.id, title: "About (agent)", expected_revision: again.node.revision });
    expect(done.node).toMatchObject({ title: "About (agent)", revision: 3 });
    // Without expected_revision the last write wins, as before.
    expect((await call(client, "update_node", { node_id: n.id, title: "Last" })).node.revision).toBe(4);
  });

  test("20 agents racing with the same expected_revision: one wins, 19 conflicts, the winner's data stored", async () => {
    const p = await seedProject(m.h);
    const n = await seedNode(m.h, p.slug, { slug: "race" });
    const { token } = await m.token(p.slug);
    const clients = await Promise.all(Array.from({ length: 4 }, () => m.connect(token)));
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => clients[i % clients.length]!.callTool({ name: "update_node", arguments: { node_id: n.id, title: `agent ${i}`, expected_revision: 1 } })),
    );
    const won = results.filter((r) => !r.isError);
    expect(won.length).toBe(1);
    const lost = results.filter((r) => r.isError).map((r) => (r.content as Array<{ text: string }>)[0]!.text);
    expect(lost.length).toBe(19);
    for (const t of lost) expect(t).toMatch(/^conflict: .*revision 2, not 1/);
    const stored = await row(n.id);
    expect(stored.revision).toBe(2);
    expect(stored.title).toBe((won[0]!.structuredContent as any).node.title);
  });
});
