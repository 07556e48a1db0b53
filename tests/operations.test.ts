// One operation, many transports: what an agent can do over /mcp an administrator can do over REST,
// with the same answer, the same validation and the same scope check (src/core/operation.ts).
import { afterAll, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { blocks, translations } from "../db/schema";
import { fakeTranslation, startFakeVendors } from "./fake-vendors";
import { keyWith, seedNode, seedProject } from "./helpers";
import { call, callError, mcpHarness } from "./mcp-harness";

const vendors = await startFakeVendors();

describe("operations: the same operation over REST and MCP", async () => {
  const m = await mcpHarness({ AI_ALLOW_PRIVATE_URLS: "true" });
  const { h } = m;
  afterAll(async () => {
    m.stop();
    await vendors.stop();
  });
  const p = await seedProject(h, { locales: ["en", "fr", "de"] });
  const other = await seedProject(h);
  await h.request("POST", `/admin/p/${p.slug}/ai/providers`, { body: { name: "v", kind: "openai", base_url: vendors.base("ok"), api_key: "sk-operations-test-1" } });
  const blog = await seedNode(h, p.slug, { slug: "blog", title: "Blog", type: "collection" });
  const post = await seedNode(h, p.slug, {
    slug: "post",
    title: "Post",
    parent_id: blog.id,
    blocks: [
      { type: "text", data: { body: "Plain prose here" } },
      { type: "quote", data: { text: "Second" } },
    ],
  });
  // Stored block data may hold a "__proto__" key (input validation drops it, older rows and imports
  // may not): reading it with [] would hand back Object.prototype to write the translation into.
  const PROTO_DATA = '{"__proto__": {"text": "Hello reader"}, "body": "Plain prose here"}';
  await h.deps.db
    .update(blocks)
    .set({ data: JSON.parse(PROTO_DATA) })
    .where(eq(blocks.id, post.blocks[0].id));
  const foreign = await seedNode(h, other.slug, { slug: "secret", title: "Secret" });
  const { token } = await m.token(p.slug);
  const client = await m.connect(token);
  const admin = (method: string, url: string, body?: unknown) => h.request(method, `/admin/p/${p.slug}${url}`, { body });

  test("translate_node over MCP and REST stores a draft and writes no prototype", async () => {
    const tool = await call(client, "translate_node", { node_id: post.id, locale: "de" });
    expect(({} as Record<string, unknown>).text).toBeUndefined();
    const rest = await admin("POST", `/nodes/${post.id}/translations/fr/translate`, {});
    expect(rest.status).toBe(200);
    expect(({} as Record<string, unknown>).text).toBeUndefined();
    const { translation, translated_fields, provider } = rest.json.data;
    expect(provider).toBe("openai");
    expect(translation).toMatchObject({ node_id: post.id, locale: "fr", status: "draft", meta: { title: fakeTranslation("Post") } });
    expect(translated_fields.map((f: { field: string }) => f.field)).toContain(`blocks.${post.blocks[0].id}.__proto__.text`);
    expect(Object.keys(tool).sort()).toEqual(Object.keys(rest.json.data).sort());
    expect(tool.translated_fields).toEqual(translated_fields);
    const [row] = await h.deps.db
      .select()
      .from(translations)
      .where(and(eq(translations.nodeId, post.id), eq(translations.locale, "fr")));
    const override = row?.blocks[post.blocks[0].id];
    expect(Object.getPrototypeOf(override)).toBe(Object.prototype);
    expect(JSON.parse(JSON.stringify(override))).toEqual(JSON.parse(`{"__proto__": {"text": "${fakeTranslation("Hello reader")}"}, "body": "${fakeTranslation("Plain prose here")}"}`));

    // The default locale, another project's node and a missing scope are refused alike on both.
    expect((await admin("POST", `/nodes/${post.id}/translations/en/translate`, {})).json.error.code).toBe("invalid_locale");
    expect(await callError(client, "translate_node", { node_id: post.id, locale: "en" })).toStartWith("invalid_locale:");
    expect((await admin("POST", `/nodes/${foreign.id}/translations/fr/translate`, {})).status).toBe(404);
    const readerKey = await keyWith(h, ["content:read", "ai:read"]);
    const denied = await h.request("POST", `/admin/p/${p.slug}/nodes/${post.id}/translations/fr/translate`, { key: readerKey, body: {} });
    expect(denied.json.error).toMatchObject({ code: "insufficient_scope", details: { required: "content:write" } });
  });

  test("the translated override merges over the base node as data; REST answers what get_node answers", async () => {
    const tool = await call(client, "get_node", { id: post.id, locale: "fr" });
    expect(({} as Record<string, unknown>).text).toBeUndefined();
    expect(tool.node.blocks[0].data.body).toBe(fakeTranslation("Plain prose here"));
    const rest = await admin("GET", `/node?id=${post.id}&locale=fr`);
    expect(rest.status).toBe(200);
    expect(rest.json.data).toMatchObject({ locale: "fr", translated: true, translation_status: "draft", title: fakeTranslation("Post") });
    expect(rest.json.data.blocks[1]).toEqual(tool.node.blocks[1]);
    const byPath = await admin("GET", "/node?path=blog");
    expect(byPath.json.data).toEqual((await call(client, "get_node", { path: "blog" })).node);
    expect(byPath.json.data).toMatchObject({ id: blog.id, locale: "en", translated: false, translation_status: null });
    expect((await admin("GET", `/node?id=${post.id}&path=blog/post`)).json.error.code).toBe("invalid_request");
    expect((await admin("GET", "/node?path=secret")).status).toBe(404);
  });

  test("entries and block order: REST answers what the tools answer", async () => {
    const rest = await admin("GET", "/entries?collection=blog&per_page=5");
    const tool = await call(client, "list_entries", { collection: "blog", per_page: 5 });
    expect(rest.json).toEqual({ data: tool.entries, collection: tool.collection, total: 1, page: 1, per_page: 5 });
    expect((await admin("GET", "/entries?collection=blog&page=0")).json.error.details).toEqual({ field: "page", minimum: 1, maximum: 100_000 });

    const reversed = [...post.blocks].reverse().map((b: { id: string }) => b.id);
    const put = await admin("PUT", `/nodes/${post.id}/blocks/order`, { block_ids: reversed });
    expect(put.status).toBe(200);
    expect(put.json.data.blocks.map((b: { id: string }) => b.id)).toEqual(reversed);
    const back = await call(client, "reorder_blocks", { node_id: post.id, block_ids: [...reversed].reverse() });
    expect(back.blocks.map((b: { id: string }) => b.id)).toEqual(post.blocks.map((b: { id: string }) => b.id));
  });

  test("validation answers name where the bad field came from; a body field never stands in for the URL's id", async () => {
    const bad = await admin("PUT", `/nodes/${post.id}/blocks/order`, { block_ids: "nope" });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({ code: "invalid_request", details: { field: "block_ids", errors: [{ in: "body", field: "block_ids" }] } });
    const query = await admin("GET", "/nodes?status=gone");
    expect(query.json.error.details.errors[0]).toMatchObject({ in: "query", field: "status" });
    const param = await admin("GET", "/nodes/not-a-uuid");
    expect(param.json.error.details.errors[0]).toMatchObject({ in: "params", field: "node_id" });
    const notObject = await admin("PATCH", `/nodes/${post.id}`, [1, 2]);
    expect(notObject.json.error.details.errors[0]).toMatchObject({ in: "body", field: null });

    const patched = await admin("PATCH", `/nodes/${post.id}`, { title: "Renamed", node_id: foreign.id });
    expect(patched.json.error).toMatchObject({ code: "invalid_input", details: { fields: ["node_id"], hints: { node_id: "given by the URL path (:id); the body may only repeat it" } } });
    expect((await admin("GET", `/nodes/${post.id}`)).json.data.title).toBe("Post");
    expect((await h.request("GET", `/admin/p/${other.slug}/nodes/${foreign.id}`)).json.data.title).toBe("Secret");
  });

  test("every tool is also an admin route (get_project is GET /admin/projects/{ref})", async () => {
    const spec = (await h.request("GET", "/swagger/json", { key: null })).json as { paths: Record<string, Record<string, { operationId?: string }>> };
    const served = new Set(Object.values(spec.paths).flatMap((ops) => Object.values(ops).map((o) => o.operationId?.replace(/^[a-z]+_/, ""))));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).filter((name) => !served.has(name))).toEqual(["get_project"]);
    expect(served.has("read_project")).toBe(true);
  });
});
