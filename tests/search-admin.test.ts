// The admin search (GET /admin/p/{ref}/search) and the MCP tool search_content: one declared
// operation (src/search/operations.ts). Drafts included by default, each hit with its status and a
// resource URI the agent reads next. PGlite and PostgreSQL alike.
import { afterAll, describe, expect, test } from "bun:test";
import { transition, translate } from "./delivery.helpers";
import { keyWith, seedNode, seedProject } from "./helpers";
import { call, mcpHarness } from "./mcp-harness";

describe("search: admin and MCP", async () => {
  const m = await mcpHarness();
  const h = m.h;
  afterAll(() => m.stop());
  const p = await seedProject(h, { locales: ["en", "fr"] });
  const q = await seedProject(h, { locales: ["en"] });
  const published = await seedNode(h, p.slug, { slug: "tariffs", title: "Tariffs and pricing" }, true);
  const draft = await seedNode(h, p.slug, { slug: "draft", title: "Pricing draft", blocks: [{ type: "text", data: { body: "Unreleased pricing" } }] });
  const changed = await seedNode(h, p.slug, { slug: "changed", title: "Old title" }, true);
  expect((await h.request("PATCH", `/admin/p/${p.slug}/nodes/${changed.id}`, { body: { title: "Pricing changes" } })).status).toBe(200);
  const archived = await seedNode(h, p.slug, { slug: "gone", title: "Pricing archive" }, true);
  await transition(h, p.slug, archived.id, "archive");
  await translate(h, p.slug, published.id, "fr", { meta: { title: "Tarifs et prix", slug: "tarifs" }, status: "draft" });
  const foreign = await seedNode(h, q.slug, { slug: "pricing", title: "Pricing elsewhere" }, true);

  test("GET /admin/p/{ref}/search: drafts included, each hit with its status and state", async () => {
    const res = await h.request("GET", `/admin/p/${p.slug}/search?query=pricing`);
    expect(res.status).toBe(200);
    const byId = new Map(res.json.data.map((d: any) => [d.id, d]));
    expect([...byId.keys()].sort()).toEqual([published.id, draft.id, changed.id, archived.id].sort());
    expect(byId.get(draft.id)).toMatchObject({ status: "draft", state: "draft", path: "draft", uri: `cms://${p.slug}/nodes/${draft.id}` });
    expect(byId.get(changed.id)).toMatchObject({ status: "published", state: "changed", title: "Pricing changes" });
    expect(byId.get(archived.id)).toMatchObject({ status: "archived", state: "archived" });
    expect(res.json).toMatchObject({ total: 4, page: 1, per_page: 10, fuzzy: false });
    expect(byId.has(foreign.id)).toBe(false);
  });

  test("include_drafts=false: what readers see; a draft translation under its own locale", async () => {
    const res = await h.request("GET", `/admin/p/${p.slug}/search?query=pricing&include_drafts=false`);
    expect(res.status).toBe(200);
    expect(res.json.data.map((d: any) => d.id)).toEqual([published.id]);
    const fr = await h.request("GET", `/admin/p/${p.slug}/search?query=tarifs&locale=fr`);
    expect(fr.json.data).toEqual([expect.objectContaining({ id: published.id, locale: "fr", path: "tarifs", title: "Tarifs et prix" })]);
    expect((await h.request("GET", `/admin/p/${p.slug}/search?query=tarifs&locale=fr&include_drafts=false`)).json.data).toEqual([]);
    expect((await h.request("GET", `/admin/p/${p.slug}/search?query=x&locale=zz`)).status).toBe(400);
    expect((await h.request("GET", `/admin/p/${p.slug}/search?query=x&limit=51`)).status).toBe(400);
  });

  test("needs content:read; another project's key sees nothing of it", async () => {
    const none = await keyWith(h, ["projects:read"], [p.id]);
    expect((await h.request("GET", `/admin/p/${p.slug}/search?query=pricing`, { key: none })).status).toBe(403);
    const otherKey = await keyWith(h, ["content:read"], [q.id]);
    expect((await h.request("GET", `/admin/p/${p.slug}/search?query=pricing`, { key: otherKey })).status).toBe(404);
    const reader = await keyWith(h, ["content:read"], [p.id]);
    expect((await h.request("GET", `/admin/p/${p.slug}/search?query=pricing`, { key: reader })).status).toBe(200);
  });

  test("MCP search_content through the SDK client: hits with snippets and node URIs the agent reads next", async () => {
    const { token } = await m.token(p.slug, { name: "searcher", scopes: ["content:read"] });
    const client = await m.connect(token);
    const tools = await client.listTools();
    const tool = tools.tools.find((t) => t.name === "search_content");
    expect(tool?.annotations?.readOnlyHint).toBe(true);
    const out = await call(client, "search_content", { query: "unreleased" });
    expect(out.hits).toEqual([expect.objectContaining({ id: draft.id, status: "draft", uri: `cms://${p.slug}/nodes/${draft.id}`, snippet: "<mark>Unreleased</mark> pricing" })]);
    // The second call: the page itself.
    const read = await client.readResource({ uri: out.hits[0].uri });
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toMatchObject({ id: draft.id, title: "Pricing draft" });
    const published_only = await call(client, "search_content", { query: "pricing", include_drafts: false, limit: 5 });
    expect(published_only.hits.map((x: any) => x.id)).toEqual([published.id]);
    expect(published_only).toMatchObject({ total: 1, per_page: 5 });
  });
});
