// Found in the review of issues 24 and 25: a node's new type re-checks its children against the
// type's `children` rule; a restore honours If-Match like every other node write.
import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { nodes } from "../db/schema";
import { harness, seedNode, seedProject } from "./helpers";
import { setModel } from "./model.helpers";

describe("model children and restore preconditions", async () => {
  const h = await harness();

  test("changing a node's type to one whose children rule its children break is 400 invalid_content; nothing written", async () => {
    const p = await seedProject(h);
    await setModel(h.deps.db, p.id, {
      node_types: [
        { name: "folder", description: "" },
        { name: "collection", description: "", children: ["post"] },
        { name: "post", description: "" },
        { name: "page", description: "" },
      ],
    });
    const parent = await seedNode(h, p.slug, { slug: "box", type: "folder" });
    await seedNode(h, p.slug, { slug: "about", type: "page", parent_id: parent.id });
    const res = await h.request("PATCH", `/admin/p/${p.slug}/nodes/${parent.id}`, { body: { type: "collection" } });
    expect([res.status, res.json.error.code]).toEqual([400, "invalid_content"]);
    expect(res.json.error.details.violations).toEqual([expect.objectContaining({ pointer: "/type", rule: "children" })]);
    const [row] = await h.deps.db.select({ type: nodes.type }).from(nodes).where(eq(nodes.id, parent.id));
    expect(row?.type).toBe("folder");
    // A type whose rule they meet is fine.
    expect((await h.request("PATCH", `/admin/p/${p.slug}/nodes/${parent.id}`, { body: { type: "page" } })).status).toBe(200);
  });

  test("restore_revision with a stale If-Match is 409 and restores nothing; with the current one it restores", async () => {
    const p = await seedProject(h);
    const n = await seedNode(h, p.slug, { slug: "r", title: "One" });
    await h.request("PATCH", `/admin/p/${p.slug}/nodes/${n.id}`, { body: { title: "Two" } });
    await h.request("PATCH", `/admin/p/${p.slug}/nodes/${n.id}`, { body: { title: "Three" } });
    const stale = await h.request("POST", `/admin/p/${p.slug}/nodes/${n.id}/revisions/1/restore`, { headers: { "if-match": '"r2"' } });
    expect([stale.status, stale.json.error.code, stale.json.error.details.current_revision]).toEqual([409, "conflict", 3]);
    expect((await h.request("GET", `/admin/p/${p.slug}/nodes/${n.id}`)).json.data.title).toBe("Three");
    const ok = await h.request("POST", `/admin/p/${p.slug}/nodes/${n.id}/revisions/1/restore`, { headers: { "if-match": '"r3"' } });
    expect(ok.status).toBe(200);
    expect((await h.request("GET", `/admin/p/${p.slug}/nodes/${n.id}`)).json.data.title).toBe("One");
  });
});
