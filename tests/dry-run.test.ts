// Issue 27 §2: every write route takes ?dry_run=true and every write tool dry_run: true. The call
// runs every check the real one would (conflicts, paths, the content model), writes nothing (no
// node, revision, activity entry, token…), and answers the result with a field-level diff.
import { afterAll, describe, expect, test } from "bun:test";
import { count, eq } from "drizzle-orm";
import { activity, mcpTokens, nodes, publishedNodes, revisions } from "../db/schema";
import { seedNode, seedProject } from "./helpers";
import { call, mcpHarness } from "./mcp-harness";

describe("dry runs", async () => {
  const m = await mcpHarness();
  afterAll(() => m.stop());
  const { h } = m;
  const db = h.deps.db;
  const p = await seedProject(h);
  const P = `/admin/p/${p.slug}`;
  // The default scopes and theme:write (update_theme needs it, or projects:write).
  const { token } = await m.token(p.slug, { name: "agent", scopes: ["content:read", "content:write", "content:publish", "ai:read", "theme:write"] });

  /** Everything a write could leave behind in the project. */
  const footprint = async () => {
    const n = async (table: typeof nodes | typeof revisions | typeof activity | typeof mcpTokens) => Number((await db.select({ n: count() }).from(table).where(eq(table.projectId, p.id)))[0]!.n);
    const rows = await db.select({ id: nodes.id, title: nodes.title, status: nodes.status, revision: nodes.revision, fields: nodes.fields }).from(nodes).where(eq(nodes.projectId, p.id));
    // What readers see: the published versions.
    const live = await db.select({ id: publishedNodes.id, title: publishedNodes.title, revision: publishedNodes.revision }).from(publishedNodes).where(eq(publishedNodes.projectId, p.id));
    return {
      nodes: await n(nodes),
      revisions: await n(revisions),
      activity: await n(activity),
      tokens: await n(mcpTokens),
      rows: rows.sort((x, y) => x.id.localeCompare(y.id)),
      published: live.sort((x, y) => x.id.localeCompare(y.id)),
      theme: (await h.request("GET", `${P}/theme`)).json.data,
    };
  };

  test("REST: update, create, publish, delete, theme and an MCP token answer what would change and write nothing", async () => {
    const node = await seedNode(h, p.slug, { slug: "about", title: "About", fields: { lead: "old" } });
    const before = await footprint();

    const patched = await h.request("PATCH", `${P}/nodes/${node.id}?dry_run=true`, { body: { title: "About us", fields: { lead: "new" } } });
    expect(patched.status).toBe(200);
    expect(patched.json.dry_run).toBe(true);
    expect(patched.json.data).toMatchObject({ id: node.id, title: "About us", fields: { lead: "new" }, revision: node.revision + 1 });
    expect(patched.json.changes).toEqual([
      {
        node_id: node.id,
        operation: "update_node",
        revision_before: node.revision,
        revision_after: node.revision + 1,
        diff: expect.arrayContaining([
          { path: "/title", before: "About", after: "About us" },
          { path: "/fields/lead", before: "old", after: "new" },
        ]),
      },
    ]);

    const created = await h.request("POST", `${P}/nodes?dry_run=true`, { body: { slug: "new-page", title: "New" } });
    expect(created.status).toBe(200); // nothing was created: not 201
    expect(created.json).toMatchObject({ dry_run: true, data: { slug: "new-page", title: "New" }, changes: [{ revision_before: null, revision_after: 1 }] });

    const published = await h.request("POST", `${P}/nodes/${node.id}/publish?dry_run=true`);
    expect(published.status).toBe(200);
    expect(published.json.data.status).toBe("published");
    // Never published: the diff is from nothing to the version it would publish.
    expect(published.json.changes[0]).toMatchObject({ node_id: node.id, operation: "publish_node", published: true });
    expect(published.json.changes[0].diff).toContainEqual({ path: "/title", after: "About" });
    expect(published.json.changes[0].diff).toContainEqual({ path: "/fields", after: { lead: "old" } });

    const deleted = await h.request("DELETE", `${P}/nodes/${node.id}?dry_run=true`);
    expect(deleted.status).toBe(200);
    expect(deleted.json).toMatchObject({ dry_run: true, data: {}, changes: [{ node_id: node.id, deleted: true, revision_after: null }] });
    expect(deleted.json.changes[0].diff).toContainEqual({ path: "/title", before: "About" });

    const theme = await h.request("PUT", `${P}/theme?dry_run=true`, { body: { accent_color: "#abcdef" } });
    expect(theme.status).toBe(200);
    expect(theme.json).toMatchObject({ dry_run: true, data: { accent_color: "#abcdef" }, changes: [] });

    const minted = await h.request("POST", `${P}/ai/mcp/tokens?dry_run=true`, { body: { name: "never" } });
    expect(minted.status).toBe(200);
    expect(minted.json).toMatchObject({ dry_run: true, data: { name: "never" } });

    expect(await footprint()).toEqual(before);
    // And the real calls still work afterwards.
    expect((await h.request("PATCH", `${P}/nodes/${node.id}`, { body: { title: "About us" } })).json.data.revision).toBe(node.revision + 1);

    // Published, then edited: a dry run of publish_node diffs the published version against the working copy.
    expect((await h.request("POST", `${P}/nodes/${node.id}/publish`)).status).toBe(200);
    expect((await h.request("PATCH", `${P}/nodes/${node.id}`, { body: { title: "About them" } })).status).toBe(200);
    const live = await footprint();
    const republished = await h.request("POST", `${P}/nodes/${node.id}/publish?dry_run=true`);
    expect(republished.status).toBe(200);
    expect(republished.json.changes).toEqual([
      {
        node_id: node.id,
        operation: "publish_node",
        revision_before: node.revision + 3,
        revision_after: node.revision + 4,
        published: true,
        diff: [{ path: "/title", before: "About us", after: "About them" }],
      },
    ]);
    expect(await footprint()).toEqual(live);
  });

  test("REST: a dry run checks what the real call checks: a stale revision is 409, a taken path 409, a bad field 400", async () => {
    const node = await seedNode(h, p.slug, { slug: "checked", title: "Checked" });
    const before = await footprint();
    const stale = await h.request("PATCH", `${P}/nodes/${node.id}?dry_run=true`, { body: { title: "x" }, headers: { "if-match": `"r${node.revision + 5}"` } });
    expect(stale.status).toBe(409);
    expect(stale.json.error.code).toBe("conflict");
    const taken = await h.request("POST", `${P}/nodes?dry_run=true`, { body: { slug: "checked", title: "Twin" } });
    expect(taken.status).toBe(409);
    const bad = await h.request("POST", `${P}/nodes?dry_run=true`, { body: { slug: "Not A Slug", title: "x" } });
    expect(bad.status).toBe(400);
    const wrong = await h.request("PATCH", `${P}/nodes/${node.id}?dry_run=yes`, { body: { title: "x" } });
    expect(wrong.status).toBe(400);
    expect(await footprint()).toEqual(before);
  });

  test("MCP: write tools take dry_run, answer the node and the diff, and write nothing", async () => {
    const node = await seedNode(h, p.slug, { slug: "tool", title: "Tool" });
    const client = await m.connect(token);
    const { tools } = await client.listTools();
    for (const name of ["update_node", "publish_node", "delete_node", "create_node", "update_theme", "restore_revision"]) {
      expect({ name, dry: (tools.find((t) => t.name === name)?.inputSchema.properties as Record<string, unknown>)?.dry_run }).toMatchObject({ name, dry: { type: "boolean" } });
    }
    expect((tools.find((t) => t.name === "get_node")!.inputSchema.properties as Record<string, unknown>).dry_run).toBeUndefined();
    const before = await footprint();
    const updated = await call(client, "update_node", { node_id: node.id, title: "Tooled", dry_run: true });
    expect(updated).toMatchObject({
      dry_run: true,
      node: { title: "Tooled", revision: node.revision + 1 },
      changes: [{ node_id: node.id, diff: [{ path: "/title", before: "Tool", after: "Tooled" }] }],
    });
    const removed = await call(client, "delete_node", { node_id: node.id, dry_run: true });
    expect(removed).toMatchObject({ dry_run: true, changes: [{ node_id: node.id, deleted: true }] });
    const theme = await call(client, "update_theme", { accent_color: "#000000", dry_run: true });
    expect(theme).toMatchObject({ dry_run: true });
    expect(await footprint()).toEqual(before);
  });
});
