// The search indexer (src/search/indexer.ts) racing content writes: writes queue their nodes and
// rebuild published rows in their transaction, indexers (several at once, as several instances
// would) take the queue in batches. Whatever the interleaving, once the queue is empty the index is
// exactly what search_rows() computes from the content now, for working copies and published
// versions alike. PGlite and PostgreSQL (where the indexers really run on separate connections).
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { rows } from "../src/lib/json";
import { indexAll, queueStaleProjects } from "../src/search/indexer";
import { harness, seedNode, seedProject } from "./helpers";

const WORDS = ["amber", "basil", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "juniper", "kelp", "lumen"];
const pick = (i: number): string => WORDS[i % WORDS.length] ?? "x";

describe("search: the indexer beside writes", async () => {
  const h = await harness();
  const p = await seedProject(h, { locales: ["en", "de"] });
  const nodes: { id: string }[] = [];
  for (let i = 0; i < 12; i++) nodes.push(await seedNode(h, p.slug, { slug: `n${i}`, title: `Page ${pick(i)}`, blocks: [{ type: "text", data: { body: `About ${pick(i + 3)}` } }] }, i % 2 === 0));

  const indexRows = async (): Promise<string[]> =>
    rows<{ k: string }>(
      await h.deps.db.execute(sql`select node_id || '|' || published || '|' || locale || '|' || title || '|' || body || '|' || blocks as k
        from search_documents where project_id = ${p.id} order by 1`),
    ).map((r) => r.k);
  const expected = async (): Promise<string[]> =>
    rows<{ k: string }>(
      await h.deps.db.execute(sql`select r.node_id || '|' || r.published || '|' || r.locale || '|' || r.title || '|' || r.body || '|' || r.blocks as k
        from search_rows(${p.id}::uuid, array(select id from nodes where project_id = ${p.id}), array(select id from nodes where project_id = ${p.id})) r order by 1`),
    ).map((r) => r.k);

  test("writes, publishes, translations and deletes racing two indexers leave the index equal to the content", async () => {
    await queueStaleProjects(h.deps.db);
    let writing = true;
    const indexers = [0, 1].map(async () => {
      let looks = 0;
      while (writing) {
        await indexAll(h.deps.db, { batches: 1000 });
        looks++;
      }
      return looks;
    });
    const statuses: number[] = [];
    await Promise.all(
      [0, 1, 2, 3].map(async (w) => {
        for (let i = 0; i < 15; i++) {
          const node = nodes[(w * 7 + i * 5) % nodes.length];
          if (!node) continue;
          const word = pick(w * 31 + i * 7);
          const step = (w + i) % 5;
          const res =
            step === 0
              ? await h.request("POST", `/admin/p/${p.slug}/nodes/${node.id}/publish`)
              : step === 1
                ? await h.request("PUT", `/admin/p/${p.slug}/nodes/${node.id}/translations/de`, { body: { meta: { title: `Seite ${word}` }, status: i % 2 ? "published" : "draft" } })
                : await h.request("PATCH", `/admin/p/${p.slug}/nodes/${node.id}`, { body: { title: `Page ${word} ${w}-${i}` } });
          statuses.push(res.status);
        }
      }),
    );
    // A node deleted while indexers run: its rows go with it.
    const gone = nodes.pop();
    expect((await h.request("DELETE", `/admin/p/${p.slug}/nodes/${gone?.id}`)).status).toBeLessThan(300);
    writing = false;
    const looks = await Promise.all(indexers);
    expect(looks.every((n) => n > 0)).toBe(true);
    // Every write reached its operation (a 404 or 400 here would make the race test nothing).
    expect(statuses.filter((s) => s >= 300)).toEqual([]);
    // Published rows were kept by the writes themselves; the working copies by the indexers.
    await indexAll(h.deps.db, { batches: 1000 });
    expect(await indexRows()).toEqual(await expected());
    const queued = rows<{ n: number }>(await h.deps.db.execute(sql`select count(*)::int as n from search_pending where project_id = ${p.id}`));
    expect(Number(queued[0]?.n)).toBe(0);
    expect((await indexRows()).some((k) => k.startsWith(`${gone?.id}|`))).toBe(false);
  });

  test("a draft edit is queued, not indexed in the write; the admin search indexes the queue before it searches", async () => {
    const node = nodes[1];
    expect((await h.request("PATCH", `/admin/p/${p.slug}/nodes/${node?.id}`, { body: { title: "Page quokka" } })).status).toBe(200);
    const queued = rows<{ n: number }>(await h.deps.db.execute(sql`select count(*)::int as n from search_pending where node_id = ${node?.id}`));
    expect(Number(queued[0]?.n)).toBe(1);
    const res = await h.request("GET", `/admin/p/${p.slug}/search?query=quokka`);
    expect(res.status).toBe(200);
    expect(res.json.data.map((d: { id: string }) => d.id)).toEqual([node?.id]);
    expect(await indexRows()).toEqual(await expected());
  });
});
