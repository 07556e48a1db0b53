// Issue 22 §3: an input field an operation does not declare is refused (400 invalid_input over
// REST, a tool error over MCP) naming each field, never dropped without a word; nothing is written.
import { afterAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { httpBindings } from "../src/core/operation";
import { OPERATIONS } from "../src/operations";
import { seedNode, seedProject, type TestResponse } from "./helpers";
import { mcpHarness } from "./mcp-harness";

const UNKNOWN = "zz_not_a_field";
const SOME_UUID = "00000000-0000-4000-8000-000000000001";

describe("undeclared input fields", async () => {
  const m = await mcpHarness();
  const { h } = m;
  afterAll(() => m.stop());
  const p = await seedProject(h);
  const node = await seedNode(h, p.slug, { slug: "page", title: "Page", blocks: [{ type: "text", data: { body: "x" } }] });
  const { token } = await m.token(p.slug, { name: "agent", scopes: ["content:read", "content:write", "ai:read", "model:write", "media:write", "theme:write"] });
  const client = await m.connect(token);

  /** Every row of every table, but the columns a request stamps on its credential. */
  const snapshot = async (): Promise<string> => {
    const tables = (await h.deps.db.execute(sql`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by 1`)) as unknown as
      | { rows: Array<{ table_name: string }> }
      | Array<{ table_name: string }>;
    const names = (Array.isArray(tables) ? tables : tables.rows).map((r) => r.table_name);
    const parts: string[] = [];
    for (const t of names) {
      const r = (await h.deps.db.execute(
        sql`select coalesce(string_agg(x, ',' order by x), '') as s from (select (to_jsonb(t) - 'last_used_at')::text as x from ${sql.identifier(t)} t) q`,
      )) as unknown as { rows: Array<{ s: string }> } | Array<{ s: string }>;
      parts.push(`${t}:${(Array.isArray(r) ? r : r.rows)[0]?.s}`);
    }
    return parts.join("\n");
  };

  const pathOf = (path: string): string =>
    path.replace(":ref", p.slug).replace(/:(\w+)/g, (_, name: string) => (name === "locale" ? "fr" : name === "id" && path.includes("/nodes/") ? node.id : SOME_UUID));
  const expectRefused = (res: TestResponse, what: string, fields: string[]): void => {
    expect([what, res.status, res.json?.error?.code]).toEqual([what, 400, "invalid_input"]);
    expect(res.json.error.details.fields).toEqual(fields);
    for (const f of fields) expect(res.json.error.message).toContain(f);
  };

  test("every admin route refuses an unknown query field, and a body route an unknown body field; nothing is written", async () => {
    const before = await snapshot();
    let routes = 0;
    for (const op of OPERATIONS) {
      for (const b of httpBindings(op)) {
        const url = pathOf(b.path);
        const what = `${b.method} ${b.path} (${op.name})`;
        const body = b.body !== undefined ? [] : ["POST", "PUT", "PATCH"].includes(b.method) ? {} : undefined;
        expectRefused(await h.request(b.method, `${url}?${UNKNOWN}=1`, { body }), `${what} query`, [UNKNOWN]);
        if (b.body === undefined && (b.method !== "GET" || b.bodyOrQuery)) {
          expectRefused(await h.request(b.method, url, { body: { [UNKNOWN]: true } }), `${what} body`, [UNKNOWN]);
        }
        routes += 1;
      }
    }
    expect(routes).toBeGreaterThan(45);
    expect(await snapshot()).toBe(before);
  });

  test("every MCP tool refuses an unknown argument with a tool error naming it; nothing is written", async () => {
    const before = await snapshot();
    const { tools } = await client.listTools();
    const declared = OPERATIONS.filter((op) => op.tool !== undefined).map((op) => op.name);
    expect(tools.map((t) => t.name).sort()).toEqual([...declared].sort());
    for (const name of declared) {
      // With the tool's own arguments valid (where it needs any) and without: the unknown field is named either way.
      const valid: Record<string, unknown> = name.includes("node") || name.includes("translation") || name === "reorder_blocks" || name === "discard_changes" ? { node_id: node.id } : {};
      for (const args of [{ [UNKNOWN]: 1 }, { ...valid, [UNKNOWN]: 1 }]) {
        const r = await client.callTool({ name, arguments: args });
        const text = (r.content as Array<{ text: string }>).map((c) => c.text).join("\n");
        expect([name, r.isError, text.startsWith("invalid_input:"), text.includes(UNKNOWN)]).toEqual([name, true, true, true]);
        expect(r.structuredContent).toBeUndefined();
      }
    }
    expect(await snapshot()).toBe(before);
  });

  test("create_node with status: 400 with the publish_node hint over REST and MCP, no node created", async () => {
    const before = await snapshot();
    const res = await h.request("POST", `/admin/p/${p.slug}/nodes`, { body: { slug: "launch", title: "Launch", status: "published" } });
    expectRefused(res, "create", ["status"]);
    expect(res.json.error.details.hints.status).toContain("publish_node");
    expect(res.json.error.message).toContain("POST /admin/p/{ref}/nodes/{id}/publish");
    const r = await client.callTool({ name: "create_node", arguments: { slug: "launch", title: "Launch", status: "published" } });
    expect(r.isError).toBe(true);
    const text = (r.content as Array<{ text: string }>)[0]?.text ?? "";
    expect(text).toContain("invalid_input: create_node does not take the field: status");
    expect(text).toContain("publish_node");
    expect(JSON.parse(text.slice(text.indexOf("(details: ") + 10, -1))).toEqual(res.json.error.details);
    expect(await snapshot()).toBe(before);
    expect((await h.request("GET", `/admin/p/${p.slug}/node?path=launch`)).status).toBe(404);
  });

  test("nested, read-only, misspelt and path fields are named with their hint", async () => {
    const before = await snapshot();
    const nested = await h.request("POST", `/admin/p/${p.slug}/nodes`, { body: { slug: "n", title: "N", blocks: [{ type: "text", content: { body: "lost" } }] } });
    expectRefused(nested, "nested", ["blocks.0.content"]);
    const asArray = await h.request("PUT", `/admin/p/${p.slug}/nodes/${node.id}/blocks`, { body: [{ type: "text", text: "lost" }] });
    expectRefused(asArray, "set_blocks body", ["0.text"]);
    const several = await h.request("PATCH", `/admin/p/${p.slug}/nodes/${node.id}`, { body: { title: "T", id: node.id, project_id: p.id, parentId: null, node_id: SOME_UUID } });
    expectRefused(several, "patch", ["id", "project_id", "parentId", "node_id"]);
    expect(several.json.error.details.hints).toEqual({
      id: "id is set by the service and is not writable",
      project_id: "project_id is set by the service and is not writable",
      parentId: "did you mean parent_id?",
      node_id: "given by the URL path (:id); the body may only repeat it",
    });
    const update = await client.callTool({ name: "update_node", arguments: { node_id: node.id, title: "T", status: "archived" } });
    expect((update.content as Array<{ text: string }>)[0]?.text).toContain("publish_node");
    const bad = await h.request("POST", `/admin/p/${p.slug}/nodes`, { body: { slug: "Not A Slug", title: "x" } });
    expect([bad.status, bad.json.error.code]).toEqual([400, "invalid_request"]); // schema failures keep their code
    expect(await snapshot()).toBe(before);
  });

  test("a PUT takes its representation back as read (read-only fields, the path's own values); a changed path value or a PATCH does not", async () => {
    const url = `/admin/p/${p.slug}/nodes/${node.id}/translations/fr`;
    expect((await h.request("PUT", url, { body: { meta: { title: "Bonjour" } } })).status).toBe(200);
    const read = await h.request("GET", url);
    expect(Object.keys(read.json.data)).toEqual(expect.arrayContaining(["id", "node_id", "locale", "created_at", "updated_at"]));
    const back = await h.request("PUT", url, { body: { ...read.json.data, meta: { title: "Salut" } } });
    expect([back.status, back.json.data.meta.title, back.json.data.id]).toEqual([200, "Salut", read.json.data.id]);
    const moved = await h.request("PUT", url, { body: { ...read.json.data, locale: "en" } });
    expectRefused(moved, "put with another locale", ["locale"]);
    const patch = await h.request("PATCH", `/admin/p/${p.slug}/nodes/${node.id}`, { body: { title: "T", created_at: node.created_at } });
    expectRefused(patch, "patch with created_at", ["created_at"]);
    expect((await h.request("GET", url)).json.data.meta.title).toBe("Salut");
  });

  test("the OpenAPI document names both 400 codes", async () => {
    const spec = (await h.request("GET", "/swagger/json", { key: null })).json;
    expect(spec.paths["/admin/p/{ref}/nodes"].post.responses["400"].description).toContain("invalid_input");
  });

  test("declared fields still work, paging and the DELETE body included", async () => {
    expect((await h.request("GET", `/admin/p/${p.slug}/nodes?page=1&per_page=10&status=draft`)).status).toBe(200);
    const t = await m.token(p.slug, { name: "gone" });
    expect((await h.request("DELETE", `/admin/p/${p.slug}/ai/mcp/tokens`, { body: { id: t.id } })).status).toBe(204);
    const created = await h.request("POST", `/admin/p/${p.slug}/nodes`, { body: { slug: "ok", title: "OK", seo: { description: "d", custom: "kept" }, blocks: [{ type: "t", data: { any: 1 } }] } });
    expect(created.status).toBe(201);
    expect(created.json.data.seo.custom).toBe("kept");
    const r = await client.callTool({ name: "get_node", arguments: { id: node.id }, _meta: { progressToken: undefined } });
    expect(r.isError).toBeFalsy();
  });
});
