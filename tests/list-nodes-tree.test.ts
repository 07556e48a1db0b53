// list_nodes as the studio's content tree reads it: siblings in their order (sort=position), and
// nodes by title (q, any case, LIKE wildcards taken literally); bad values are 400.
import { describe, expect, test } from "bun:test";
import { harness, seedNode, seedProject } from "./helpers";

describe("list_nodes for a content tree", async () => {
  const h = await harness();
  const p = await seedProject(h);
  const parent = await seedNode(h, p.slug, { slug: "docs", title: "Docs" });
  for (const [slug, title, position] of [
    ["zeta", "Zeta first", 0],
    ["alpha", "Alpha second", 1],
    ["mid", "100% Mid third", 2],
  ] as const)
    await seedNode(h, p.slug, { slug, title, position, parent_id: parent.id });

  test("sort=position lists siblings in their order; the default stays by path", async () => {
    const byPosition = await h.request("GET", `/admin/p/${p.slug}/nodes?parent_id=${parent.id}&sort=position`);
    expect(byPosition.status).toBe(200);
    expect(byPosition.json.data.map((n: { slug: string }) => n.slug)).toEqual(["zeta", "alpha", "mid"]);
    const byPath = await h.request("GET", `/admin/p/${p.slug}/nodes?parent_id=${parent.id}`);
    expect(byPath.json.data.map((n: { slug: string }) => n.slug)).toEqual(["alpha", "mid", "zeta"]);
    const bad = await h.request("GET", `/admin/p/${p.slug}/nodes?sort=title`);
    expect(bad.status).toBe(400);
    expect(bad.json.error.details.errors[0].field).toBe("sort");
  });

  test("q finds nodes by title in any case; % and _ are not wildcards", async () => {
    const found = await h.request("GET", `/admin/p/${p.slug}/nodes?q=SECOND`);
    expect(found.json.data.map((n: { slug: string }) => n.slug)).toEqual(["alpha"]);
    const percent = await h.request("GET", `/admin/p/${p.slug}/nodes?q=100%25`);
    expect(percent.json.data.map((n: { slug: string }) => n.slug)).toEqual(["mid"]);
    expect((await h.request("GET", `/admin/p/${p.slug}/nodes?q=%25`)).json.data.map((n: { slug: string }) => n.slug)).toEqual(["mid"]);
    expect((await h.request("GET", `/admin/p/${p.slug}/nodes?q=_`)).json.total).toBe(0);
  });
});
