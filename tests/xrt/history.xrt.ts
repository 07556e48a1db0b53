// Cross-runtime: revisions are recorded by the write path and the snapshot, the diff and the
// restore (src/history/*) work on this runtime: write, list, read with a diff, restore, the trash.
import { afterAll, describe, expect, test } from "bun:test";
import { seedNode, seedProject } from "./seed";
import { describeRun, startService, stopAll } from "./service";

describe(`revisions: ${describeRun()}`, async () => {
  afterAll(stopAll);
  const svc = await startService();

  test("write, list revisions, read one with its diff, restore it as a new revision; delete and restore from the trash", async () => {
    const p = await seedProject(svc);
    const n = await seedNode(svc, p.slug, { slug: "xrt-history", title: "First" });
    expect((await svc.admin("PATCH", `/admin/p/${p.slug}/nodes/${n.id}`, { title: "Second", fields: { k: 1 } })).status).toBe(200);
    const list = await svc.admin("GET", `/admin/p/${p.slug}/nodes/${n.id}/revisions`);
    expect(list.json.data.map((r: { number: number; operation: string; actor: { kind: string } }) => [r.number, r.operation, r.actor.kind])).toEqual([
      [2, "update_node", "admin_key"],
      [1, "create_node", "admin_key"],
    ]);
    const two = await svc.admin("GET", `/admin/p/${p.slug}/nodes/${n.id}/revisions/2`);
    expect(two.json.data.diff.changes).toContainEqual({ path: "/title", before: "First", after: "Second" });
    expect(two.json.data.diff.changes).toContainEqual({ path: "/fields/k", after: 1 });
    const restored = await svc.admin("POST", `/admin/p/${p.slug}/nodes/${n.id}/revisions/1/restore`);
    expect(restored.json.data).toEqual({ node_id: n.id, revision: 3, restored: [n.id] });
    expect((await svc.admin("GET", `/admin/p/${p.slug}/nodes/${n.id}`)).json.data).toMatchObject({ title: "First", fields: {} });
    expect((await svc.admin("DELETE", `/admin/p/${p.slug}/nodes/${n.id}`)).status).toBe(204);
    const trash = await svc.admin("GET", `/admin/p/${p.slug}/trash`);
    expect(trash.json.data).toEqual([expect.objectContaining({ node_id: n.id, revision: 4, path: "xrt-history" })]);
    expect((await svc.admin("POST", `/admin/p/${p.slug}/nodes/${n.id}/revisions/4/restore`)).status).toBe(200);
    expect((await svc.admin("GET", `/admin/p/${p.slug}/nodes/${n.id}`)).json.data.title).toBe("First");
  });
});
