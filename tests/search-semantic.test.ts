// Semantic search (issue 40, src/search/embedder.ts, hybrid.ts): a project's own embeddings
// provider against a loopback vendor (tests/fake-vendors.ts: a hashed bag of words where
// "automobile" and "car" are one meaning), the derived outbox, the daily cap, the query cache, and
// keyword results unchanged without a provider. Runs on PGlite and on PostgreSQL (DATABASE_URL).
import { afterAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { rows } from "../src/lib/json";
import { embedPending } from "../src/search/embedder";
import { get, transition } from "./delivery.helpers";
import { startFakeVendors } from "./fake-vendors";
import { harness, seedNode, seedProject } from "./helpers";

describe("search: semantic (hybrid) mode", async () => {
  const vendors = await startFakeVendors();
  afterAll(() => vendors.stop());
  const h = await harness({ AI_ALLOW_PRIVATE_URLS: "true" });
  const db = h.deps.db;
  const embedCalls = (): number => vendors.requests.filter((r) => r.path.endsWith("/embeddings")).length;
  const provider = async (ref: string, kind: string, scenario = "ok"): Promise<string> => {
    const base = kind === "groq" || kind === "anthropic" ? vendors.base("ok") : vendors.vendorBase(kind as "openai", scenario as "ok");
    const res = await h.request("POST", `/admin/p/${ref}/ai/providers`, { body: { name: `${kind} ${scenario}`, kind, base_url: base, api_key: "sk-test-0123456789abcdef" } });
    expect(res.status).toBe(201);
    return res.json.data.id;
  };
  const setSemantic = (ref: string, body: Record<string, unknown>) => h.request("PUT", `/admin/p/${ref}/search/semantic`, { body });
  const search = async (ref: string, query: string): Promise<any> => {
    const res = await get(h, `/api/p/${ref}/search?${query}`);
    expect(res.status).toBe(200);
    return res.json;
  };
  const ids = (body: any): string[] => body.data.map((d: any) => d.id);
  const vectorCount = async (projectId: string): Promise<number> =>
    Number(rows<{ n: number }>(await db.execute(sql`select count(*)::int as n from search_vectors where project_id = ${projectId}`))[0]?.n);

  const p = await seedProject(h, { locales: ["en"] });
  const car = await seedNode(h, p.slug, { slug: "repairs", title: "Car repairs", type: "page", blocks: [{ type: "text", data: { body: "We fix your car quickly." } }] }, true);
  const bikes = await seedNode(h, p.slug, { slug: "bikes", title: "Bicycle shop", type: "page", blocks: [{ type: "text", data: { body: "Bicycles and helmets for riders." } }] }, true);
  const draft = await seedNode(h, p.slug, { slug: "draft", title: "Car draft", type: "page" });
  const other = await seedProject(h, { locales: ["en"] });
  const foreign = await seedNode(h, other.slug, { slug: "cars", title: "Car dealer", type: "page", blocks: [{ type: "text", data: { body: "Car car car." } }] }, true);

  test("without a provider: keyword results unchanged, mode=hybrid answers the keyword search", async () => {
    const plain = await search(p.slug, "q=bicycle");
    expect(ids(plain)).toEqual([bikes.id]);
    expect(plain.mode).toBeUndefined();
    const hybrid = await search(p.slug, "q=bicycle&mode=hybrid");
    const { mode, semantic, ...rest } = hybrid;
    expect({ mode, semantic }).toEqual({ mode: "keyword", semantic: "off" });
    expect(rest).toEqual(plain);
    expect(ids(await search(p.slug, "q=automobile&mode=hybrid"))).toEqual([]);
    expect((await get(h, `/api/p/${p.slug}/search?q=x&mode=vector`)).status).toBe(400);
    expect(embedCalls()).toBe(0);
  });

  test("a provider kind without embeddings is refused; another project's provider is 404", async () => {
    const groq = await provider(p.slug, "groq");
    const res = await setSemantic(p.slug, { provider_id: groq });
    expect(res.status).toBe(400);
    expect(res.json.error.details.field).toBe("provider_id");
    const anthropic = await provider(p.slug, "anthropic");
    expect((await setSemantic(p.slug, { provider_id: anthropic })).status).toBe(400);
    const theirs = await provider(other.slug, "openai");
    expect((await setSemantic(p.slug, { provider_id: theirs })).status).toBe(404);
    expect((await h.request("GET", `/admin/p/${p.slug}/search/semantic`)).json.data.semantic).toBeNull();
  });

  test("published pages are embedded once; hybrid finds a page by meaning; drafts and other projects never", async () => {
    const id = await provider(p.slug, "openai");
    const set = await setSemantic(p.slug, { provider_id: id, daily_cap: 50 });
    expect(set.status).toBe(200);
    expect(set.json.data).toMatchObject({ semantic: { kind: "openai", model: "text-embedding-3-small", daily_cap: 50, vectors: 0, pending: 2 }, vector_engine: "memory" });
    expect(set.json.data.embedding_kinds).toEqual(["openai", "gemini", "mistral", "openrouter"]);
    // The other project embeds its own pages with its own key.
    await setSemantic(other.slug, { provider_id: await provider(other.slug, "mistral") });

    // Each project's look (the database may hold other runs' projects).
    expect(await embedPending(h.deps, { projectId: p.id })).toMatchObject({ embedded: 2, calls: 1, failed: 0 });
    expect(await embedPending(h.deps, { projectId: other.id })).toMatchObject({ embedded: 1, calls: 1, failed: 0 });
    const sent = vendors.requests.filter((r) => r.path.endsWith("/embeddings"));
    expect(sent.find((r) => r.vendor === "openai")?.body).toMatchObject({ model: "text-embedding-3-small", dimensions: 1024 });
    expect(sent.find((r) => r.vendor === "mistral")?.body.dimensions).toBeUndefined();
    // The key went in the header, never stored in clear or logged.
    expect(sent[0]?.headers.authorization).toBe("Bearer sk-test-0123456789abcdef");
    expect(h.logs.join("\n")).not.toContain("sk-test-0123456789abcdef");
    const stored = rows<{ dimensions: number; model: string; bytes: number }>(
      await db.execute(sql`select dimensions, model, length(embedding)::int as bytes from search_vectors where node_id = ${car.id}`),
    );
    expect(stored).toEqual([{ dimensions: 1024, model: "text-embedding-3-small", bytes: 4096 }]);

    // "automobile" is in no page: the keyword search finds nothing, the hybrid one the car page.
    expect(ids(await search(p.slug, "q=automobile"))).toEqual([]);
    const hybrid = await search(p.slug, "q=automobile&mode=hybrid");
    expect(hybrid).toMatchObject({ mode: "hybrid", total: 1, page: 1, per_page: 20 });
    expect(hybrid.semantic).toBeUndefined();
    expect(hybrid.data).toEqual([expect.objectContaining({ id: car.id, path: "repairs", title: "Car repairs", type: "page", locale: "en" })]);
    expect(hybrid.data[0].snippet).toBe("We fix your car quickly.");
    expect(ids(hybrid)).not.toContain(foreign.id);
    expect(ids(hybrid)).not.toContain(draft.id);
    // Keyword and vector hits fused: the keyword hit stays first.
    const both = await search(p.slug, "q=bicycle%20automobile&mode=hybrid");
    expect(ids(both).sort()).toEqual([bikes.id, car.id].sort());

    // Nothing changed: no call.
    expect((await embedPending(h.deps, { projectId: p.id })).calls).toBe(0);
  });

  test("unchanged text is never embedded twice; changed text is", async () => {
    const before = embedCalls();
    // The index row rewritten with the same text (as a publish of the same words would).
    await db.execute(sql`update search_documents set title = title where node_id = ${car.id} and published`);
    const again = await embedPending(h.deps, { projectId: p.id });
    expect(again).toMatchObject({ calls: 0, unchanged: 1, embedded: 0 });
    expect(embedCalls()).toBe(before);
    const res = await h.request("PATCH", `/admin/p/${p.slug}/nodes/${bikes.id}`, { body: { title: "Bicycle and scooter shop" } });
    expect(res.status).toBe(200);
    await transition(h, p.slug, bikes.id, "publish");
    expect(await embedPending(h.deps, { projectId: p.id })).toMatchObject({ calls: 1, embedded: 1 });
  });

  test("a repeated query's vector comes from the cache", async () => {
    const before = embedCalls();
    await search(p.slug, "q=vehicle&mode=hybrid");
    expect(embedCalls()).toBe(before + 1);
    // Another URL (no cached answer), the same query text: no call.
    const again = await search(p.slug, "q=vehicle&mode=hybrid&per_page=5");
    expect(ids(again)).toEqual([car.id]);
    expect(embedCalls()).toBe(before + 1);
  });

  test("an unpublished page is never found by its vector, and its vector is deleted", async () => {
    await transition(h, p.slug, car.id, "unpublish");
    // At the commit, before the embedder looks.
    expect(ids(await search(p.slug, "q=automobile&mode=hybrid"))).toEqual([]);
    const report = await embedPending(h.deps, { projectId: p.id });
    expect(report.deleted).toBe(1);
    expect(rows(await db.execute(sql`select 1 from search_vectors where node_id = ${car.id}`))).toEqual([]);
    await transition(h, p.slug, car.id, "publish");
    expect((await embedPending(h.deps, { projectId: p.id })).embedded).toBe(1);
    expect(ids(await search(p.slug, "q=automobile&mode=hybrid&page=1"))).toEqual([car.id]);
  });

  test("the daily cap stops calls; hybrid then answers keyword-only, flagged", async () => {
    const status = (await h.request("GET", `/admin/p/${p.slug}/search/semantic`)).json.data.semantic;
    expect(status.calls_today).toBeGreaterThan(0);
    await setSemantic(p.slug, { provider_id: status.provider_id, daily_cap: status.calls_today });
    const before = embedCalls();
    await seedNode(h, p.slug, { slug: "motorcar", title: "Motorcar museum", type: "page" }, true);
    const report = await embedPending(h.deps, { projectId: p.id });
    expect(report).toMatchObject({ calls: 0, embedded: 0, capped: [p.id] });
    const capped = await search(p.slug, "q=affordable%20motorcar&mode=hybrid");
    expect(capped).toMatchObject({ mode: "keyword", semantic: "daily_cap" });
    expect(embedCalls()).toBe(before);
    // A cached query vector needs no call: still hybrid.
    expect((await search(p.slug, "q=vehicle&mode=hybrid&per_page=7")).mode).toBe("hybrid");
    expect(rows(await db.execute(sql`select 1 from search_embed_leases where project_id = ${p.id} and leased_until is not null`))).toEqual([]);
  });

  test("a failing vendor backs off; turning semantic search off deletes the vectors", async () => {
    const q = await seedProject(h, { locales: ["en"] });
    await seedNode(h, q.slug, { slug: "a", title: "Car wash", type: "page" }, true);
    expect((await setSemantic(q.slug, { provider_id: await provider(q.slug, "openai", "500") })).status).toBe(200);
    expect(await embedPending(h.deps, { projectId: q.id })).toMatchObject({ calls: 1, failed: 1, embedded: 0 });
    const lease = rows<{ attempts: number; later: boolean; last_error: string }>(
      await db.execute(sql`select attempts, next_attempt_at > now() + interval '20 seconds' as later, last_error from search_embed_leases where project_id = ${q.id}`),
    );
    expect(lease).toEqual([{ attempts: 1, later: true, last_error: "provider_error" }]);
    // Not tried again before its time.
    expect((await embedPending(h.deps, { projectId: q.id })).calls).toBe(0);
    // A query the vendor cannot embed: the keyword answer, flagged.
    expect(await search(q.slug, "q=wash&mode=hybrid")).toMatchObject({ mode: "keyword", semantic: "unavailable", total: 1 });

    expect(await vectorCount(other.id)).toBe(1);
    expect((await setSemantic(other.slug, { provider_id: null })).json.data.semantic).toBeNull();
    expect(await vectorCount(other.id)).toBe(0);
  });

  test("the admin search and the MCP tool take mode hybrid on the published version", async () => {
    const res = await h.request("GET", `/admin/p/${p.slug}/search?query=automobile&mode=hybrid&include_drafts=false`);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ mode: "hybrid" });
    expect(res.json.data.map((x: any) => x.id)).toEqual([car.id]);
    expect((await h.request("GET", `/admin/p/${p.slug}/search?query=automobile&mode=hybrid`)).status).toBe(400);
  });
});
