// The indexes behind entries filtered and sorted by a field come with the model. A model write
// through the admin API builds the shared index of each `index: true` field of a node type (one per
// field name and kind, whatever the number of projects), a change that drops the flag drops it once
// no project's model indexes it, and so does deleting the last project that does.
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { rows } from "../src/lib/json";
import { fieldIndexName } from "../src/model/indexes";
import { harness, seedProject } from "./helpers";

// Field names of this file only (the test database is shared by the test files).
const tag = `m${crypto.randomUUID().slice(0, 8)}`;
const DATE = { name: `${tag}_date`, kind: "date" } as const;
const RANK = { name: `${tag}_rank`, kind: "number" } as const;

const post = (indexed: boolean) => ({
  name: "post",
  description: "A post",
  fields: { type: "object", properties: { [DATE.name]: { type: "string", format: "date-time", index: indexed }, [RANK.name]: { type: "number", index: true } } },
});

describe("field indexes follow the models", async () => {
  const h = await harness();
  const ours = async (): Promise<string[]> =>
    rows<{ name: string }>(
      await h.deps.db.execute(sql`select indexname as name from pg_indexes where tablename = 'nodes' and indexname in (${fieldIndexName(DATE)}, ${fieldIndexName(RANK)}) order by 1`),
    ).map((r) => r.name);

  test("PUT model builds them, a change drops the one no longer indexed, deleting the project drops the rest", async () => {
    const p = await seedProject(h);
    expect(await ours()).toEqual([]);
    expect((await h.request("PUT", `/admin/p/${p.slug}/model`, { body: { node_types: [post(true)] } })).status).toBe(200);
    expect(await ours()).toEqual([fieldIndexName(DATE), fieldIndexName(RANK)].sort());
    expect((await h.request("PUT", `/admin/p/${p.slug}/model/nodes/post`, { body: post(false) })).status).toBe(200);
    expect(await ours()).toEqual([fieldIndexName(RANK)]);
    expect((await h.request("DELETE", `/admin/projects/${p.slug}`)).status).toBe(204);
    expect(await ours()).toEqual([]);
  });

  test("two projects indexing the same field share one index; it stays while one of them uses it", async () => {
    const p = await seedProject(h);
    const q = await seedProject(h);
    for (const x of [p, q]) expect((await h.request("PUT", `/admin/p/${x.slug}/model`, { body: { node_types: [post(true)] } })).status).toBe(200);
    expect(await ours()).toEqual([fieldIndexName(DATE), fieldIndexName(RANK)].sort());
    // p no longer indexes the date: q does, the index stays.
    expect((await h.request("PUT", `/admin/p/${p.slug}/model/nodes/post`, { body: post(false) })).status).toBe(200);
    expect(await ours()).toEqual([fieldIndexName(DATE), fieldIndexName(RANK)].sort());
    // q deleted: p still indexes the rank, no one the date.
    expect((await h.request("DELETE", `/admin/projects/${q.slug}`)).status).toBe(204);
    expect(await ours()).toEqual([fieldIndexName(RANK)]);
    expect((await h.request("DELETE", `/admin/projects/${p.slug}`)).status).toBe(204);
    expect(await ours()).toEqual([]);
  });
});
