// Delivery JSON can be embedded in an HTML <script> element as is: `<` is written \u003c, so a title
// containing </script> cannot close the element (issue 12 §4). The parsed value is unchanged.
import { describe, expect, test } from "bun:test";
import { get, translate } from "./delivery.helpers";
import { harness, seedNode, seedProject } from "./helpers";

const EVIL = "</script><script>alert(1)</script><!--";

describe("delivery: JSON answers never contain a raw <", async () => {
  const h = await harness();
  const p = await seedProject(h, { public_base_url: "https://site.example" });
  const col = await seedNode(h, p.slug, { slug: "blog", title: "Blog", type: "collection" }, true);
  const n = await seedNode(h, p.slug, { slug: "post", title: EVIL, parent_id: col.id, seo: { description: EVIL }, blocks: [{ type: "text", data: { text: EVIL } }] }, true);
  await translate(h, p.slug, n.id, "fr", { meta: { title: EVIL } });
  expect((await h.request("PUT", `/admin/p/${p.slug}/theme`, { body: { name_override: EVIL } })).status).toBe(200);

  test("node, list, entries, translation, theme and error bodies: no `<` in the bytes, the same strings once parsed", async () => {
    const reads: Array<[string, number, (json: any) => unknown]> = [
      ["/nodes/by-path/blog/post", 200, (j) => [j.data.title, j.data.seo.jsonld]],
      [`/nodes/${n.id}`, 200, (j) => [j.data.title, j.data.blocks[0].data.text]],
      ["/nodes/by-path/blog/post?locale=fr", 200, (j) => [j.data.title, j.data.seo.jsonld]],
      ["/nodes", 200, (j) => j.data.find((x: { id: string }) => x.id === n.id).title],
      ["/entries?collection=blog", 200, (j) => j.data[0].title],
      [`/translations/nodes/${n.id}?locale=fr`, 200, (j) => j.data.title],
      ["/theme", 200, (j) => j.name_override],
      [`/nodes/by-path/blog/post?locale=${encodeURIComponent(EVIL)}`, 400, (j) => j.error.message],
    ];
    for (const [path, status, pick] of reads) {
      for (const round of [1, 2]) {
        // round 1 renders, round 2 is a cache hit (the bytes are escaped once, when rendered)
        const res = await get(h, `/api/p/${p.slug}${path}`);
        expect([path, round, res.status]).toEqual([path, round, status]);
        expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
        expect(res.text).not.toContain("<");
        expect(res.text).toContain("\\u003c/script>");
        expect(JSON.stringify(pick(JSON.parse(res.text)))).toContain(JSON.stringify(EVIL).slice(1, -1));
      }
    }
    // The JSON-LD a site embeds names the page and the site with the raw title, as parsed.
    const page = (await get(h, `/api/p/${p.slug}/nodes/by-path/blog/post`)).json;
    expect(page.data.title).toBe(EVIL);
    expect(JSON.stringify(page.data.seo.jsonld)).toContain(JSON.stringify(EVIL));
  });

  test("a gzip-encoded answer decodes to the same escaped bytes", async () => {
    const res = await h.app.handle(new Request(`http://localhost/api/p/${p.slug}/nodes/by-path/blog/post`, { headers: { "accept-encoding": "gzip" } }));
    expect(res.headers.get("content-encoding")).toBe("gzip");
    const text = new TextDecoder().decode(Bun.gunzipSync(new Uint8Array(await res.arrayBuffer())));
    expect(text).not.toContain("<");
    expect(JSON.parse(text).data.title).toBe(EVIL);
  });
});
