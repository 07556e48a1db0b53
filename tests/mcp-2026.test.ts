// MCP 2026-07-28 on /mcp, with raw requests (every wire detail checked; tests/mcp-ai-sdk.test.ts drives a real client): server/discover, per-request
// _meta, header/body validation, resultType and caching hints, error ids and codes, and that the
// same endpoint still answers an initialize the 2025-11-25 way.
import { afterAll, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import fc from "fast-check";
import { nodes } from "../db/schema";
import { uuidv7 } from "../src/lib/ids";
import { seedNode, seedProject } from "./helpers";
import { INIT, mcpHarness, type RawResponse, TOOL_NAMES } from "./mcp-harness";

const V = "2026-07-28";
const META = { "io.modelcontextprotocol/protocolVersion": V, "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" } };
const NAMED: Record<string, string> = { "tools/call": "name", "prompts/get": "name", "resources/read": "uri" };

describe("MCP 2026-07-28 on /mcp", async () => {
  const m = await mcpHarness();
  afterAll(() => m.stop());
  const p = await seedProject(m.h);
  const other = await seedProject(m.h);
  const { token } = await m.token(p.slug);
  const home = await seedNode(m.h, p.slug, { slug: "home", title: "Home" }, true);
  const foreign = await seedNode(m.h, other.slug, { slug: "secret", title: "Secret" });
  let nextId = 1;

  /** A conformant 2026 request (headers mirrored from the body) with overrides. */
  async function modern(
    method: string,
    params: Record<string, unknown> = {},
    opts: { headers?: Record<string, string | null>; meta?: unknown; id?: number | string; token?: string | null } = {},
  ): Promise<RawResponse & { id: number | string }> {
    const id = opts.id ?? nextId++;
    const field = NAMED[method];
    const headers: Record<string, string> = { "mcp-protocol-version": V, "mcp-method": method };
    if (field && typeof params[field] === "string") headers["mcp-name"] = params[field] as string;
    for (const [k, v] of Object.entries(opts.headers ?? {})) {
      delete headers[k.toLowerCase()];
      if (v !== null) headers[k] = v;
    }
    const body = { jsonrpc: "2.0", id, method, params: opts.meta === undefined ? { ...params, _meta: META } : opts.meta === null ? params : { ...params, _meta: opts.meta } };
    const res = await m.post(body, { token: opts.token === undefined ? token : opts.token, headers });
    return { ...res, id };
  }

  test("server/discover: versions, truthful capabilities (no logging, no listChanged), server info in _meta, caching hints", async () => {
    const r = await modern("server/discover");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("application/json");
    expect(r.json.id).toBe(r.id);
    const result = r.json.result;
    expect(result.supportedVersions).toEqual(["2026-07-28", "2025-11-25"]);
    expect(result.capabilities).toEqual({ tools: {}, resources: {}, prompts: {}, completions: {} });
    expect(result._meta["io.modelcontextprotocol/serverInfo"]).toMatchObject({ name: "content-service", version: "0.1.0" });
    expect(result._meta["io.modelcontextprotocol/serverInfo"].icons[0].src).toStartWith("data:image/svg+xml;base64,");
    expect(result.instructions).toContain(p.slug);
    expect(result).toMatchObject({ resultType: "complete", ttlMs: 3_600_000, cacheScope: "private" });
    // clientInfo is optional in this revision.
    const noInfo = await modern("server/discover", {}, { meta: { "io.modelcontextprotocol/protocolVersion": V, "io.modelcontextprotocol/clientCapabilities": {} } });
    expect(noInfo.status).toBe(200);
    expect(noInfo.json.result.supportedVersions).toContain(V);
  });

  test("_meta missing, incomplete or malformed: 400 with -32602 and the request's id", async () => {
    const cases: unknown[] = [
      null,
      { "io.modelcontextprotocol/clientCapabilities": {} },
      { "io.modelcontextprotocol/protocolVersion": V },
      { "io.modelcontextprotocol/protocolVersion": V, "io.modelcontextprotocol/clientCapabilities": "all" },
      { "io.modelcontextprotocol/protocolVersion": V, "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/clientInfo": 7 },
    ];
    for (const meta of cases) {
      for (const method of ["server/discover", "tools/list"]) {
        const r = await modern(method, {}, { meta, id: `req-${nextId++}` });
        expect(r.status).toBe(400);
        expect(r.json).toMatchObject({ jsonrpc: "2.0", id: r.id, error: { code: -32602 } });
      }
    }
    const numeric = await modern("server/discover", {}, { meta: { "io.modelcontextprotocol/protocolVersion": 2026, "io.modelcontextprotocol/clientCapabilities": {} } });
    expect(numeric.status).toBe(400);
    expect(numeric.json).toMatchObject({ id: numeric.id, error: { code: -32602 } });
  });

  test("versions: unknown → 400 -32022 listing the supported ones; header and _meta disagreeing or header missing → 400 -32020", async () => {
    const meta = { ...META, "io.modelcontextprotocol/protocolVersion": "2099-01-01" };
    const unknown = await modern("tools/list", {}, { meta, headers: { "mcp-protocol-version": "2099-01-01" } });
    expect(unknown.status).toBe(400);
    expect(unknown.json).toEqual({
      jsonrpc: "2.0",
      id: unknown.id,
      error: { code: -32022, message: "Unsupported protocol version", data: { supported: ["2026-07-28", "2025-11-25"], requested: "2099-01-01" } },
    });

    const mismatch = await modern("tools/list", {}, { meta });
    expect(mismatch.status).toBe(400);
    expect(mismatch.json).toMatchObject({ id: mismatch.id, error: { code: -32020 } });

    const missing = await modern("tools/list", {}, { headers: { "mcp-protocol-version": null } });
    expect(missing.status).toBe(400);
    expect(missing.json).toMatchObject({ id: missing.id, error: { code: -32020 } });
  });

  test("Mcp-Method and Mcp-Name must match the body (names case-insensitive, values case-sensitive, OWS trimmed, Base64 decoded)", async () => {
    const reject = async (r: RawResponse & { id: number | string }) => {
      expect(r.status).toBe(400);
      expect(r.json).toMatchObject({ jsonrpc: "2.0", id: r.id, error: { code: -32020 } });
    };
    await reject(await modern("tools/list", {}, { headers: { "mcp-method": "prompts/list" } }));
    await reject(await modern("tools/list", {}, { headers: { "mcp-method": null } }));
    await reject(await modern("tools/list", {}, { headers: { "mcp-method": "TOOLS/LIST" } }));
    const call = { name: "get_project", arguments: {} };
    await reject(await modern("tools/call", call, { headers: { "mcp-name": "get_theme" } }));
    await reject(await modern("tools/call", call, { headers: { "mcp-name": null } }));
    await reject(await modern("tools/call", call, { headers: { "mcp-name": "=?base64?!!!?=" } }));
    const uri = `cms://${p.slug}/nodes/${home.id}`;
    await reject(await modern("resources/read", { uri }, { headers: { "mcp-name": `cms://${p.slug}/nodes/${uuidv7()}` } }));
    await reject(await modern("prompts/get", { name: "write_seo", arguments: { path: "home" } }, { headers: { "mcp-name": "translate_page" } }));

    const variants: Array<Record<string, string>> = [{ "MCP-METHOD": "tools/list" }, { "mcp-method": "  tools/list  " }];
    for (const headers of variants) {
      const ok = await modern("tools/list", {}, { headers });
      expect(ok.status).toBe(200);
      expect(ok.json.result.tools.length).toBe(TOOL_NAMES.length);
    }
    for (const name of ["  get_project ", `=?base64?${Buffer.from("get_project").toString("base64")}?=`]) {
      const ok = await modern("tools/call", call, { headers: { "mcp-name": name } });
      expect(ok.status).toBe(200);
      expect(ok.json.result.structuredContent.project.slug).toBe(p.slug);
    }
  });

  test("removed and unknown methods: 404 with -32601 and the request's id", async () => {
    for (const method of ["initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe", "unknown/method"]) {
      const r = await modern(method, {});
      expect(r.status).toBe(404);
      expect(r.json).toMatchObject({ jsonrpc: "2.0", id: r.id, error: { code: -32601 } });
    }
  });

  test("lists and reads carry resultType and caching hints: public for the static lists, private for the project's", async () => {
    const expected: Record<string, [number, string]> = {
      "tools/list": [3_600_000, "public"],
      "prompts/list": [3_600_000, "public"],
      "resources/templates/list": [3_600_000, "private"],
      "resources/list": [0, "private"],
    };
    for (const [method, [ttlMs, cacheScope]] of Object.entries(expected)) {
      const r = await modern(method);
      expect(r.status).toBe(200);
      expect(r.json.result).toMatchObject({ resultType: "complete", ttlMs, cacheScope });
    }
    const list = await modern("resources/list");
    expect(list.json.result.resources.map((x: { name: string }) => x.name)).toEqual(["model", "home"]);
    const uri = list.json.result.resources[1].uri;
    const read = await modern("resources/read", { uri });
    expect(read.json.result).toMatchObject({ resultType: "complete", ttlMs: 0, cacheScope: "private" });
    expect(JSON.parse(read.json.result.contents[0].text)).toMatchObject({ id: home.id, title: "Home" });
    const completion = await modern("completion/complete", { ref: { type: "ref/prompt", name: "write_seo" }, argument: { name: "path", value: "ho" } });
    expect(completion.json.result).toEqual({ completion: { values: ["home"], total: 1, hasMore: false }, resultType: "complete" });
  });

  test("tools/call writes through the same tools: the node is in the database, the result is complete", async () => {
    const r = await modern("tools/call", { name: "create_node", arguments: { slug: "from-2026", title: "Modern" } });
    expect(r.status).toBe(200);
    expect(r.json.result.resultType).toBe("complete");
    expect(r.json.result.isError ?? false).toBe(false);
    const id = r.json.result.structuredContent.node.id;
    const [row] = await m.h.deps.db
      .select()
      .from(nodes)
      .where(and(eq(nodes.id, id), eq(nodes.projectId, p.id)));
    expect(row).toMatchObject({ slug: "from-2026", title: "Modern", status: "draft" });
    // An unknown tool is invalid params, with the id.
    const unknown = await modern("tools/call", { name: "drop_database", arguments: {} });
    expect(unknown.json).toMatchObject({ id: unknown.id, error: { code: -32602 } });
  });

  test("an unknown resource, or another project's, is -32602 with the uri (this revision's code)", async () => {
    for (const uri of [`cms://${p.slug}/nodes/${uuidv7()}`, `cms://${other.slug}/nodes/${foreign.id}`, `cms://${p.slug}/paths/nowhere`, "https://example.com/x"]) {
      const r = await modern("resources/read", { uri });
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ id: r.id, error: { code: -32602, data: { uri } } });
      expect(r.text).not.toContain("Secret");
    }
  });

  test("without a bearer: 401 with the resource metadata; a notification: 202; GET and DELETE: 405", async () => {
    const anon = await modern("server/discover", {}, { token: null });
    expect(anon.status).toBe(401);
    expect(anon.headers.get("www-authenticate")).toContain("resource_metadata=");
    const note = await m.post(
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1, _meta: META } },
      { token, headers: { "mcp-protocol-version": V, "mcp-method": "notifications/cancelled" } },
    );
    expect(note.status).toBe(202);
    expect(note.text).toBe("");
    for (const method of ["GET", "DELETE"]) {
      const res = await fetch(m.url, { method, headers: { authorization: `Bearer ${token}`, "mcp-protocol-version": V } });
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("POST");
    }
  });

  test("fuzzed _meta, headers and methods: always a JSON-RPC answer with the request's id, never a 500, never another project's data", async () => {
    const version = fc.oneof(fc.constant(V), fc.constant("2025-11-25"), fc.string({ maxLength: 12 }), fc.integer(), fc.constant(null));
    const meta = fc.option(
      fc.record(
        {
          "io.modelcontextprotocol/protocolVersion": version,
          "io.modelcontextprotocol/clientCapabilities": fc.oneof(fc.constant({}), fc.constant([]), fc.string({ maxLength: 5 }), fc.constant(null)),
          "io.modelcontextprotocol/clientInfo": fc.oneof(fc.constant({ name: "x", version: "1" }), fc.integer()),
        },
        { requiredKeys: [] },
      ),
      { nil: null },
    );
    const method = fc.constantFrom("server/discover", "tools/list", "tools/call", "resources/read", "prompts/get", "completion/complete", "initialize", "ping", "x/y");
    const header = fc.option(
      fc.oneof(
        fc.constant(V),
        fc.string({ maxLength: 20 }).filter((h) => /^[\x21-\x7e]*$/.test(h)),
      ),
      { nil: null },
    );
    await fc.assert(
      fc.asyncProperty(meta, method, header, header, header, fc.oneof(fc.integer({ min: 1 }), fc.uuid()), async (meta, method, pv, mm, mn, id) => {
        const params = method === "tools/call" ? { name: "get_project", arguments: {} } : method === "resources/read" ? { uri: `cms://${other.slug}/nodes/${foreign.id}` } : {};
        const r = await modern(method, params, { meta, id, headers: { "mcp-protocol-version": pv, "mcp-method": mm ?? method, "mcp-name": mn } });
        expect(r.status).not.toBe(500);
        if (r.status === 401 || r.status === 403) throw new Error(`unexpected ${r.status}`);
        expect([200, 202, 400, 404]).toContain(r.status);
        if (r.status !== 202) {
          expect(r.json.jsonrpc).toBe("2.0");
          expect(r.json.id).toBe(id);
        }
        expect(r.text).not.toContain("Secret");
      }),
      { numRuns: 150 },
    );
  });

  test("the same endpoint still speaks 2025-11-25 after initialize, with logging", async () => {
    const init = await m.post(INIT("2025-11-25"), { token });
    expect(init.status).toBe(200);
    expect(init.json.result.protocolVersion).toBe("2025-11-25");
    expect(init.json.result.capabilities).toEqual({ tools: {}, resources: {}, prompts: {}, completions: {}, logging: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } });
    const list = await m.post({ jsonrpc: "2.0", id: 9, method: "tools/list" }, { token, headers: { "mcp-protocol-version": "2025-11-25" } });
    expect(list.json.result.tools.length).toBe(TOOL_NAMES.length);
    expect(list.json.result.resultType).toBeUndefined();
    expect(list.json.result.ttlMs).toBeUndefined();
    // A 2025-11-25 request ignores a stray 2026 header only when _meta says 2025: here _meta decides.
    const legacyMeta = await m.post({ jsonrpc: "2.0", id: 10, method: "ping", params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2025-11-25" } } }, { token });
    expect(legacyMeta.json).toEqual({ jsonrpc: "2.0", id: 10, result: {} });
  });
});
