// read_published_version: the version delivery serves, beside the working copy (the studio's
// "Compare with published" reads it): 404 before a publish, the old title and blocks after an edit
// of the working copy, the new ones once published again; another project's node is 404.
import { describe, expect, test } from "bun:test";
import { harness, seedNode, seedProject } from "./helpers";

describe("read_published_version", async () => {
  const h = await harness();
  const p = await seedProject(h);
  const other = await seedProject(h);

  test("404 without a published version; the published one after an edit of the working copy; another project's node is 404", async () => {
    const node = await seedNode(h, p.slug, { slug: "about", title: "About", blocks: [{ type: "text", data: { body: "One" } }] });
    const before = await h.request("GET", `/admin/p/${p.slug}/nodes/${node.id}/published`);
    expect(before.status).toBe(404);
    expect(before.json.error.code).toBe("not_found");
    expect((await h.request("POST", `/admin/p/${p.slug}/nodes/${node.id}/publish`)).status).toBe(200);
    const edited = await h.request("PATCH", `/admin/p/${p.slug}/nodes/${node.id}`, { body: { title: "About us", blocks: [{ type: "text", data: { body: "Two" } }] } });
    expect(edited.status).toBe(200);
    const published = await h.request("GET", `/admin/p/${p.slug}/nodes/${node.id}/published`);
    expect(published.status).toBe(200);
    expect(published.json.data).toMatchObject({ id: node.id, title: "About", slug: "about", path: "about", blocks: [{ type: "text", data: { body: "One" } }], translations: [] });
    expect(published.json.data.published_at).toEqual(expect.any(String));
    expect((await h.request("GET", `/admin/p/${other.slug}/nodes/${node.id}/published`)).status).toBe(404);
    expect((await h.request("POST", `/admin/p/${p.slug}/nodes/${node.id}/publish`)).status).toBe(200);
    const again = await h.request("GET", `/admin/p/${p.slug}/nodes/${node.id}/published`);
    expect(again.json.data).toMatchObject({ title: "About us", blocks: [{ type: "text", data: { body: "Two" } }] });
  });
});
