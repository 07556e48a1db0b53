// The activity log (issue 25): every write in a project, newest first, filtered and paged, over REST
// and MCP (the SDK's own Client); non-content writes appear; secrets never do.
import { afterAll, describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { activity } from "../db/schema";
import { createNode } from "../src/content/service";
import { systemWrite } from "../src/write/context";
import { harness, keyWith, seedNode, seedProject } from "./helpers";
import { call, callError, mcpHarness } from "./mcp-harness";

describe("activity over REST", async () => {
  const h = await harness();
  const db = h.deps.db;
  const list = async (ref: string, query = "", key?: string) => h.request("GET", `/admin/p/${ref}/activity${query}`, key ? { key } : {});

  test("content writes: one entry each, newest first, with the node, its revision, the operation and the actor; refused writes leave none", async () => {
    const p = await seedProject(h);
    const n = await seedNode(h, p.slug, { slug: "home" });
    await h.request("PATCH", `/admin/p/${p.slug}/nodes/${n.id}`, { body: { title: "Home!" } });
    await h.request("PUT", `/admin/p/${p.slug}/nodes/${n.id}/translations/fr`, { body: { meta: { title: "Accueil" } } });
    await h.request("POST", `/admin/p/${p.slug}/nodes/${n.id}/publish`);
    expect((await h.request("PATCH", `/admin/p/${p.slug}/nodes/${n.id}`, { body: { title: "x" }, headers: { "if-match": '"r1"' } })).status).toBe(409);
    expect((await h.request("PATCH", `/admin/p/${p.slug}/nodes/${n.id}`, { body: { slug: "Not A Slug" } })).status).toBe(400);
    await h.request("DELETE", `/admin/p/${p.slug}/nodes/${n.id}`);
    const res = await list(p.slug);
    expect(res.status).toBe(200);
    expect(res.json.total).toBe(5);
    expect(res.json.data.map((e: any) => [e.operation, e.target.kind, e.node_id, e.revision])).toEqual([
      ["delete_node", "node", n.id, 5], // the revision the deletion recorded (the trash restores from it)
      ["publish_node", "node", n.id, 4],
      ["upsert_translation", "translation", n.id, 3],
      ["update_node", "node", n.id, 2],
      ["create_node", "node", n.id, 1],
    ]);
    expect(res.json.data[2].target).toEqual({ kind: "translation", id: n.id, locale: "fr" });
    expect(res.json.data[0].actor).toMatchObject({ kind: "admin_key", name: "test-root" });
    expect(res.json.data[0].actor.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  test("non-content writes appear (provider, MCP token, member, theme, settings), and no secret is stored", async () => {
    const p = await seedProject(h);
    const apiKey = `sk-activity-secret-${crypto.randomUUID()}`;
    const provider = await h.request("POST", `/admin/p/${p.slug}/ai/providers`, { body: { name: "vendor", kind: "openai", api_key: apiKey } });
    expect(provider.status).toBe(201);
    const token = await h.request("POST", `/admin/p/${p.slug}/ai/mcp/tokens`, { body: { name: "agent" } });
    expect(token.status).toBe(201);
    const user = await h.request("POST", "/admin/users", { body: { email: `${crypto.randomUUID()}@example.com`, password: "a long enough password 1" } });
    expect(user.status).toBe(201);
    expect((await h.request("PUT", `/admin/p/${p.slug}/members/${user.json.data.id}`, { body: { role: "editor" } })).status).toBe(200);
    expect((await h.request("PATCH", `/admin/p/${p.slug}/theme`, { body: { accent_color: "#112233" } })).status).toBe(200);
    expect((await h.request("PATCH", `/admin/projects/${p.slug}`, { body: { name: "Renamed" } })).status).toBe(200);
    // A refused write (bad input) is not logged.
    expect((await h.request("PATCH", `/admin/p/${p.slug}/theme`, { body: { accent_color: "red" } })).status).toBe(400);
    const res = await list(p.slug);
    expect(res.json.data.map((e: any) => [e.operation, e.target.kind])).toEqual([
      ["update_project", "project"],
      ["update_theme", "theme"],
      ["set_member", "member"],
      ["create_mcp_token", "mcp_token"],
      ["create_ai_provider", "ai_provider"],
    ]);
    expect(res.json.data[2].target.id).toBe(user.json.data.id);
    expect(res.json.data[3].target.id).toBe(token.json.data.id);
    expect(res.json.data[4].target.id).toBe(provider.json.data.id);
    // Neither the provider's key nor the MCP token's plaintext appears anywhere in the log.
    const stored = await db.execute(
      sql`select count(*)::int as n from activity where project_id = ${p.id} and (activity::text like ${`%${apiKey}%`} or activity::text like ${`%${token.json.data.token}%`})`,
    );
    expect(Number((stored as any).rows?.[0]?.n ?? (stored as any)[0]?.n)).toBe(0);
    expect(res.text).not.toContain(apiKey);
    expect(res.text).not.toContain(token.json.data.token);
    // Read-only operations are not logged.
    await h.request("GET", `/admin/p/${p.slug}/theme`);
    expect((await list(p.slug)).json.total).toBe(5);
  });

  test("filters (actor kind and id, node, time range) and paging; bad filters are 400; another project's log is 404; content:read suffices", async () => {
    const p = await seedProject(h);
    const a = await seedNode(h, p.slug, { slug: "a" });
    const b = await seedNode(h, p.slug, { slug: "b" });
    const writer = await keyWith(h, ["content:read", "content:write"], [p.id]);
    const writerId = (await db.execute(sql`select id from admin_keys where name = 'scoped' order by created_at desc limit 1`)) as any;
    await h.request("PATCH", `/admin/p/${p.slug}/nodes/${a.id}`, { key: writer, body: { title: "A2" } });
    await h.request("PATCH", `/admin/p/${p.slug}/nodes/${b.id}`, { key: writer, body: { title: "B2" } });
    // A write outside any operation (the demo seed, a script) is the system's.
    await createNode(db, systemWrite(), { id: p.id } as never, { slug: "seeded", title: "Seeded" }, new Date());
    const all = (await list(p.slug)).json;
    expect(all.total).toBe(5);
    expect(all.data[0]).toMatchObject({ operation: "system", actor: { kind: "system", id: null } });
    expect((await list(p.slug, "?actor_kind=system")).json.total).toBe(1);
    const keyId = ((writerId.rows ?? writerId)[0] as { id: string }).id;
    const byWriter = (await list(p.slug, `?actor_id=${keyId}`)).json;
    expect(byWriter.data.map((e: any) => e.node_id)).toEqual([b.id, a.id]);
    expect(byWriter.data[0].actor).toMatchObject({ kind: "admin_key", id: keyId, name: "scoped" });
    expect((await list(p.slug, `?node_id=${a.id}`)).json.data.map((e: any) => e.operation)).toEqual(["update_node", "create_node"]);
    // Time range: from inclusive, to exclusive.
    const [first] = all.data.slice(-1);
    const firstAt = new Date(first.created_at);
    expect((await list(p.slug, `?to=${encodeURIComponent(firstAt.toISOString())}`)).json.total).toBe(0);
    expect((await list(p.slug, `?from=${encodeURIComponent(firstAt.toISOString())}`)).json.total).toBe(5);
    expect((await list(p.slug, `?from=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).json.total).toBe(0);
    // Paging: newest first, no entry on two pages.
    const p1 = (await list(p.slug, "?per_page=2")).json;
    const p3 = (await list(p.slug, "?per_page=2&page=3")).json;
    expect(p1).toMatchObject({ total: 5, page: 1, per_page: 2 });
    expect([...p1.data, ...(await list(p.slug, "?per_page=2&page=2")).json.data, ...p3.data].map((e: any) => e.id)).toEqual(all.data.map((e: any) => e.id));
    for (const q of [
      "?actor_kind=robot",
      "?node_id=nope",
      "?from=yesterday",
      "?per_page=0",
      `?from=${encodeURIComponent(new Date().toISOString())}&to=${encodeURIComponent(new Date(0).toISOString())}`,
      "?page=x",
    ]) {
      const r = await list(p.slug, q);
      expect([q, r.status, r.json.error.code]).toEqual([q, 400, "invalid_request"]);
    }
    const reader = await keyWith(h, ["content:read"], [p.id]);
    expect((await list(p.slug, "", reader)).status).toBe(200);
    expect((await list(p.slug, "", await keyWith(h, ["projects:read"], [p.id]))).status).toBe(403);
    const other = await seedProject(h);
    expect((await list(other.slug, "", reader)).status).toBe(404);
    // Entries of the other project never show here.
    await seedNode(h, other.slug, { slug: "elsewhere" });
    expect((await list(p.slug)).json.total).toBe(5);
  });
});

describe("activity over MCP", async () => {
  const m = await mcpHarness();
  afterAll(() => m.stop());

  test("list_activity shows an agent's writes with its token, filtered by actor, next to a person's", async () => {
    const p = await seedProject(m.h);
    const minted = await m.token(p.slug, { name: "writer-bot" });
    const client = await m.connect(minted.token);
    const n = await call(client, "create_node", { slug: "by-agent", title: "By agent" });
    await call(client, "update_node", { node_id: n.node.id, title: "By agent 2", expected_revision: 1 });
    await m.h.request("POST", `/admin/p/${p.slug}/nodes/${n.node.id}/publish`);
    const all = await call(client, "list_activity");
    // The token's own creation is in the log too (by the admin key).
    expect(all.activity.map((e: any) => [e.operation, e.actor.kind])).toEqual([
      ["publish_node", "admin_key"],
      ["update_node", "mcp_token"],
      ["create_node", "mcp_token"],
      ["create_mcp_token", "admin_key"],
    ]);
    expect(all.activity[1]).toMatchObject({ actor: { id: minted.id, name: "writer-bot" }, node_id: n.node.id, revision: 2 });
    const mine = await call(client, "list_activity", { actor_kind: "mcp_token", per_page: 1 });
    expect(mine).toMatchObject({ total: 2, per_page: 1 });
    expect(mine.activity[0].operation).toBe("update_node");
    expect((await call(client, "list_activity", { actor_id: minted.id, node_id: n.node.id })).total).toBe(2);
    expect(await callError(client, "list_activity", { actor_kind: "robot" })).toContain("actor_kind");
    const rows = await m.h.deps.db.select().from(activity).where(eq(activity.projectId, p.id));
    expect(JSON.stringify(rows)).not.toContain(minted.token);
  });
});
