// Issue 24: the indexes behind entries filtered and sorted by a field come with the model. A model
// write through the admin API builds one for each `index: true` field of a node type, a change that
// drops the flag drops it, and deleting the project drops what is left (partial indexes on nodes
// would outlive the project's rows).
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { rows } from "../src/lib/json";
import { harness, seedProject } from "./helpers";

const post = (indexed: boolean) => ({
  name: "post",
  description: "A post",
  fields: { type: "object", properties: { date: { type: "string", format: "date-time", index: indexed }, rank: { type: "number", index: true } } },
});

describe("field indexes follow the model", async () => {
  const h = await harness();
  const indexesOf = async (projectId: string): Promise<string[]> =>
    rows<{ name: string }>(
      await h.deps.db.execute(sql`select indexname as name from pg_indexes where tablename = 'nodes' and indexname like ${`nodes_fx_${projectId.replace(/-/g, "")}_%`} order by 1`),
    ).map((r) => r.name);

  test("PUT model builds them, a change drops the one no longer indexed, deleting the project drops the rest", async () => {
    const p = await seedProject(h);
    expect(await indexesOf(p.id)).toEqual([]);
    expect((await h.request("PUT", `/admin/p/${p.slug}/model`, { body: { node_types: [post(true)] } })).status).toBe(200);
    const both = await indexesOf(p.id);
    expect(both).toHaveLength(2);
    expect((await h.request("PUT", `/admin/p/${p.slug}/model/nodes/post`, { body: post(false) })).status).toBe(200);
    const one = await indexesOf(p.id);
    expect(one).toHaveLength(1);
    expect(both).toContain(one[0]!);
    expect((await h.request("DELETE", `/admin/projects/${p.slug}`)).status).toBe(204);
    expect(await indexesOf(p.id)).toEqual([]);
  });
});
