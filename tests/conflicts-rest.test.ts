// Optimistic concurrency over REST (issue 25): revision and ETag on node reads, If-Match and
// expected_revision on node writes, 409 conflict naming what changed, nothing written.
import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { activity, blocks, nodes, translations } from "../db/schema";
import { harness, seedNode, seedProject } from "./helpers";

describe("conflicts over REST", async () => {
  const h = await harness();
  const db = h.deps.db;
  const row = async (id: string) => (await db.select().from(nodes).where(eq(nodes.id, id)))[0]!;

  test("node reads and writes carry revision and ETag; every write moves the revision by one", async () => {
    const p = await seedProject(h);
    const n = await seedNode(h, p.slug, { slug: "home", blocks: [{ type: "text", data: { t: "a" } }] });
    expect(n.revision).toBe(1);
    const read = await h.request("GET", `/admin/p/${p.slug}/nodes/${n.id}`);
    expect(read.headers.get("etag")).toBe('"r1"');
    expect(read.json.data.revision).toBe(1);
    const byPath = await h.request("GET", `/admin/p/${p.slug}/node?path=home&locale=fr`);
    expect(byPath.headers.get("etag")).toBe('"r1"');
    const upd = await h.request("PATCH", `/admin/p/${p.slug}/nodes/${n.id}`, { body: { title: "Home 2" } });
    expect(upd.json.data.revision).toBe(2);
    expect(upd.headers.get("etag")).toBe('"r2"');
    const pub = await h.request("POST", `/admin/p/${p.slug}/nodes/${n.id}/publish`);
    expect(pub.json.data.revision).toBe(3);
    await h.request("PUT", `/admin/p/${p.slug}/nodes/${n.id}/translations/fr`, { body: { meta: { title: "Accueil" } } });
    await h.request("PUT", `/admin/p/${p.slug}/nodes/${n.id}/blocks`, { body: [{ type: "text" }] });
    await h.request("DELETE", `/admin/p/${p.slug}/nodes/${n.id}/translations/fr`);
    expect((await row(n.id)).revision).toBe(6);
    const list = await h.request("GET", `/admin/p/${p.slug}/nodes`);
    expect(list.json.data[0].revision).toBe(6);
    // CORS lets a browser client send If-Match and read the ETag.
    const pre = await h.request("OPTIONS", `/admin/p/${p.slug}/nodes/${n.id}`, { key: null, headers: { origin: BASE_ORIGIN, "access-control-request-method": "PATCH" } });
    expect(pre.headers.get("access-control-allow-headers") ?? "").toContain("if-match");
  });

  test("a stale If-Match answers 409 conflict naming the current revision and the changes since; nothing is written", async () => {
    const p = await seedProject(h);
    const n = await seedNode(h, p.slug, { slug: "page", blocks: [{ type: "text", data: { t: "a" } }] });
    const theirs = await h.request("PATCH", `/admin/p/${p.slug}/nodes/${n.id}`, { body: { title: "Theirs" }, headers: { "if-match": '"r1"' } });
    expect(theirs.status).toBe(200);
    const before = await row(n.id);
    const mine = await h.request("PATCH", `/admin/p/${p.slug}/nodes/${n.id}`, { body: { title: "Mine", seo: { description: "x" } }, headers: { "if-match": '"r1"' } });
    expect(mine.status).toBe(409);
    expect(mine.json.error.code).toBe("conflict");
    expect(mine.json.error.message).toContain("revision 2, not 1");
    expect(mine.json.error.details).toMatchObject({ node_id: n.id, expected_revision: 1, current_revision: 2 });
    expect(mine.json.error.details.changes_since).toEqual([expect.objectContaining({ revision: 2, operation: "update_node", actor: expect.objectContaining({ kind: "admin_key" }) })]);
    const after = await row(n.id);
    expect(after).toEqual(before);
    expect(after.title).toBe("Theirs");
    // Every other node write refuses a stale revision too, and writes nothing.
    const stale = { "if-match": '"r1"' };
    const blockRows = async () => db.select().from(blocks).where(eq(blocks.nodeId, n.id));
    const blocksBefore = await blockRows();
    for (const [method, tail, body] of [
      ["PUT", "/blocks", [{ type: "x" }]],
      ["PUT", "/blocks/order", { block_ids: blocksBefore.map((b) => b.id) }],
      ["POST", "/publish", undefined],
      ["PUT", "/translations/fr", { meta: { title: "T" } }],
      ["DELETE", "", undefined],
    ] as const) {
      const res = await h.request(method, `/admin/p/${p.slug}/nodes/${n.id}${tail}`, { body, headers: stale });
      expect([tail, res.status, res.json?.error?.code]).toEqual([tail, 409, "conflict"]);
    }
    expect(await row(n.id)).toEqual(before);
    expect(await blockRows()).toEqual(blocksBefore);
    expect(await db.select().from(translations).where(eq(translations.nodeId, n.id))).toEqual([]);
    // The current ETag passes; so do `*`, expected_revision in the body or the query, and no precondition at all.
    expect((await h.request("POST", `/admin/p/${p.slug}/nodes/${n.id}/publish`, { headers: { "if-match": '"r2"' } })).status).toBe(200);
    expect((await h.request("POST", `/admin/p/${p.slug}/nodes/${n.id}/unpublish`, { headers: { "if-match": "*" } })).status).toBe(200);
    expect((await h.request("PATCH", `/admin/p/${p.slug}/nodes/${n.id}`, { body: { title: "B", expected_revision: 4 } })).json.data.revision).toBe(5);
    expect((await h.request("PUT", `/admin/p/${p.slug}/nodes/${n.id}/blocks?expected_revision=5`, { body: [{ type: "y" }] })).status).toBe(200);
    expect((await h.request("PATCH", `/admin/p/${p.slug}/nodes/${n.id}`, { body: { title: "C", expected_revision: 5 } })).status).toBe(409);
    expect((await h.request("PATCH", `/admin/p/${p.slug}/nodes/${n.id}`, { body: { title: "D" } })).status).toBe(200);
    const del = await h.request("DELETE", `/admin/p/${p.slug}/nodes/${n.id}?expected_revision=6`);
    expect(del.status).toBe(409);
    expect(del.json.error.details.current_revision).toBe(7);
    expect((await h.request("DELETE", `/admin/p/${p.slug}/nodes/${n.id}`, { headers: { "if-match": 'W/"r7"' } })).status).toBe(204);
    // `*` on a node that is gone: 404, as without it.
    expect((await h.request("PATCH", `/admin/p/${p.slug}/nodes/${n.id}`, { body: { title: "E" }, headers: { "if-match": "*" } })).status).toBe(404);
  });

  test("bad preconditions are 400 with the documented code", async () => {
    const p = await seedProject(h);
    const n = await seedNode(h, p.slug, { slug: "bad" });
    const patch = (headers: Record<string, string>, body: Record<string, unknown> = { title: "x" }) => h.request("PATCH", `/admin/p/${p.slug}/nodes/${n.id}`, { body, headers });
    for (const tag of ['"abc"', "r1", '"r1", "r2"']) expect([tag, (await patch({ "if-match": tag })).json.error.code]).toEqual([tag, "invalid_request"]);
    expect((await patch({ "if-match": '"r1"' }, { title: "x", expected_revision: 2 })).json.error.code).toBe("invalid_request");
    expect((await patch({}, { title: "x", expected_revision: -1 })).status).toBe(400);
    expect((await patch({}, { title: "x", expected_revision: "1" })).status).toBe(400);
    expect((await patch({}, { expected_revision: 1 })).json.error.code).toBe("missing_parameter");
    expect((await row(n.id)).title).toBe("bad");
    // A publish with no body at all still works (expected_revision alone makes no body required).
    expect((await h.request("POST", `/admin/p/${p.slug}/nodes/${n.id}/publish`)).status).toBe(200);
  });

  test("20 concurrent updates with the same If-Match: exactly one wins, 19 conflicts, the database holds the winner's data", async () => {
    const p = await seedProject(h);
    const n = await seedNode(h, p.slug, { slug: "race" });
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) => h.request("PATCH", `/admin/p/${p.slug}/nodes/${n.id}`, { body: { title: `writer ${i}`, fields: { by: i } }, headers: { "if-match": '"r1"' } })),
    );
    const won = replies.filter((r) => r.status === 200);
    expect(won.length).toBe(1);
    expect(replies.filter((r) => r.status === 409 && r.json.error.code === "conflict").length).toBe(19);
    const stored = await row(n.id);
    expect(stored.revision).toBe(2);
    expect(stored.title).toBe(won[0]!.json.data.title);
    expect(stored.fields).toEqual(won[0]!.json.data.fields);
    // One activity entry for the winner, none for the refused writes.
    const logged = await db.select().from(activity).where(eq(activity.nodeId, n.id));
    expect(logged.map((a) => [a.operation, a.revision]).sort()).toEqual([
      ["create_node", 1],
      ["update_node", 2],
    ]);
  });

  test("OpenAPI documents If-Match, expected_revision and 409 on node writes", async () => {
    const doc = (await h.request("GET", "/swagger/json", { key: null })).json;
    const patch = doc.paths["/admin/p/{ref}/nodes/{id}"].patch;
    expect(patch.parameters.map((x: any) => x.name)).toContain("If-Match");
    expect(patch.responses["409"]).toMatchObject({ description: "Error 409", content: { "application/json": { schema: { required: ["error"] } } } });
    const blocksPut = doc.paths["/admin/p/{ref}/nodes/{id}/blocks"].put;
    expect(blocksPut.parameters.map((x: any) => x.name)).toEqual(expect.arrayContaining(["If-Match", "expected_revision"]));
  });
});

const BASE_ORIGIN = "http://localhost";
