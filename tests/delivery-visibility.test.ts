import { describe, expect, test } from "bun:test";
import { get, transition, translate, urlsOf } from "./delivery.helpers";
import { harness, seedNode, seedProject } from "./helpers";

const BASE = "https://site.example";
const NEVER_ID = "00000000-0000-7000-8000-000000000000";

describe("delivery: only published, non-archived content of the project is visible", async () => {
  const h = await harness();
  const p = await seedProject(h, { locales: ["en", "fr"], public_base_url: BASE });
  const q = await seedProject(h, { locales: ["en", "fr"], public_base_url: BASE });
  const api = (rest: string): string => `/api/p/${p.slug}${rest}`;

  const visible = await seedNode(h, p.slug, { slug: "visible", title: "Visible" }, true);
  const visibleChild = await seedNode(h, p.slug, { slug: "child", title: "Child", parent_id: visible.id }, true);
  const draft = await seedNode(h, p.slug, { slug: "draft", title: "Draft" });
  const archived = await seedNode(h, p.slug, { slug: "archived", title: "Archived" }, true);
  await transition(h, p.slug, archived.id, "archive");
  const unpublished = await seedNode(h, p.slug, { slug: "unpublished", title: "Unpublished" }, true);
  await transition(h, p.slug, unpublished.id, "unpublish");
  // A page is published under a published parent; unpublishing the parent afterwards hides it.
  const draftParent = await seedNode(h, p.slug, { slug: "draft-parent", title: "DP" }, true);
  const underDraft = await seedNode(h, p.slug, { slug: "kid", title: "Kid", parent_id: draftParent.id }, true);
  await transition(h, p.slug, draftParent.id, "unpublish");
  const archivedParent = await seedNode(h, p.slug, { slug: "archived-parent", title: "AP" }, true);
  const underArchivedMid = await seedNode(h, p.slug, { slug: "mid", title: "Mid", parent_id: archivedParent.id }, true);
  const underArchived = await seedNode(h, p.slug, { slug: "deep", title: "Deep", parent_id: underArchivedMid.id }, true);
  await transition(h, p.slug, archivedParent.id, "archive");
  const col = await seedNode(h, p.slug, { slug: "col", title: "Col", type: "collection" }, true);
  const entryPub = await seedNode(h, p.slug, { slug: "e-pub", title: "e pub", parent_id: col.id }, true);
  const entryDraft = await seedNode(h, p.slug, { slug: "e-draft", title: "e draft", parent_id: col.id });
  const entryArch = await seedNode(h, p.slug, { slug: "e-arch", title: "e arch", parent_id: col.id }, true);
  await transition(h, p.slug, entryArch.id, "archive");
  const hiddenCol = await seedNode(h, p.slug, { slug: "hidden-col", title: "HC", type: "collection" }, true);
  await seedNode(h, p.slug, { slug: "e-in-hidden", title: "x", parent_id: hiddenCol.id }, true);
  await transition(h, p.slug, hiddenCol.id, "unpublish");
  const foreign = await seedNode(h, q.slug, { slug: "foreign", title: "Foreign" }, true);
  const foreignCol = await seedNode(h, q.slug, { slug: "foreign-col", title: "FC", type: "collection" }, true);
  await seedNode(h, q.slug, { slug: "fe", title: "fe", parent_id: foreignCol.id }, true);

  const hidden = [draft, archived, unpublished, draftParent, underDraft, archivedParent, underArchivedMid, underArchived, entryDraft, entryArch, hiddenCol];
  for (const n of [...hidden, visible, foreign]) await translate(h, n.project_id === q.id ? q.slug : p.slug, n.id, "fr", { meta: { title: "fr" } });

  const same = async (path: string, reference: string): Promise<void> => {
    const res = await get(h, api(path));
    const ref = await get(h, api(reference));
    expect(ref.status).toBe(404);
    expect(res.status).toBe(404);
    expect(res.text).toBe(ref.text);
    expect(res.headers.get("etag")).toBe(ref.headers.get("etag"));
    expect(res.headers.get("content-type")).toBe(ref.headers.get("content-type"));
  };

  test("the visible ones are visible", async () => {
    expect((await get(h, api("/nodes/by-path/visible/child"))).json.data.id).toBe(visibleChild.id);
    expect((await get(h, api(`/translations/nodes/${visible.id}?locale=fr`))).status).toBe(200);
    expect((await get(h, api("/entries?collection=col"))).json.data.map((e: any) => e.id)).toEqual([entryPub.id]);
  });

  test("by id, by path and translations: hidden and foreign nodes answer exactly like ids that never existed", async () => {
    for (const n of [...hidden, foreign]) {
      await same(`/nodes/${n.id}`, `/nodes/${NEVER_ID}`);
      await same(`/nodes/${n.id}?locale=fr`, `/nodes/${NEVER_ID}?locale=fr`);
      await same(`/nodes/by-path/${n.path}`, "/nodes/by-path/never/existed");
      await same(`/translations/nodes/${n.id}?locale=fr`, `/translations/nodes/${NEVER_ID}?locale=fr`);
    }
  });

  test("entries: a hidden or foreign collection is an unknown one; hidden entries are left out", async () => {
    for (const c of ["hidden-col", "foreign-col"]) await same(`/entries?collection=${c}`, "/entries?collection=never-existed");
    const res = await get(h, api("/entries?collection=col&sort=title"));
    expect(res.json.total).toBe(1);
  });

  test("node list and sitemap list only visible nodes of this project", async () => {
    const list = (await get(h, api("/nodes"))).json.data.map((r: any) => r.id).sort();
    expect(list).toEqual([visible.id, visibleChild.id, col.id, entryPub.id].sort());
    const xml = (await get(h, api("/sitemap.xml"))).text;
    const locs = urlsOf(xml)
      .map((u) => u.loc)
      .sort();
    expect(locs).toEqual([`${BASE}/col`, `${BASE}/col/e-pub`, `${BASE}/visible`, `${BASE}/fr/visible`, `${BASE}/visible/child`].sort());
    for (const n of [...hidden, foreign]) expect(xml).not.toContain(`/${n.path}<`);
  });

  test("publishing the ancestor again brings its published descendants back, unchanged", async () => {
    await transition(h, p.slug, draftParent.id, "publish");
    expect((await get(h, api("/nodes/by-path/draft-parent/kid"))).json.data.id).toBe(underDraft.id);
    await transition(h, p.slug, archivedParent.id, "restore");
    await transition(h, p.slug, archivedParent.id, "publish");
    expect((await get(h, api(`/nodes/${underArchived.id}`))).json.data.path).toBe("archived-parent/mid/deep");
    const list = (await get(h, api("/nodes"))).json.data.map((r: any) => r.id);
    expect(list).toContain(underArchived.id);
    expect(list).not.toContain(draft.id);
  });
});
