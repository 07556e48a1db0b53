// undo_agent_changes (issue 39, "Undo an agent"): every node an agent credential changed in a time
// range back to its state before the first of those changes, one restore per node; a node someone
// else changed after the agent is listed and left as it is; a node the agent created goes to the
// trash. Over REST (with a dry run) and over MCP through the SDK's Client.
import { afterAll, describe, expect, test } from "bun:test";
import { and, desc, eq } from "drizzle-orm";
import { activity, nodes, projects, revisions } from "../db/schema";
import { undoAgentChanges } from "../src/history/undo";
import { serviceWrite } from "../src/write/context";
import { seedNode, seedProject } from "./helpers";
import { call, callError, mcpHarness } from "./mcp-harness";

describe("undo an agent's changes", async () => {
  const m = await mcpHarness();
  afterAll(() => m.stop());
  const h = m.h;
  const db = h.deps.db;

  /** A project where an MCP token edited three nodes and created one, and a person changed one of them afterwards. */
  async function scene() {
    const p = await seedProject(h);
    const a = await seedNode(h, p.slug, { slug: "a", title: "A by a person" });
    const b = await seedNode(h, p.slug, { slug: "b", title: "B by a person" }, true);
    const c = await seedNode(h, p.slug, { slug: "c", title: "C by a person" });
    const untouched = await seedNode(h, p.slug, { slug: "d", title: "D untouched" });
    const agent = await m.token(p.slug, { name: "drafting agent", scopes: ["content:read", "content:write"] });
    const client = await m.connect(agent.token);
    const since = new Date(Date.now() - 1000).toISOString();
    await call(client, "update_node", { node_id: a.id, title: "A by the agent" });
    await call(client, "update_node", { node_id: a.id, title: "A by the agent, again", fields: { note: "agent" } });
    await call(client, "update_node", { node_id: b.id, title: "B by the agent" });
    await call(client, "update_node", { node_id: c.id, title: "C by the agent" });
    const created = (await call(client, "create_node", { slug: "e", title: "E by the agent" })).node;
    // A person changes c after the agent: c must be left alone.
    expect((await h.request("PATCH", `/admin/p/${p.slug}/nodes/${c.id}`, { body: { title: "C by a person, after" } })).status).toBe(200);
    return { p, a, b, c, untouched, created, agent, since };
  }

  const title = async (id: string) => (await db.select({ title: nodes.title }).from(nodes).where(eq(nodes.id, id)))[0]?.title ?? null;

  test("REST: a dry run writes nothing; then each node is restored once, the one a person changed since is left, the created one is trashed", async () => {
    const s = await scene();
    const body = { agent: { kind: "mcp_token", id: s.agent.id }, since: s.since };
    const dry = await h.request("POST", `/admin/p/${s.p.slug}/agents/undo?dry_run=true`, { body });
    expect(dry.status).toBe(200);
    expect(dry.json.dry_run).toBe(true);
    expect(await title(s.a.id)).toBe("A by the agent, again");
    const res = await h.request("POST", `/admin/p/${s.p.slug}/agents/undo`, { body });
    expect(res.status).toBe(200);
    const out = res.json.data;
    expect(out.restored.map((r: { node_id: string }) => r.node_id).sort()).toEqual([s.a.id, s.b.id].sort());
    expect(out.restored.find((r: { node_id: string }) => r.node_id === s.a.id)).toMatchObject({ to_revision: 1 });
    expect(out.deleted).toEqual([{ node_id: s.created.id, title: "E by the agent" }]);
    expect(out.left).toHaveLength(1);
    expect(out.left[0]).toMatchObject({ node_id: s.c.id, title: "C by a person, after", by: { kind: "admin_key" } });
    // The database: a and b back to the person's state, c and d as they were, e in the trash.
    expect(await title(s.a.id)).toBe("A by a person");
    expect(await title(s.b.id)).toBe("B by a person");
    expect(await title(s.c.id)).toBe("C by a person, after");
    expect(await title(s.untouched.id)).toBe("D untouched");
    expect(await title(s.created.id)).toBeNull();
    // Every node undone has its own activity entry (a, b restored; the created one trashed).
    const entries = await db
      .select()
      .from(activity)
      .where(and(eq(activity.projectId, s.p.id), eq(activity.operation, "undo_agent_changes")));
    expect(entries.map((e) => e.nodeId).sort()).toEqual([s.a.id, s.b.id, s.created.id].sort());
    const [aLast] = await db.select().from(revisions).where(eq(revisions.nodeId, s.a.id)).orderBy(desc(revisions.number)).limit(1);
    expect(aLast).toMatchObject({ operation: "undo_agent_changes", number: 4 });
    expect(aLast?.snapshot).toMatchObject({ fields: {} });
    // b was published before the agent's draft: undoing leaves delivery serving the person's version.
    const live = await h.app.handle(new Request(`http://localhost/api/p/${s.p.slug}/nodes/by-path/b`));
    expect(((await live.json()) as { data: { title: string } }).data.title).toBe("B by a person");
    // Undoing again finds the agent's revisions followed by the undo's own (the trashed one too): everything is left.
    const again = await h.request("POST", `/admin/p/${s.p.slug}/agents/undo`, { body });
    expect(again.json.data.restored).toEqual([]);
    expect(again.json.data.left.map((l: { node_id: string }) => l.node_id).sort()).toEqual([s.a.id, s.b.id, s.c.id, s.created.id].sort());
  });

  test("bad input is 400 and writes nothing; content:write alone is refused; another project's token finds nothing", async () => {
    const s = await scene();
    const bad = await h.request("POST", `/admin/p/${s.p.slug}/agents/undo`, { body: { agent: { kind: "robot", id: s.agent.id }, since: s.since } });
    expect(bad.status).toBe(400);
    const backwards = await h.request("POST", `/admin/p/${s.p.slug}/agents/undo`, { body: { agent: { kind: "mcp_token", id: s.agent.id }, since: s.since, until: "2000-01-01T00:00:00Z" } });
    expect(backwards.status).toBe(400);
    expect(backwards.json.error.details.field).toBe("until");
    const writer = await h.request("POST", "/admin/keys", { body: { name: "writer", scopes: ["content:read", "content:write"] } });
    const refused = await h.request("POST", `/admin/p/${s.p.slug}/agents/undo`, { key: writer.json.data.key, body: { agent: { kind: "mcp_token", id: s.agent.id }, since: s.since } });
    expect(refused.status).toBe(403);
    expect(refused.json.error.details.required).toBe("content:publish");
    const other = await seedProject(h);
    const elsewhere = await h.request("POST", `/admin/p/${other.slug}/agents/undo`, { body: { agent: { kind: "mcp_token", id: s.agent.id }, since: s.since } });
    expect(elsewhere.json.data).toEqual({ restored: [], deleted: [], left: [] });
    expect(await title(s.a.id)).toBe("A by the agent, again");
  });

  test("MCP: the tool through the SDK client, with content:publish; without it a tool error", async () => {
    const s = await scene();
    const noPublish = await m.connect(s.agent.token);
    expect(await callError(noPublish, "undo_agent_changes", { agent: { kind: "mcp_token", id: s.agent.id }, since: s.since })).toContain("content:publish");
    const reviewer = await m.token(s.p.slug, { name: "reviewer", scopes: ["content:read", "content:write", "content:publish"] });
    const client = await m.connect(reviewer.token);
    const out = await call(client, "undo_agent_changes", { agent: { kind: "mcp_token", id: s.agent.id }, since: s.since });
    expect(out.restored).toHaveLength(2);
    expect(out.left.map((l: { node_id: string }) => l.node_id)).toEqual([s.c.id]);
    expect(await title(s.a.id)).toBe("A by a person");
    const [rev] = await db
      .select()
      .from(revisions)
      .where(and(eq(revisions.nodeId, s.b.id), eq(revisions.operation, "undo_agent_changes")));
    expect(rev?.actor).toMatchObject({ kind: "mcp_token", id: reviewer.id });
  });

  test("a person's save landing between the undo's read and its write: that node is left (changed while being undone), never overwritten", async () => {
    const s = await scene();
    const project = (await db.select().from(projects).where(eq(projects.id, s.p.id)))[0]!;
    const touched = [s.a.id, s.b.id, s.created.id];
    // The undo reads each node's revisions, then writes it in a transaction of its own. Just before
    // the first of those writes, a person saves every node the agent touched through the REST API
    // (the app's own write path): the node being written meets a save it did not read; the others
    // are read after it.
    let raced = false;
    const racing = new Proxy(db, {
      get(target, key, receiver) {
        if (key !== "transaction") return Reflect.get(target, key, receiver);
        return async (...args: Parameters<typeof db.transaction>) => {
          if (!raced) {
            raced = true;
            for (const id of touched) expect((await h.request("PATCH", `/admin/p/${s.p.slug}/nodes/${id}`, { body: { title: `${id} by a person, meanwhile` } })).status).toBe(200);
          }
          return target.transaction(...args);
        };
      },
    });
    const actor = { kind: "admin_key" as const, id: null, name: "reviewer" };
    const out = await undoAgentChanges(racing, serviceWrite("undo_agent_changes", actor), project, { agent: { kind: "mcp_token", id: s.agent.id }, since: s.since }, new Date());
    expect(raced).toBe(true);
    expect([out.restored, out.deleted]).toEqual([[], []]);
    const reasons = out.left.filter((l) => touched.includes(l.node_id)).map((l) => l.reason);
    expect(reasons.sort()).toEqual(["changed after the agent by someone else", "changed after the agent by someone else", "changed while it was being undone"]);
    // Nothing the person wrote was overwritten, and the undo wrote no revision.
    for (const id of [...touched]) expect(await title(id)).toBe(`${id} by a person, meanwhile`);
    expect(await title(s.c.id)).toBe("C by a person, after");
    const undone = await db
      .select()
      .from(revisions)
      .where(and(eq(revisions.projectId, s.p.id), eq(revisions.operation, "undo_agent_changes")));
    expect(undone).toHaveLength(0);
  });
});
