import { afterAll, describe, expect, test } from "bun:test";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { eq } from "drizzle-orm";
import { mcpTokens, nodes, oauthClients, oauthGrants, oauthTokens, projectMembers, users } from "../db/schema";
import { uuidv7 } from "../src/lib/ids";
import { ADMIN_SCOPES, MCP_SCOPES } from "../src/lib/scopes";
import { generateToken, hashToken } from "../src/lib/tokens";
import { BASE, seedNode, seedProject, waitFor } from "./helpers";
import { call, callError, INIT, mcpHarness, TOOL_NAMES } from "./mcp-harness";

const RESOURCE_METADATA = `${BASE}/.well-known/oauth-protected-resource/mcp`;

describe("MCP endpoint: transport, auth and JSON-RPC handling", async () => {
  const m = await mcpHarness();
  afterAll(() => m.stop());
  const p = await seedProject(m.h);
  const { token } = await m.token(p.slug);

  test("initialize through the SDK client: server info, instructions, capabilities, no session", async () => {
    const client = await m.connect(token);
    expect(client.getServerVersion()).toMatchObject({ name: "content-service" });
    expect(client.getInstructions()).toContain(p.slug);
    expect(client.getServerCapabilities()).toMatchObject({ tools: {}, resources: {} });
    const res = await m.post(INIT(), { token });
    expect(res.status).toBe(200);
    expect(res.headers.get("mcp-session-id")).toBeNull();
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(res.headers.get("cache-control")).toBe("no-store");
  });

  test("negotiates protocol versions 2025-06-18 and 2025-11-25; a later request may carry either header", async () => {
    for (const v of ["2025-06-18", "2025-11-25", "2025-03-26"]) {
      const res = await m.post(INIT(v), { token });
      expect(res.status).toBe(200);
      expect(res.json.result.protocolVersion).toBe(v);
      const list = await m.post({ jsonrpc: "2.0", id: 2, method: "tools/list" }, { token, headers: { "mcp-protocol-version": v } });
      expect(list.status).toBe(200);
      expect(list.json.result.tools.length).toBeGreaterThan(10);
    }
    const bad = await m.post({ jsonrpc: "2.0", id: 2, method: "tools/list" }, { token, headers: { "mcp-protocol-version": "1999-01-01" } });
    // A version no revision knows is answered the 2026-07-28 way: which versions are served, with the request's id.
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ id: 2, error: { code: -32022, data: { supported: ["2026-07-28", "2025-11-25"], requested: "1999-01-01" } } });
  });

  test("tools/list: every tool with a description naming its scope, an input schema and an output schema", async () => {
    const client = await m.connect(token);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
    for (const t of tools) {
      // "Requires scope: a, b." (every one needed) or "a or b." (any one): every scope named is a real one,
      // all of a list are MCP scopes, and of alternatives at least one is (webhook reads: projects:read or content:read).
      const named = /Requires scope: ([a-z:]+(?:(, | or )[a-z:]+)*)\.$/.exec(t.description ?? "");
      expect({ tool: t.name, named: Boolean(named) }).toEqual({ tool: t.name, named: true });
      const anyOf = named![2] === " or ";
      const scopes = named![1]!.split(anyOf ? " or " : ", ");
      expect({ tool: t.name, unknown: scopes.filter((s) => !(ADMIN_SCOPES as readonly string[]).includes(s)) }).toEqual({ tool: t.name, unknown: [] });
      const mcp = scopes.filter((s) => (MCP_SCOPES as readonly string[]).includes(s));
      expect({ tool: t.name, mcp: anyOf ? mcp.length > 0 : mcp.length === scopes.length }).toEqual({ tool: t.name, mcp: true });
      if (t.name === "list_webhooks" || t.name === "list_webhook_deliveries") expect(scopes).toEqual(["content:read", "projects:read"]);
      expect(t.inputSchema.type).toBe("object");
      expect(t.outputSchema?.type).toBe("object");
      // Reads (search_content too), and translate_text which stores nothing, are read-only.
      expect(t.annotations?.readOnlyHint).toBe(t.name.startsWith("get_") || t.name.startsWith("list_") || t.name === "search_content" || t.name === "translate_text");
    }
    const create = tools.find((t) => t.name === "create_node")!;
    expect(create.inputSchema.required).toEqual(expect.arrayContaining(["slug", "title"]));
  });

  test("no token, unknown token, wrong prefix: 401 with the protected resource metadata in WWW-Authenticate", async () => {
    const none = await m.post(INIT());
    expect(none.status).toBe(401);
    expect(none.json.error.code).toBe("unauthorized");
    expect(none.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${RESOURCE_METADATA}", scope="content:read content:write content:publish ai:read"`);
    for (const bad of ["cms_mcp_notarealtoken", "cms_ak_whatever", "garbage"]) {
      const res = await m.post(INIT(), { token: bad });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toContain(`resource_metadata="${RESOURCE_METADATA}"`);
      expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
    }
    // An admin key is not an MCP credential, even a root one.
    expect((await m.post(INIT(), { token: m.h.rootKey })).status).toBe(401);
    // The SDK client surfaces it as a 401.
    const err = await m.connect(null).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StreamableHTTPError);
    expect((err as StreamableHTTPError).code).toBe(401);
  });

  test("a revoked token stops working at once, also for a client already connected", async () => {
    const t = await m.token(p.slug, { name: "short-lived" });
    const client = await m.connect(t.token);
    expect((await call(client, "get_project")).project.slug).toBe(p.slug);
    const del = await m.h.request("DELETE", `/admin/p/${p.slug}/ai/mcp/tokens/${t.id}`);
    expect(del.status).toBe(204);
    const err = await client.callTool({ name: "get_project", arguments: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StreamableHTTPError);
    expect((err as StreamableHTTPError).code).toBe(401);
    expect((await m.post(INIT(), { token: t.token })).status).toBe(401);
  });

  test("an expired token is refused", async () => {
    const t = await m.token(p.slug, { name: "expiring", expires_at: new Date(Date.now() + 60_000).toISOString() });
    expect((await m.post(INIT(), { token: t.token })).status).toBe(200);
    await m.h.deps.db
      .update(mcpTokens)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(mcpTokens.id, t.id));
    expect((await m.post(INIT(), { token: t.token })).status).toBe(401);
  });

  test("an OAuth access token issued for this resource works; one for another resource or revoked does not", async () => {
    const db = m.h.deps.db;
    const userId = uuidv7();
    await db.insert(users).values({ id: userId, email: `u-${userId}@example.com`, passwordHash: "x", role: "member" });
    await db.insert(projectMembers).values({ projectId: p.id, userId, role: "editor" });
    const clientId = `client-${userId}`;
    await db.insert(oauthClients).values({ id: clientId, redirectUris: ["http://127.0.0.1/cb"], tokenEndpointAuthMethod: "none", grantTypes: ["authorization_code"], responseTypes: ["code"] });
    const grantId = uuidv7();
    await db.insert(oauthGrants).values({ id: grantId, clientId, userId, projectId: p.id, scopes: ["content:read"], resource: `${BASE}/mcp` });
    const mint = async (resource: string): Promise<string> => {
      const at = generateToken("cms_at_");
      await db.insert(oauthTokens).values({
        id: uuidv7(),
        tokenHash: hashToken(at),
        kind: "access",
        grantId,
        clientId,
        userId,
        projectId: p.id,
        scopes: ["content:read"],
        resource,
        expiresAt: new Date(Date.now() + 3_600_000),
      });
      return at;
    };
    const good = await mint(`${BASE}/mcp`);
    const client = await m.connect(good);
    expect((await call(client, "get_project")).project.id).toBe(p.id);
    // content:write is missing but the editor's role holds it: the MCP scope challenge (403) lets the client step up.
    const denied = await m.post({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "create_node", arguments: { slug: "x", title: "x" } } }, { token: good });
    expect(denied.status).toBe(403);
    expect(denied.headers.get("www-authenticate")).toContain('error="insufficient_scope", scope="content:read content:write"');
    expect((await m.post(INIT(), { token: await mint("https://elsewhere.example/mcp") })).status).toBe(401);
    await db.update(oauthGrants).set({ revokedAt: new Date() }).where(eq(oauthGrants.id, grantId));
    expect((await m.post(INIT(), { token: good })).status).toBe(401);
  });

  test("GET, DELETE and other methods: 405 with Allow: POST", async () => {
    for (const method of ["GET", "DELETE", "PUT", "PATCH"]) {
      const res = await fetch(m.url, { method, headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" } });
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("POST");
      expect((await res.json()).error.code).toBe("method_not_allowed");
    }
  });

  test("Origin: absent or allowed passes (with CORS headers), anything else is 403 before authentication", async () => {
    const ok = await m.post(INIT(), { token, headers: { origin: BASE } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe(BASE);
    for (const origin of ["https://evil.example", "null", "http://localhost:9999"]) {
      const res = await m.post(INIT(), { token, headers: { origin } });
      expect(res.status).toBe(403);
      expect(res.json.error.code).toBe("forbidden");
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
      expect((await m.post(INIT(), { headers: { origin } })).status).toBe(403);
    }
    const pre = await fetch(m.url, { method: "OPTIONS", headers: { origin: BASE, "access-control-request-method": "POST" } });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-methods")).toBe("POST");
    expect(pre.headers.get("access-control-allow-headers")).toContain("authorization");
    const preBad = await fetch(m.url, { method: "OPTIONS", headers: { origin: "https://evil.example" } });
    expect(preBad.status).toBe(403);
  });

  test("MCP_ALLOWED_ORIGINS replaces the default allow-list", async () => {
    const m2 = await mcpHarness({ MCP_ALLOWED_ORIGINS: "https://app.example, https://other.example/" });
    try {
      const p2 = await seedProject(m2.h);
      const t2 = await m2.token(p2.slug);
      expect((await m2.post(INIT(), { token: t2.token, headers: { origin: "https://other.example" } })).status).toBe(200);
      expect((await m2.post(INIT(), { token: t2.token, headers: { origin: BASE } })).status).toBe(403);
    } finally {
      m2.stop();
    }
  });

  test("Host header: PUBLIC_URL host and loopback names pass, other hosts are refused (DNS rebinding)", async () => {
    const handle = (host: string) =>
      m.h.app.handle(
        new Request(`${BASE}/mcp`, {
          method: "POST",
          headers: { host, authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: JSON.stringify(INIT()),
        }),
      );
    for (const host of ["localhost", "localhost:3000", "127.0.0.1:8080", "[::1]:1234"]) expect((await handle(host)).status).toBe(200);
    for (const host of ["evil.example", "evil.example:80", "localhost.evil.example", "10.0.0.5:3000"]) {
      const res = await handle(host);
      expect(res.status).toBe(403);
      expect((await res.json()).error.code).toBe("forbidden");
    }
  });

  test("malformed JSON is a JSON-RPC parse error (-32700), never a 500", async () => {
    for (const raw of ["{not json", "", "[1,", '{"jsonrpc":"2.0"'] as const) {
      const res = await m.post(null, { token, raw });
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
    }
    const deep = "[".repeat(100) + "]".repeat(100);
    const res = await m.post(null, { token, raw: deep });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe(-32700);
  });

  test("JSON that is not JSON-RPC, empty and oversized batches: Invalid Request (-32600)", async () => {
    for (const body of [{ hello: "world" }, 42, "x", { jsonrpc: "1.0", id: 1, method: "tools/list" }, []]) {
      const res = await m.post(body, { token });
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe(-32600);
    }
    const batch = Array.from({ length: 21 }, (_, i) => ({ jsonrpc: "2.0", id: i + 1, method: "tools/list" }));
    const big = await m.post(batch, { token });
    expect(big.status).toBe(400);
    expect(big.json.error.code).toBe(-32600);
    expect(big.json.error.message).toContain("20");
  });

  test("a small batch is answered with one response per request", async () => {
    const res = await m.post(
      [
        { jsonrpc: "2.0", id: "a", method: "tools/call", params: { name: "get_project", arguments: {} } },
        { jsonrpc: "2.0", id: "b", method: "ping" },
      ],
      { token, headers: { "mcp-protocol-version": "2025-03-26" } },
    );
    expect(res.status).toBe(200);
    expect(Array.isArray(res.json)).toBe(true);
    const byId = Object.fromEntries(res.json.map((r: any) => [r.id, r]));
    expect(byId.a.result.structuredContent.project.id).toBe(p.id);
    expect(byId.b.result).toEqual({});
  });

  test("unknown method (-32601), wrong params (-32602), unknown tool and bad arguments", async () => {
    const unknown = await m.post({ jsonrpc: "2.0", id: 7, method: "nodes/explode" }, { token });
    expect(unknown.status).toBe(200);
    expect(unknown.json).toMatchObject({ id: 7, error: { code: -32601 } });
    const noName = await m.post({ jsonrpc: "2.0", id: 8, method: "tools/call", params: { arguments: {} } }, { token });
    expect(noName.json).toMatchObject({ id: 8, error: { code: -32602 } });
    const unknownTool = await m.post({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "drop_database", arguments: {} } }, { token });
    expect(unknownTool.status).toBe(200);
    expect(unknownTool.json).toMatchObject({ id: 9, error: { code: -32602, message: "Unknown tool: drop_database" } });
    const badList = await m.post({ jsonrpc: "2.0", id: 11, method: "resources/read", params: { uri: 5 } }, { token });
    expect(badList.json).toMatchObject({ id: 11, error: { code: -32602 } });
    expect(badList.json.error.message).toContain("params.uri");
    // In a batch, the bad request gets its error and the good one its result.
    const mixed = await m.post(
      [
        { jsonrpc: "2.0", id: 1, method: "tools/call", params: {} },
        { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "get_project", arguments: {} } },
        { jsonrpc: "2.0", method: "notifications/initialized" },
      ],
      { token },
    );
    expect(mixed.status).toBe(200);
    const byId = Object.fromEntries(mixed.json.map((r: any) => [r.id, r]));
    expect(byId[1].error.code).toBe(-32602);
    expect(byId[2].result.structuredContent.project.id).toBe(p.id);
    expect(mixed.json).toHaveLength(2);
    const allBad = await m.post(
      [
        { jsonrpc: "2.0", id: 1, method: "tools/call", params: {} },
        { jsonrpc: "2.0", method: "notifications/initialized" },
      ],
      { token },
    );
    expect(allBad.status).toBe(200);
    expect(allBad.json).toEqual([expect.objectContaining({ id: 1, error: expect.objectContaining({ code: -32602 }) })]);
    const badArgs = await m.post({ jsonrpc: "2.0", id: 10, method: "tools/call", params: { name: "get_node", arguments: { id: 12 } } }, { token });
    expect(badArgs.json.result.isError).toBe(true);
    expect(badArgs.json.result.content[0].text).toContain("id");
  });

  test("notifications alone are accepted with 202 and no body", async () => {
    const res = await m.post({ jsonrpc: "2.0", method: "notifications/initialized" }, { token });
    expect(res.status).toBe(202);
    expect(res.text).toBe("");
  });

  test("wrong Accept is 406, wrong Content-Type 415 (from the SDK transport)", async () => {
    expect((await m.post(INIT(), { token, headers: { accept: "text/html" } })).status).toBe(406);
    const res = await m.post(null, { token, raw: JSON.stringify(INIT()), headers: { "content-type": "text/plain" } });
    expect(res.status).toBe(415);
  });

  test("a body over 1 MiB is refused with 413 in JSON-RPC form, with or without Content-Length", async () => {
    const huge = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get_project", arguments: { pad: "x".repeat(1024 * 1024) } } });
    const res = await m.post(null, { token, raw: huge });
    expect(res.status).toBe(413);
    expect(res.json).toMatchObject({ jsonrpc: "2.0", error: { code: -32600 } });
    const stream = new ReadableStream({
      start(c) {
        for (let i = 0; i < 12; i++) c.enqueue(new TextEncoder().encode("x".repeat(100 * 1024)));
        c.close();
      },
    });
    const chunked = await m.h.app.handle(
      new Request(`${BASE}/mcp`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: stream,
      }),
    );
    expect(chunked.status).toBe(413);
    expect((await chunked.json()).error.code).toBe(-32600);
  });

  test("a token can only see its own project", async () => {
    const other = await seedProject(m.h);
    const foreign = await seedNode(m.h, other.slug, { slug: "secret", title: "Secret" });
    const mine = await seedNode(m.h, p.slug, { slug: "mine" });
    const client = await m.connect(token);
    const listed = await call(client, "list_nodes");
    expect(listed.nodes.map((n: any) => n.id)).toContain(mine.id);
    expect(listed.nodes.map((n: any) => n.id)).not.toContain(foreign.id);
    for (const [tool, args] of [
      ["get_node", { id: foreign.id }],
      ["update_node", { node_id: foreign.id, title: "pwned" }],
      ["publish_node", { node_id: foreign.id }],
      ["archive_node", { node_id: foreign.id }],
      ["get_translation", { node_id: foreign.id, locale: "fr" }],
      ["upsert_translation", { node_id: foreign.id, locale: "fr", meta: { title: "x" } }],
      ["create_node", { slug: "child", title: "c", parent_id: foreign.id }],
    ] as const) {
      const text = await callError(client, tool, args);
      expect(text).toMatch(/^(not_found|invalid_request)/);
    }
    const [row] = await m.h.deps.db.select().from(nodes).where(eq(nodes.id, foreign.id));
    expect(row).toMatchObject({ title: "Secret", status: "draft" });
    const read = await client.readResource({ uri: `cms://${other.slug}/nodes/${foreign.id}` }).catch((e: unknown) => e);
    expect(String(read)).toContain("Resource not found");
    const read2 = await client.readResource({ uri: `cms://${p.slug}/nodes/${foreign.id}` }).catch((e: unknown) => e);
    expect(String(read2)).toContain("Resource not found");
  });

  test("a tool needing a scope the token lacks answers a tool error naming the scope", async () => {
    const reader = await m.token(p.slug, { name: "reader", scopes: ["content:read"] });
    const rc = await m.connect(reader.token);
    const text = await callError(rc, "create_node", { slug: "nope", title: "Nope" });
    expect(text).toContain("insufficient_scope");
    expect(text).toContain("content:write");
    expect(await m.h.deps.db.select().from(nodes).where(eq(nodes.path, "nope"))).toHaveLength(0);
    expect(await callError(rc, "translate_text", { text: "hi", to: "fr" })).toContain("ai:read");
    const translator = await m.token(p.slug, { name: "ai", scopes: ["ai:read"] });
    const ac = await m.connect(translator.token);
    expect(await callError(ac, "list_nodes")).toContain("content:read");
    expect(await callError(ac, "get_project")).toContain("content:read");
    const both = await callError(ac, "translate_node", { node_id: uuidv7(), locale: "fr" });
    expect(both).toContain("content:write");
    expect(both).not.toContain("ai:read scope");
    const denied = await ac.listResources().catch((e: unknown) => e);
    expect(String(denied)).toContain("content:read");
  });

  test("the request log shows /mcp answers with their real status and never the token", async () => {
    await m.post(INIT(), { token: "cms_mcp_definitelywrong", headers: { "x-request-id": "mcp-log-401" } });
    await m.post(null, { token, raw: "{oops", headers: { "x-request-id": "mcp-log-400" } });
    // The request log is written after the response.
    const logged = (id: string) => m.h.logs.map((l) => JSON.parse(l)).find((l) => l.msg === "request" && l.path === "/mcp" && l.request_id === id);
    expect((await waitFor(() => logged("mcp-log-401"), { what: "the 401's log line" })).status).toBe(401);
    expect((await waitFor(() => logged("mcp-log-400"), { what: "the 400's log line" })).status).toBe(400);
    expect(m.h.logs.join("\n")).not.toContain(token);
  });
});
