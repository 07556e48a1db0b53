// Every paginated list bounds page and per_page the same way (src/lib/paging.ts): admin, delivery,
// MCP tools and resource cursors. Out of range or malformed → 400 invalid_request (a tool error over
// MCP) naming the limit, never 500; delivery alone clamps a larger per_page (decisions.md).
import { afterAll, describe, expect, test } from "bun:test";
import { MAX_PAGE, MAX_PER_PAGE } from "../src/lib/paging";
import { seedNode, seedProject } from "./helpers";
import { call, mcpHarness } from "./mcp-harness";

const HUGE = ["18446744073709551616", "1e300", "9".repeat(400), String(MAX_PAGE + 1), "9007199254740993"];
const MALFORMED = ["0", "-1", "abc", "1.5", "0x10", "1e3", "", " "];
const PAGE_LIMIT = { code: "invalid_request", message: `page must be an integer from 1 to ${MAX_PAGE}`, details: { field: "page", minimum: 1, maximum: MAX_PAGE } };
const PER_PAGE_LIMIT = { code: "invalid_request", message: `per_page must be an integer from 1 to ${MAX_PER_PAGE}`, details: { field: "per_page", minimum: 1, maximum: MAX_PER_PAGE } };

describe("one paging bound for every list", async () => {
  const m = await mcpHarness();
  const { h } = m;
  afterAll(() => m.stop());
  const p = await seedProject(h);
  const col = await seedNode(h, p.slug, { slug: "blog", type: "collection" }, true);
  for (let i = 0; i < 3; i++) await seedNode(h, p.slug, { slug: `post-${i}`, parent_id: col.id }, true);
  const { token } = await m.token(p.slug);
  const client = await m.connect(token);

  /** A tools/call sent as raw JSON text, so a number literal reaches the server exactly as written. */
  const rawTool = async (name: string, argsJson: string): Promise<{ isError: boolean; text: string }> => {
    const res = await m.post(null, {
      token,
      headers: { "mcp-protocol-version": "2025-06-18" },
      raw: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"${name}","arguments":${argsJson}}}`,
    });
    expect(res.status).toBe(200);
    const result = res.json.result;
    return { isError: result.isError === true, text: result.content.map((c: { text: string }) => c.text).join(" ") };
  };

  test("admin node list: huge or malformed page and per_page are 400 naming the limit", async () => {
    for (const v of [...HUGE, ...MALFORMED]) {
      const res = await h.request("GET", `/admin/p/${p.slug}/nodes?page=${encodeURIComponent(v)}`);
      expect({ v, status: res.status, error: res.json?.error }).toEqual({ v, status: 400, error: PAGE_LIMIT });
    }
    for (const v of [...HUGE, ...MALFORMED, "101", "500"]) {
      const res = await h.request("GET", `/admin/p/${p.slug}/nodes?per_page=${encodeURIComponent(v)}`);
      expect({ v, status: res.status, error: res.json?.error }).toEqual({ v, status: 400, error: PER_PAGE_LIMIT });
    }
  });

  test("admin node list: the bounds themselves are served", async () => {
    const last = await h.request("GET", `/admin/p/${p.slug}/nodes?page=${MAX_PAGE}&per_page=${MAX_PER_PAGE}`);
    expect(last.status).toBe(200);
    expect(last.json).toMatchObject({ data: [], total: 4, page: MAX_PAGE, per_page: MAX_PER_PAGE });
    const first = await h.request("GET", `/admin/p/${p.slug}/nodes?page=1&per_page=1`);
    expect(first.json).toMatchObject({ total: 4, page: 1, per_page: 1 });
    expect(first.json.data).toHaveLength(1);
    expect((await h.request("GET", `/admin/p/${p.slug}/nodes`)).json).toMatchObject({ page: 1, per_page: 50 });
  });

  test("delivery entries: page bounded the same way; per_page clamped above the limit, 400 below or malformed", async () => {
    const entries = (q: string) => h.request("GET", `/api/p/${p.slug}/entries?collection=blog&${q}`, { key: null });
    for (const v of [...HUGE, ...MALFORMED]) {
      const res = await entries(`page=${encodeURIComponent(v)}`);
      expect({ v, status: res.status, error: res.json?.error }).toEqual({ v, status: 400, error: PAGE_LIMIT });
    }
    for (const v of MALFORMED) {
      const res = await entries(`per_page=${encodeURIComponent(v)}`);
      expect({ v, status: res.status, error: res.json?.error }).toEqual({ v, status: 400, error: PER_PAGE_LIMIT });
    }
    for (const v of ["101", "18446744073709551616", "9".repeat(400)]) {
      const res = await entries(`per_page=${v}`);
      expect({ v, status: res.status, per_page: res.json.per_page, n: res.json.data?.length }).toEqual({ v, status: 200, per_page: MAX_PER_PAGE, n: 3 });
    }
    expect((await entries(`page=${MAX_PAGE}`)).json).toEqual({ data: [], total: 3, page: MAX_PAGE, per_page: 20 });
  });

  test("MCP list_nodes and list_entries: the same bound, as a tool error naming the limit", async () => {
    for (const tool of ["list_nodes", "list_entries"]) {
      const extra = tool === "list_entries" ? `"collection":"blog",` : "";
      for (const v of ["18446744073709551616", "1e300", String(MAX_PAGE + 1), "0", "1.5"]) {
        const r = await rawTool(tool, `{${extra}"page":${v}}`);
        expect({ tool, v, isError: r.isError, limit: r.text.includes(PAGE_LIMIT.message) }).toEqual({ tool, v, isError: true, limit: true });
      }
      for (const v of ["18446744073709551616", "1e300", "101", "0"]) {
        const r = await rawTool(tool, `{${extra}"per_page":${v}}`);
        expect({ tool, v, isError: r.isError, limit: r.text.includes(PER_PAGE_LIMIT.message) }).toEqual({ tool, v, isError: true, limit: true });
      }
      const args = tool === "list_entries" ? { collection: "blog" } : {};
      const last = await call(client, tool, { ...args, page: MAX_PAGE, per_page: MAX_PER_PAGE });
      expect(last).toMatchObject({ page: MAX_PAGE, per_page: MAX_PER_PAGE });
    }
  });

  test("MCP resources/list: a cursor past the last page is refused, the last page is served", async () => {
    const cursor = (page: number): string => Buffer.from(JSON.stringify({ p: page })).toString("base64url");
    const past = await m.post({ jsonrpc: "2.0", id: 3, method: "resources/list", params: { cursor: cursor(MAX_PAGE + 1) } }, { token, headers: { "mcp-protocol-version": "2025-06-18" } });
    expect(past.json.error).toMatchObject({ code: -32602 });
    const last = await client.listResources({ cursor: cursor(MAX_PAGE) });
    expect(last.resources).toEqual([]);
    expect(last.nextCursor).toBeUndefined();
  });
});
