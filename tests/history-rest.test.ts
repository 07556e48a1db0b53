// Revisions over the admin API (issue 25): every node write records one (number, operation, the
// admin key with its name, the state after); list, read with a diff, restore (blocks keep ids,
// translations come back, the current model decides), the trash, retention and scopes.
import { describe, expect, test } from "bun:test";
import { and, eq, sql } from "drizzle-orm";
import { blocks, nodes, revisions, translations } from "../db/schema";
import { createNode, updateNode } from "../src/content/service";
import { pruneRevisions } from "../src/history/service";
import { systemWrite } from "../src/write/context";
import { harness, keyWith, seedNode, seedProject } from "./helpers";
import { BLOG_MODEL, setModel } from "./model.helpers";

describe("revisions over REST", async () => {
  const h = await harness();
  const db = h.deps.db;
  const [rootKey] = await db
    .execute<{ id: string }>(sql`select id from admin_keys where name = 'test-root' order by created_at desc limit 1`)
    .then((r) => (Array.isArray(r) ? r : (r as { rows: { id: string }[] }).rows));
  const ROOT_ACTOR = { kind: "admin_key", id: rootKey!.id, name: "test-root" };
  const revs = (ref: string, id: string, q = "") => h.request("GET", `/admin/p/${ref}/nodes/${id}/revisions${q}`);
  const rowsOf = (nodeId: string) => db.select().from(revisions).where(eq(revisions.nodeId, nodeId)).orderBy(revisions.number);

  test("every write to a node records a revision with its operation, the admin key (id, name) and the state after", async () => {
    const p = await seedProject(h);
    const parent = await seedNode(h, p.slug, { slug: "docs" });
    const n = await seedNode(h, p.slug, { slug: "a", title: "A", fields: { k: 1 }, blocks: [{ type: "text", data: { body: "one" } }] });
    const bid = n.blocks[0].id;
    const steps: [string, string, unknown][] = [
      ["PATCH", "", { title: "A2", fields: { k: 2 }, seo: { description: "d" } }],
      [
        "PUT",
        "/blocks",
        [
          { id: bid, type: "text", data: { body: "two" } },
          { type: "hero", data: { heading: "h" } },
        ],
      ],
      ["POST", "/publish", undefined],
      ["PUT", "/translations/fr", { meta: { title: "A fr" }, blocks: { [bid]: { body: "deux" } }, status: "published" }],
      ["DELETE", "/translations/fr", undefined],
      ["PATCH", "", { parent_id: parent.id }],
      ["POST", "/archive", undefined],
    ];
    for (const [method, tail, body] of steps) {
      const res = await h.request(method, `/admin/p/${p.slug}/nodes/${n.id}${tail}`, body === undefined ? {} : { body });
      expect({ tail, status: res.status }).toEqual({ tail, status: method === "DELETE" ? 204 : 200 });
    }
    const list = await revs(p.slug, n.id);
    expect(list.status).toBe(200);
    expect(list.json.data.map((r: { number: number; operation: string }) => [r.number, r.operation])).toEqual([
      [8, "archive_node"],
      [7, "update_node"],
      [6, "delete_translation"],
      [5, "upsert_translation"],
      [4, "publish_node"],
      [3, "set_blocks"],
      [2, "update_node"],
      [1, "create_node"],
    ]);
    expect(list.json).toMatchObject({ total: 8, page: 1, per_page: 20 });
    for (const r of list.json.data) expect(r.actor).toEqual(ROOT_ACTOR);
    const [row] = await db.select({ revision: nodes.revision }).from(nodes).where(eq(nodes.id, n.id));
    expect(row?.revision).toBe(8);
    // The snapshots in the table: the state after each change.
    const stored = await rowsOf(n.id);
    expect(stored.map((r) => r.number)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const s5 = stored[4]!.snapshot as any;
    expect(s5).toMatchObject({ id: n.id, title: "A2", status: "published", path: "a", fields: { k: 2 }, seo: { description: "d" } });
    expect(s5.blocks.map((b: { type: string }) => b.type)).toEqual(["text", "hero"]);
    expect(s5.blocks[0].id).toBe(bid);
    expect(s5.translations).toEqual([{ locale: "fr", status: "published", meta: { title: "A fr" }, fields: {}, blocks: { [bid]: { body: "deux" } } }]);
    expect((stored[5]!.snapshot as any).translations).toEqual([]);
    expect(stored[6]!.snapshot as any).toMatchObject({ parent_id: parent.id, path: "docs/a" });
    expect((stored[7]!.snapshot as any).status).toBe("archived");
    // Paging, newest first.
    const page2 = await revs(p.slug, n.id, "?per_page=3&page=2");
    expect(page2.json.data.map((r: { number: number }) => r.number)).toEqual([5, 4, 3]);
    expect((await revs(p.slug, n.id, "?per_page=0")).status).toBe(400);
  });

  test("a revision reads with its snapshot and a field-level diff (JSON Pointers) against the previous one or ?against=", async () => {
    const p = await seedProject(h);
    const n = await seedNode(h, p.slug, { slug: "d", title: "T", fields: { a: 1, b: "x" }, blocks: [{ type: "text", data: { body: "one" } }] });
    await h.request("PATCH", `/admin/p/${p.slug}/nodes/${n.id}`, { body: { title: "T2", fields: { a: 2, c: true } } });
    const r2 = await h.request("GET", `/admin/p/${p.slug}/nodes/${n.id}/revisions/2`);
    expect(r2.status).toBe(200);
    expect(r2.json.data).toMatchObject({ node_id: n.id, number: 2, operation: "update_node", deleted: false, snapshot: { title: "T2", fields: { a: 2, c: true } } });
    expect(r2.json.data.diff.against).toBe(1);
    expect(r2.json.data.diff.changes.toSorted((a: { path: string }, b: { path: string }) => a.path.localeCompare(b.path))).toEqual([
      { path: "/fields/a", before: 1, after: 2 },
      { path: "/fields/b", before: "x" },
      { path: "/fields/c", after: true },
      { path: "/title", before: "T", after: "T2" },
    ]);
    await h.request("PUT", `/admin/p/${p.slug}/nodes/${n.id}/blocks`, {
      body: [
        { type: "hero", data: { heading: "new" } },
        { id: n.blocks[0].id, type: "text", data: { body: "one!" } },
      ],
    });
    const r3 = await h.request("GET", `/admin/p/${p.slug}/nodes/${n.id}/revisions/3?against=1`);
    expect(r3.json.data.diff.against).toBe(1);
    const paths = r3.json.data.diff.changes.map((c: { path: string }) => c.path);
    // Blocks compare by id: the inserted hero is one addition, the text block's body one change, and the new order one entry.
    expect(paths.toSorted()).toEqual(["/blocks", "/blocks/0", "/blocks/1/data/body", "/fields/a", "/fields/b", "/fields/c", "/title"]);
    const change = (path: string) => r3.json.data.diff.changes.find((c: { path: string }) => c.path === path);
    expect(change("/blocks/0")).toEqual({ path: "/blocks/0", after: { id: expect.any(String), type: "hero", data: { heading: "new" } } });
    expect(change("/blocks")).toEqual({ path: "/blocks", before: [n.blocks[0].id], after: [expect.any(String), n.blocks[0].id] });
    const first = await h.request("GET", `/admin/p/${p.slug}/nodes/${n.id}/revisions/1`);
    expect(first.json.data.diff.against).toBeNull();
    for (const path of [`/nodes/${n.id}/revisions/9`, `/nodes/${n.id}/revisions/1?against=9`, `/nodes/00000000-0000-4000-8000-000000000000/revisions`]) {
      const res = await h.request("GET", `/admin/p/${p.slug}${path}`);
      expect({ path, status: res.status, code: res.json?.error?.code }).toEqual({ path, status: 404, code: "not_found" });
    }
    expect((await h.request("GET", `/admin/p/${p.slug}/nodes/${n.id}/revisions/0`)).status).toBe(400);
    expect((await h.request("GET", `/admin/p/${p.slug}/nodes/${n.id}/revisions/x`)).status).toBe(400);
    // Another project's node: 404 through this project.
    const other = await seedProject(h);
    expect((await revs(other.slug, n.id)).status).toBe(404);
    expect((await h.request("GET", `/admin/p/${other.slug}/nodes/${n.id}/revisions/1`)).status).toBe(404);
    expect((await h.request("POST", `/admin/p/${other.slug}/nodes/${n.id}/revisions/1/restore`)).status).toBe(404);
  });

  test("restore: the snapshot becomes current as a new revision, blocks keep their ids, translations come back", async () => {
    const p = await seedProject(h);
    const n = await seedNode(h, p.slug, {
      slug: "r",
      title: "Old",
      fields: { v: 1 },
      blocks: [
        { type: "text", data: { body: "b1" } },
        { type: "text", data: { body: "b2" } },
      ],
    });
    const [b1, b2] = n.blocks.map((b: { id: string }) => b.id);
    await h.request("PUT", `/admin/p/${p.slug}/nodes/${n.id}/translations/fr`, { body: { meta: { title: "Vieux" }, blocks: { [b1]: { body: "fr1" } }, status: "published" } });
    await h.request("POST", `/admin/p/${p.slug}/nodes/${n.id}/publish`);
    // Revision 3 is the state to come back to. Then: blocks replaced, translation gone, title changed.
    await h.request("PUT", `/admin/p/${p.slug}/nodes/${n.id}/blocks`, { body: [{ type: "hero", data: { heading: "h" } }] });
    await h.request("DELETE", `/admin/p/${p.slug}/nodes/${n.id}/translations/fr`);
    await h.request("PATCH", `/admin/p/${p.slug}/nodes/${n.id}`, { body: { title: "New", slug: "r2", fields: { v: 2 } } });
    await h.request("POST", `/admin/p/${p.slug}/nodes/${n.id}/unpublish`);
    const res = await h.request("POST", `/admin/p/${p.slug}/nodes/${n.id}/revisions/3/restore`);
    expect(res.status).toBe(200);
    expect(res.json.data).toEqual({ node_id: n.id, revision: 8, restored: [n.id] });
    const node = (await h.request("GET", `/admin/p/${p.slug}/nodes/${n.id}`)).json.data;
    expect(node).toMatchObject({ title: "Old", slug: "r", path: "r", status: "published", fields: { v: 1 } });
    expect(node.blocks.map((b: { id: string; data: unknown }) => [b.id, b.data])).toEqual([
      [b1, { body: "b1" }],
      [b2, { body: "b2" }],
    ]);
    const tr = await db.select().from(translations).where(eq(translations.nodeId, n.id));
    expect(tr.map((t) => [t.locale, t.status, t.meta, t.blocks])).toEqual([["fr", "published", { title: "Vieux" }, { [b1]: { body: "fr1" } }]]);
    const last = await h.request("GET", `/admin/p/${p.slug}/nodes/${n.id}/revisions/8?against=3`);
    expect(last.json.data).toMatchObject({ operation: "restore_revision", actor: ROOT_ACTOR });
    expect(last.json.data.diff.changes).toEqual([]);
    // Delivery serves the restored page at its restored path.
    expect((await h.request("GET", `/api/p/${p.slug}/nodes/by-path/r`, { key: null })).status).toBe(200);
    expect((await h.request("GET", `/api/p/${p.slug}/nodes/by-path/r2`, { key: null })).status).toBe(404);
    // A pruned or unknown revision: 404, nothing written.
    expect((await h.request("POST", `/admin/p/${p.slug}/nodes/${n.id}/revisions/99/restore`)).status).toBe(404);
    // content:read may read revisions but not restore.
    const reader = await keyWith(h, ["content:read"]);
    expect((await revs(p.slug, n.id, "")).status).toBe(200);
    expect((await h.request("GET", `/admin/p/${p.slug}/nodes/${n.id}/revisions`, { key: reader })).status).toBe(200);
    const denied = await h.request("POST", `/admin/p/${p.slug}/nodes/${n.id}/revisions/1/restore`, { key: reader });
    expect({ status: denied.status, code: denied.json.error.code }).toEqual({ status: 403, code: "insufficient_scope" });
    expect((await db.select({ r: nodes.revision }).from(nodes).where(eq(nodes.id, n.id)))[0]?.r).toBe(8);
  });

  test("a restore the current content model refuses is 400 invalid_content and writes nothing", async () => {
    const p = await seedProject(h);
    const n = await seedNode(h, p.slug, { slug: "m", type: "post", fields: { author: "a", summary: "s".repeat(80) } });
    await setModel(db, p.id, BLOG_MODEL());
    const ok = await h.request("PATCH", `/admin/p/${p.slug}/nodes/${n.id}`, { body: { fields: { author: "a", summary: "short" } } });
    expect(ok.status).toBe(200);
    const res = await h.request("POST", `/admin/p/${p.slug}/nodes/${n.id}/revisions/1/restore`);
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe("invalid_content");
    expect(res.json.error.details.violations[0].pointer).toBe("/fields/summary");
    const [row] = await db.select().from(nodes).where(eq(nodes.id, n.id));
    expect({ revision: row?.revision, fields: row?.fields }).toEqual({ revision: 2, fields: { author: "a", summary: "short" } });
    expect((await rowsOf(n.id)).length).toBe(2);
  });

  test("trash: a deleted node and its child are listed, restored together with ids, blocks and status; delivery shows them again", async () => {
    const p = await seedProject(h);
    const docs = await seedNode(h, p.slug, { slug: "docs", blocks: [{ type: "text", data: { body: "d" } }] }, true);
    const child = await seedNode(h, p.slug, { slug: "guide", parent_id: docs.id, blocks: [{ type: "text", data: { body: "g" } }] });
    await h.request("PUT", `/admin/p/${p.slug}/nodes/${child.id}/translations/fr`, { body: { meta: { title: "Guide fr" }, status: "draft" } });
    const keep = await seedNode(h, p.slug, { slug: "keep" });
    expect((await h.request("GET", `/api/p/${p.slug}/nodes/by-path/docs`, { key: null })).status).toBe(200);
    expect((await h.request("DELETE", `/admin/p/${p.slug}/nodes/${docs.id}`)).status).toBe(204);
    expect((await h.request("GET", `/api/p/${p.slug}/nodes/by-path/docs`, { key: null })).status).toBe(404);
    const sitemap = await h.request("GET", `/api/p/${p.slug}/sitemap.xml`, { key: null });
    expect(sitemap.text).not.toContain("docs");

    const trash = await h.request("GET", `/admin/p/${p.slug}/trash`);
    expect(trash.status).toBe(200);
    expect(trash.json.total).toBe(2);
    const byId = Object.fromEntries(trash.json.data.map((t: { node_id: string }) => [t.node_id, t]));
    expect(byId[docs.id]).toMatchObject({ revision: 3, path: "docs", status: "published", deleted_with: docs.id, actor: ROOT_ACTOR });
    expect(byId[child.id]).toMatchObject({ revision: 3, path: "docs/guide", status: "draft", deleted_with: docs.id });
    expect(byId[keep.id]).toBeUndefined();
    // The deleted node's history stays readable.
    const hist = await revs(p.slug, docs.id);
    expect(hist.json.data[0]).toMatchObject({ number: 3, operation: "delete_node", deleted: true });

    // The child alone cannot come back while its parent is in the trash.
    const orphan = await h.request("POST", `/admin/p/${p.slug}/nodes/${child.id}/revisions/3/restore`);
    expect({ status: orphan.status, code: orphan.json.error.code }).toEqual({ status: 409, code: "conflict" });

    const res = await h.request("POST", `/admin/p/${p.slug}/nodes/${docs.id}/revisions/3/restore`);
    expect(res.status).toBe(200);
    expect(res.json.data).toEqual({ node_id: docs.id, revision: 4, restored: [docs.id, child.id] });
    const back = (await h.request("GET", `/admin/p/${p.slug}/nodes/${child.id}`)).json.data;
    expect(back).toMatchObject({ id: child.id, parent_id: docs.id, path: "docs/guide", status: "draft" });
    expect(back.blocks[0].id).toBe(child.blocks[0].id);
    const [tr] = await db.select().from(translations).where(eq(translations.nodeId, child.id));
    expect({ meta: tr?.meta, status: tr?.status }).toEqual({ meta: { title: "Guide fr" }, status: "draft" });
    expect((await db.select().from(nodes).where(eq(nodes.id, child.id)))[0]?.revision).toBe(4);
    // Published as before: delivery serves docs again; the draft child stays unserved.
    expect((await h.request("GET", `/api/p/${p.slug}/nodes/by-path/docs`, { key: null })).status).toBe(200);
    expect((await h.request("GET", `/api/p/${p.slug}/nodes/by-path/docs/guide`, { key: null })).status).toBe(404);
    expect((await h.request("GET", `/admin/p/${p.slug}/trash`)).json.total).toBe(0);

    // A restore onto a path taken since: 409, nothing written.
    expect((await h.request("DELETE", `/admin/p/${p.slug}/nodes/${keep.id}`)).status).toBe(204);
    await seedNode(h, p.slug, { slug: "keep" });
    const clash = await h.request("POST", `/admin/p/${p.slug}/nodes/${keep.id}/revisions/2/restore`);
    expect({ status: clash.status, code: clash.json.error.code }).toEqual({ status: 409, code: "conflict" });
    expect((await db.select().from(nodes).where(eq(nodes.id, keep.id))).length).toBe(0);
  });

  test("trash: a collection of 150 entries comes back whole (its NOTIFY would pass PostgreSQL's 8000 bytes: it says 'anything' instead)", async () => {
    const p = await seedProject(h);
    const col = await seedNode(h, p.slug, { slug: "a-collection-with-a-rather-long-slug-for-this", type: "collection" }, true);
    for (let i = 0; i < 150; i++) await seedNode(h, p.slug, { slug: `entry-number-${i}-with-a-slug-long-enough-to-count`, parent_id: col.id }, true);
    expect((await h.request("DELETE", `/admin/p/${p.slug}/nodes/${col.id}`)).status).toBe(204);
    const [row] = await db.select({ revision: nodes.revision }).from(nodes).where(eq(nodes.id, col.id));
    expect(row).toBeUndefined();
    const trash = await h.request("GET", `/admin/p/${p.slug}/trash?per_page=1`);
    expect(trash.json.total).toBe(151);
    const res = await h.request("POST", `/admin/p/${p.slug}/nodes/${col.id}/revisions/3/restore`);
    expect(res.status).toBe(200);
    expect(res.json.data.restored).toHaveLength(151);
    expect((await h.request("GET", `/api/p/${p.slug}/nodes/by-path/a-collection-with-a-rather-long-slug-for-this/entry-number-149-with-a-slug-long-enough-to-count`, { key: null })).status).toBe(200);
  });

  test("retention: older revisions go past the count and the age, the newest stays; the trash empties after its days; pruned → 404", async () => {
    // The pruning covers the whole database: what earlier test files of this worker left over the
    // count goes first, so that the batched call below (2 × 20 rounds at most) meets this test's alone.
    await pruneRevisions(db, { revisionsPerNode: 4, revisionsMaxAgeDays: 90, trashRetentionDays: 30 }, new Date());
    const p = await seedProject(h);
    const n = await seedNode(h, p.slug, { slug: "ret" });
    for (let i = 0; i < 5; i++) await h.request("PATCH", `/admin/p/${p.slug}/nodes/${n.id}`, { body: { title: `t${i}` } });
    const gone = await seedNode(h, p.slug, { slug: "gone" });
    await h.request("DELETE", `/admin/p/${p.slug}/nodes/${gone.id}`);
    const now = new Date();
    const keepAll = { revisionsPerNode: 100, revisionsMaxAgeDays: 90, trashRetentionDays: 30 };
    await pruneRevisions(db, { ...keepAll, revisionsPerNode: 4 }, now, 2);
    expect((await rowsOf(n.id)).map((r) => r.number)).toEqual([3, 4, 5, 6]);
    expect((await h.request("POST", `/admin/p/${p.slug}/nodes/${n.id}/revisions/2/restore`)).status).toBe(404);
    expect((await h.request("GET", `/admin/p/${p.slug}/nodes/${n.id}/revisions/2`)).status).toBe(404);
    // Revision 3's previous one is pruned: it compares with nothing kept before it.
    expect((await h.request("GET", `/admin/p/${p.slug}/nodes/${n.id}/revisions/3`)).json.data.diff.against).toBeNull();
    // By age: 91 days later every revision but the newest of each node goes; the trashed node's delete revision stays while within… the trash days are past too.
    const later = new Date(now.getTime() + 91 * 86_400_000);
    await pruneRevisions(db, { ...keepAll, trashRetentionDays: 100 }, later);
    expect((await rowsOf(n.id)).map((r) => r.number)).toEqual([6]);
    expect((await rowsOf(gone.id)).map((r) => r.number)).toEqual([2]);
    expect((await h.request("GET", `/admin/p/${p.slug}/trash`)).json.data.map((t: { node_id: string }) => t.node_id)).toEqual([gone.id]);
    await pruneRevisions(db, keepAll, later);
    expect(await rowsOf(gone.id)).toEqual([]);
    expect((await rowsOf(n.id)).map((r) => r.number)).toEqual([6]);
    expect((await h.request("POST", `/admin/p/${p.slug}/nodes/${gone.id}/revisions/2/restore`)).status).toBe(404);
    expect((await revs(p.slug, gone.id)).status).toBe(404);
  });

  test("writes outside an operation (the demo seed, scripts) are the system's, named after the service's change", async () => {
    const p = await seedProject(h);
    const project = (await h.request("GET", `/admin/projects/${p.slug}`)).json.data;
    const n = await createNode(db, systemWrite(), { ...project, id: p.id, locales: ["en", "fr"], defaultLocale: "en" } as never, { slug: "sys", title: "S" }, new Date());
    await updateNode(db, systemWrite(), { id: p.id } as never, n.id, { title: "S2" }, new Date());
    const rows = await rowsOf(n.id);
    expect(rows.map((r) => [r.number, r.operation, r.actor])).toEqual([
      [1, "create_node", { kind: "system", id: null, name: null }],
      [2, "update_node", { kind: "system", id: null, name: null }],
    ]);
    expect(
      await db
        .select()
        .from(blocks)
        .where(and(eq(blocks.nodeId, n.id))),
    ).toEqual([]);
  });
});
