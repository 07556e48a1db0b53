// Relevance of site search (issue 40): a judged set of queries in English, German, French and
// Spanish (tests/fixtures/search-relevance.json) scored by nDCG@10 against the old `q` of the
// entries list (a case-insensitive substring of the title or slug, unranked). The suite fails when
// search scores below that baseline or below 0.8.
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { rows } from "../src/lib/json";
import { escapeLike } from "../src/lib/sql";
import { get, translate } from "./delivery.helpers";
import fixture from "./fixtures/search-relevance.json" with { type: "json" };
import { harness, seedNode, seedProject } from "./helpers";

type Doc = { slug: string } & Record<"en" | "de" | "fr" | "es", { title: string; description: string; body: string }>;
const LOCALES = ["en", "de", "fr", "es"] as const;

/** nDCG@10 of a ranking (slugs) against graded judgments. */
function ndcg(ranked: readonly string[], relevant: Record<string, number>): number {
  const dcg = (grades: number[]): number => grades.slice(0, 10).reduce((sum, g, i) => sum + (2 ** g - 1) / Math.log2(i + 2), 0);
  const ideal = dcg(Object.values(relevant).sort((a, b) => b - a));
  return ideal === 0 ? 0 : dcg(ranked.map((s) => relevant[s] ?? 0)) / ideal;
}

describe("search relevance: nDCG@10 of the judged set", async () => {
  const h = await harness();
  const p = await seedProject(h, { locales: [...LOCALES] });
  const slugOf = new Map<string, string>();
  for (const d of fixture.documents as Doc[]) {
    const node = await seedNode(h, p.slug, { slug: d.slug, title: d.en.title, seo: { description: d.en.description }, blocks: [{ type: "text", data: { body: d.en.body } }] }, true);
    slugOf.set(node.id, d.slug);
    const blockId = node.blocks[0].id;
    for (const l of ["de", "fr", "es"] as const) {
      await translate(h, p.slug, node.id, l, { meta: { title: d[l].title, description: d[l].description, slug: `${d.slug}-${l}` }, blocks: { [blockId]: { body: d[l].body } } });
    }
  }

  /** The old `q`: published pages whose title (the locale's) or slug holds q, newest first. */
  async function baseline(locale: string, q: string): Promise<string[]> {
    const like = `%${escapeLike(q)}%`;
    const found = rows<{ id: string }>(
      await h.deps.db.execute(
        locale === "en"
          ? sql`select n.id from published_nodes n where n.project_id = ${p.id} and n.status = 'published' and (n.title ilike ${like} or n.slug ilike ${like}) order by n.updated_at desc, n.id desc`
          : sql`select n.id from published_nodes n join published_translations t on t.node_id = n.id and t.locale = ${locale}
              where n.project_id = ${p.id} and n.status = 'published' and (coalesce(t.meta->>'title', n.title) ilike ${like} or coalesce(t.meta->>'slug', n.slug) ilike ${like})
              order by n.updated_at desc, n.id desc`,
      ),
    );
    return found.map((r) => slugOf.get(r.id) ?? "");
  }

  test("at least 40 judged queries in four languages; search beats the substring baseline and scores 0.8 or more", async () => {
    const queries = fixture.queries as unknown as { locale: string; q: string; relevant: Record<string, number> }[];
    expect(queries.length).toBeGreaterThanOrEqual(40);
    expect(new Set(queries.map((q) => q.locale))).toEqual(new Set(LOCALES));
    const scores: Record<string, { search: number[]; baseline: number[] }> = {};
    const misses: string[] = [];
    for (const { locale, q, relevant } of queries) {
      const res = await get(h, `/api/p/${p.slug}/search?q=${encodeURIComponent(q)}&locale=${locale}&per_page=10`);
      expect(res.status).toBe(200);
      const ranked = res.json.data.map((d: { id: string }) => slugOf.get(d.id) ?? "");
      const s = ndcg(ranked, relevant);
      const b = ndcg(await baseline(locale, q), relevant);
      scores[locale] ??= { search: [], baseline: [] };
      scores[locale].search.push(s);
      scores[locale].baseline.push(b);
      if (s < 0.5) misses.push(`${locale} "${q}": ${s.toFixed(2)} [${ranked.join(", ")}]`);
    }
    const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
    const all = Object.values(scores);
    const search = mean(all.flatMap((s) => s.search));
    const base = mean(all.flatMap((s) => s.baseline));
    const report = Object.entries(scores).map(([l, s]) => `${l}: search ${mean(s.search).toFixed(3)}, baseline ${mean(s.baseline).toFixed(3)} (${s.search.length} queries)`);
    console.log(`nDCG@10 search ${search.toFixed(3)}, baseline ${base.toFixed(3)}\n${report.join("\n")}${misses.length ? `\nweak: ${misses.join("; ")}` : ""}`);
    expect(search).toBeGreaterThan(base);
    expect(search).toBeGreaterThanOrEqual(0.8);
    for (const s of all) expect(mean(s.search)).toBeGreaterThan(mean(s.baseline));
  });
});
