// DELETE /admin/p/{ref}/nodes/{id}: the node, its descendants, their blocks and translations go;
// siblings and other projects stay; delivery stops serving them at once.
import { describe, expect, test } from "bun:test";
import { inArray, sql } from "drizzle-orm";
import { blocks, nodes, translations } from "../db/schema";
import { harness, seedNode, seedProject } from "./helpers";

describe("node deletion", async () => {
  const h = await harness();
  const db = h.deps.db;

  /** docs ← docs/guide ← docs/guide/deep, and a sibling; published, with blocks and fr translations. */
  async function tree(ref: string) {
    const docs = await seedNode(h, ref, { slug: "docs", blocks: [{ type: "text", data: { text: "docs" } }] }, true);
    const guide = await seedNode(h, ref, { slug: "guide", parent_id: docs.id, blocks: [{ type: "text", data: { text: "g" } }, { type: "image" }] }, true);
    const deep = await seedNode(h, ref, { slug: "deep", parent_id: guide.id, blocks: [{ type: "text" }] }, true);
    const sibling = await seedNode(h, ref, { slug: "about", blocks: [{ type: "text", data: { text: "about" } }] }, true);
    for (const n of [docs, guide, sibling]) {
      const res = await h.request("PUT", `/admin/p/${ref}/nodes/${n.id}/translations/fr`, { body: { meta: { title: "fr" }, blocks: { [n.blocks[0].id]: { text: "fr" } } } });
      expect(res.status).toBe(200);
    }
    return { docs, guide, deep, sibling };
  }
  const countRows = async (ids: string[]) => {
    const [[n], [b], [t]] = await Promise.all([
      db.select({ c: sql<number>`count(*)::int` }).from(nodes).where(inArray(nodes.id, ids)),
      db.select({ c: sql<number>`count(*)::int` }).from(blocks).where(inArray(blocks.nodeId, ids)),
      db.select({ c: sql<number>`count(*)::int` }).from(translations).where(inArray(translations.nodeId, ids)),
    ]);
    return { nodes: Number(n!.c), blocks: Number(b!.c), translations: Number(t!.c) };
  };

  test("deletes the node and its subtree with their blocks and translations; the rest is untouched", async () => {
    const p = await seedProject(h);
    const other = await seedProject(h);
    const t = await tree(p.slug);
    const o = await tree(other.slug);
    const subtree = [t.docs.id, t.guide.id, t.deep.id];
    expect(await countRows(subtree)).toEqual({ nodes: 3, blocks: 4, translations: 2 });
    // Delivery has served (and cached) the page before the deletion.
    expect((await h.request("GET", `/api/p/${p.slug}/nodes/by-path/docs/guide`, { key: null })).status).toBe(200);

    const del = await h.request("DELETE", `/admin/p/${p.slug}/nodes/${t.docs.id}`);
    expect({ status: del.status, body: del.text }).toEqual({ status: 204, body: "" });

    for (const n of [t.docs, t.guide, t.deep]) {
      const res = await h.request("GET", `/admin/p/${p.slug}/nodes/${n.id}`);
      expect({ id: n.id, status: res.status, code: res.json?.error?.code }).toEqual({ id: n.id, status: 404, code: "not_found" });
    }
    expect(await countRows(subtree)).toEqual({ nodes: 0, blocks: 0, translations: 0 });
    expect((await h.request("GET", `/api/p/${p.slug}/nodes/by-path/docs/guide`, { key: null })).status).toBe(404);
    expect((await h.request("GET", `/api/p/${p.slug}/nodes/by-path/docs`, { key: null })).status).toBe(404);

    // The sibling and the other project's identical tree are intact.
    expect(await countRows([t.sibling.id])).toEqual({ nodes: 1, blocks: 1, translations: 1 });
    expect(await countRows([o.docs.id, o.guide.id, o.deep.id, o.sibling.id])).toEqual({ nodes: 4, blocks: 5, translations: 3 });
    const list = await h.request("GET", `/admin/p/${p.slug}/nodes`);
    expect(list.json.data.map((n: { path: string }) => n.path)).toEqual(["about"]);
    expect((await h.request("GET", `/api/p/${other.slug}/nodes/by-path/docs/guide`, { key: null })).status).toBe(200);
  });

  test("deleting again, or another project's node, is 404 and deletes nothing", async () => {
    const p = await seedProject(h);
    const other = await seedProject(h);
    const mine = await seedNode(h, p.slug, { slug: "x" });
    const theirs = await seedNode(h, other.slug, { slug: "x" });
    expect((await h.request("DELETE", `/admin/p/${p.slug}/nodes/${mine.id}`)).status).toBe(204);
    const again = await h.request("DELETE", `/admin/p/${p.slug}/nodes/${mine.id}`);
    expect({ status: again.status, code: again.json?.error?.code }).toEqual({ status: 404, code: "not_found" });
    const foreign = await h.request("DELETE", `/admin/p/${p.slug}/nodes/${theirs.id}`);
    expect({ status: foreign.status, code: foreign.json?.error?.code }).toEqual({ status: 404, code: "not_found" });
    expect(await countRows([theirs.id])).toMatchObject({ nodes: 1 });
  });
});
