// The Vercel AI SDK's MCP client (@ai-sdk/mcp 2.x) against a listening instance. That client
// opens with server/discover in 2026-07-28 and falls back to initialize only when told to, so
// this is the first real client of our 2026 path. Every request is recorded where it reaches the
// server, so the tests see which revision was spoken, not just that the calls worked.
import { afterAll, describe, expect, test } from "bun:test";
import { auth, createMCPClient, type MCPClient, MCPClientError, UnauthorizedError } from "@ai-sdk/mcp";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { and, count, eq } from "drizzle-orm";
import { blocks, nodes } from "../db/schema";
import { uuidv7 } from "../src/lib/ids";
import { HIGH_LIMITS, harness, seedNode, seedProject, type TestHarness } from "./helpers";
import { ConsentingProvider, type Fetcher, seedUser } from "./oauth.helpers";

const V = "2026-07-28";
const LEGACY = "2025-11-25";
const PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion";
const CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";

/** One request as it reached the server, with the answer it got. */
interface Seen {
  method: string;
  path: string;
  headers: Headers;
  body: any;
  status: number;
  responseHeaders: Headers;
  response: any;
}

const parse = (text: string): any => {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return text;
  }
};

const browser: Fetcher = (r) => fetch(r, { redirect: "manual" });

describe("MCP with the Vercel AI SDK client (@ai-sdk/mcp)", async () => {
  let h: TestHarness | null = null;
  const seen: Seen[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const path = new URL(request.url).pathname;
      const body = request.method === "POST" ? parse(await request.clone().text()) : null;
      const res = await h!.app.handle(request);
      // JSON answers only: a streamed one would be consumed here before the client reads it.
      const json = (res.headers.get("content-type") ?? "").includes("application/json");
      const response = json ? parse(await res.clone().text()) : null;
      seen.push({ method: request.method, path, headers: request.headers, body, status: res.status, responseHeaders: res.headers, response });
      return res;
    },
  });
  const base = `http://127.0.0.1:${server.port}`;
  const mcpUrl = `${base}/mcp`;
  h = await harness({ PUBLIC_URL: base, ...HIGH_LIMITS });
  const db = h.deps.db;
  const p = await seedProject(h);
  const home = await seedNode(h, p.slug, { slug: "home", title: "Home", blocks: [{ type: "text", data: { text: "Welcome" } }] }, true);
  const clients: MCPClient[] = [];
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => {});
    server.stop(true);
  });

  async function mcpToken(scopes?: string[]): Promise<string> {
    const res = await h!.request("POST", `/admin/p/${p.slug}/ai/mcp/tokens`, { body: { name: "ai-sdk", ...(scopes ? { scopes } : {}) } });
    if (res.status !== 201) throw new Error(`token creation failed: ${res.status} ${res.text}`);
    return res.json.data.token;
  }
  const full = await mcpToken();

  async function connect(token: string, opts: { protocolVersionDiscovery?: boolean } = {}): Promise<MCPClient> {
    const client = await createMCPClient({
      transport: { type: "http", url: mcpUrl, headers: { authorization: `Bearer ${token}` } },
      clientName: "ai-sdk-test",
      ...opts,
    });
    clients.push(client);
    // Every test below runs on the revision it means to test: the 2026 one unless told not to probe.
    expect(client.initializeResult.protocolVersion).toBe(opts.protocolVersionDiscovery === false ? LEGACY : V);
    return client;
  }
  /** The /mcp requests recorded since `mark`. */
  const mcpSince = (mark: number): Seen[] => seen.slice(mark).filter((s) => s.path === "/mcp");
  const textOf = (r: object): string => ((r as { content?: unknown }).content as Array<{ type: string; text?: string }>).map((c) => c.text ?? "").join("\n");
  const nodeCount = async (): Promise<number> => (await db.select({ n: count() }).from(nodes).where(eq(nodes.projectId, p.id)))[0]!.n;

  test("negotiates 2026-07-28: server/discover first, no initialize, every request carries the revision in headers and _meta", async () => {
    const mark = seen.length;
    const client = await connect(full);
    expect(client.initializeResult.protocolVersion).toBe(V);
    expect(client.serverInfo).toMatchObject({ name: "content-service", version: "0.1.0" });
    expect(client.instructions).toContain(p.slug);
    await client.listTools();
    await client.callTool({ name: "get_project", arguments: {} });

    const traffic = mcpSince(mark);
    expect(traffic.map((s) => s.body?.method)).toEqual(["server/discover", "tools/list", "tools/call"]);
    // No handshake, no session, no GET stream: the 2025-11-25 path would show all three.
    expect(traffic.every((s) => s.method === "POST")).toBe(true);
    for (const s of traffic) {
      expect(s.status).toBe(200);
      expect(s.headers.get("mcp-protocol-version")).toBe(V);
      expect(s.headers.get("mcp-method")).toBe(s.body.method);
      expect(s.headers.get("mcp-session-id")).toBeNull();
      expect(s.body.params._meta[PROTOCOL_VERSION]).toBe(V);
      expect(s.body.params._meta[CLIENT_CAPABILITIES]).toEqual({});
      expect(s.response).toMatchObject({ jsonrpc: "2.0", id: s.body.id, result: { resultType: "complete" } });
    }
    expect(traffic[0]!.response.result.supportedVersions).toEqual([V, LEGACY]);
    expect(traffic[1]!.response.result).toMatchObject({ ttlMs: 3_600_000, cacheScope: "public" });
    expect(traffic[2]!.headers.get("mcp-name")).toBe("get_project");
  });

  test("tools/list: the same tools (names, schemas, annotations) as the MCP SDK's own Client sees in 2025-11-25", async () => {
    const client = await connect(full);
    const { tools } = await client.listTools();
    const sdk = new Client({ name: "sdk", version: "1.0.0" });
    await sdk.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: { authorization: `Bearer ${full}` } } }));
    const legacy = (await sdk.listTools()).tools;
    await sdk.close();
    expect(tools.map((t) => t.name)).toEqual(legacy.map((t) => t.name));
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["get_project", "get_node", "create_node", "update_node", "publish_node", "translate_node"]));
    for (const t of tools) {
      const twin = legacy.find((l) => l.name === t.name)!;
      expect({ inputSchema: t.inputSchema, outputSchema: t.outputSchema, annotations: t.annotations, title: t.title }).toEqual({
        inputSchema: twin.inputSchema,
        outputSchema: twin.outputSchema,
        annotations: twin.annotations,
        title: twin.title,
      } as never);
    }
  });

  test("a read tool (get_project) and a write tool (create_node, through the AI SDK's tools()) reach the database", async () => {
    const client = await connect(full);
    const read = await client.callTool({ name: "get_project", arguments: {} });
    expect(read.isError).toBeFalsy();
    expect(read.structuredContent).toMatchObject({ project: { id: p.id, slug: p.slug, locales: ["en", "fr"] } });

    // What generateText would run: the tool set the AI SDK builds from tools/list, executed.
    const mark = seen.length;
    const tools = await client.tools();
    const created: any = await tools.create_node!.execute!(
      { slug: "from-ai-sdk", title: "Written by the AI SDK", blocks: [{ type: "text", data: { text: "hello from an agent" } }] },
      { toolCallId: "call-1", messages: [], context: {} },
    );
    expect(created.isError).toBeFalsy();
    expect(created.structuredContent.node).toMatchObject({ slug: "from-ai-sdk", path: "from-ai-sdk", status: "draft" });
    const call = mcpSince(mark).find((s) => s.body?.method === "tools/call")!;
    expect(call.headers.get("mcp-protocol-version")).toBe(V);
    expect(call.headers.get("mcp-name")).toBe("create_node");

    const [row] = await db
      .select()
      .from(nodes)
      .where(and(eq(nodes.projectId, p.id), eq(nodes.path, "from-ai-sdk")));
    expect(row).toMatchObject({ id: created.structuredContent.node.id, title: "Written by the AI SDK", type: "page", status: "draft", parentId: null });
    const stored = await db.select().from(blocks).where(eq(blocks.nodeId, row!.id));
    expect(stored.map((b) => ({ type: b.type, data: b.data }))).toEqual([{ type: "text", data: { text: "hello from an agent" } }]);
  });

  test("resources: list, read by URI and through a template; an unknown node is this revision's -32602", async () => {
    const client = await connect(full);
    const uri = `cms://${p.slug}/nodes/${home.id}`;
    const listed = await client.listResources();
    expect(listed.resources.map((r) => r.uri)).toContain(uri);
    const mark = seen.length;
    const read = await client.readResource({ uri });
    expect(read.contents).toHaveLength(1);
    expect(read.contents[0]).toMatchObject({ uri, mimeType: "application/json" });
    const node = JSON.parse((read.contents[0] as { text: string }).text);
    expect(node).toMatchObject({ id: home.id, title: "Home", path: "home" });
    expect(node.blocks.map((b: { data: unknown }) => b.data)).toEqual([{ text: "Welcome" }]);
    const [readSeen] = mcpSince(mark);
    expect(readSeen!.headers.get("mcp-name")).toBe(uri);
    expect(readSeen!.response.result).toMatchObject({ resultType: "complete", ttlMs: 0, cacheScope: "private" });

    const templates = await client.listResourceTemplates();
    expect(templates.resourceTemplates.map((t) => t.uriTemplate).sort()).toEqual([
      `cms://${p.slug}/nodes/{id}/revisions/{rev}`,
      `cms://${p.slug}/nodes/{id}{?locale}`,
      `cms://${p.slug}/paths/{+path}{?locale}`,
    ]);
    const byPath = await client.readResource({ uri: `cms://${p.slug}/paths/home` });
    expect(JSON.parse((byPath.contents[0] as { text: string }).text).id).toBe(home.id);

    const missing = `cms://${p.slug}/nodes/${uuidv7()}`;
    const err = await client.readResource({ uri: missing }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(MCPClientError.isInstance(err)).toBe(true);
    // -32002 would be the 2025-11-25 answer: this one was served by the 2026 rules.
    expect((err as MCPClientError).code).toBe(-32602);
    expect((err as MCPClientError).data).toMatchObject({ uri: missing });
  });

  test("prompts: list and get (the page embedded); completion fills the path argument", async () => {
    const client = await connect(full);
    const { prompts } = await client.listPrompts();
    expect(prompts.map((x) => x.name).sort()).toEqual(["model_content", "review_before_publish", "summarise_recent_changes", "translate_page", "write_seo"]);
    expect(prompts.find((x) => x.name === "translate_page")!.arguments!.map((a) => [a.name, a.required])).toEqual([
      ["path", true],
      ["locale", true],
    ]);

    const got = await client.getPrompt({ name: "write_seo", arguments: { path: "home" } });
    const texts = got.messages.map((m) => m.content as { type: string; text?: string; resource?: { uri: string; text: string } });
    expect(texts[0]!.type).toBe("text");
    expect(texts[0]!.text).toContain('"Home"');
    const embedded = texts.find((c) => c.type === "resource")!;
    expect(embedded.resource!.uri).toBe(`cms://${p.slug}/nodes/${home.id}`);
    expect(JSON.parse(embedded.resource!.text).title).toBe("Home");

    const noPage = await client.getPrompt({ name: "write_seo", arguments: { path: "no/such/page" } }).then(
      () => null,
      (e: unknown) => e,
    );
    expect((noPage as MCPClientError).code).toBe(-32602);

    const completed = await client.complete({ ref: { type: "ref/prompt", name: "write_seo" }, argument: { name: "path", value: "ho" } });
    expect(completed.completion.values).toEqual(["home"]);
    const locales = await client.complete({ ref: { type: "ref/prompt", name: "translate_page" }, argument: { name: "locale", value: "" } });
    expect(locales.completion.values).toContain("fr");
  });

  test("bad input: invalid arguments are a tool error, an unknown tool a JSON-RPC -32602; nothing written, the server keeps answering", async () => {
    const client = await connect(full);
    const before = await nodeCount();
    const mark = seen.length;

    const badSlug = await client.callTool({ name: "create_node", arguments: { slug: "Bad Slug", title: "x" } });
    expect(badSlug.isError).toBe(true);
    expect(textOf(badSlug)).toContain("slug");
    const wrongType = await client.callTool({ name: "create_node", arguments: { slug: 42, title: ["x"] } });
    expect(wrongType.isError).toBe(true);
    const conflict = await client.callTool({ name: "create_node", arguments: { slug: "home", title: "Again" } });
    expect(conflict.isError).toBe(true);
    expect(textOf(conflict)).toMatch(/^conflict/);

    // An unknown tool, also under names the client must send Base64-encoded in Mcp-Name
    // (non-ASCII, surrounding space): the header is decoded and matched, the tool is not found.
    for (const name of ["drop_database", "créer_page", " get_project"]) {
      const err = await client.callTool({ name, arguments: {} }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(MCPClientError.isInstance(err)).toBe(true);
      expect((err as MCPClientError).code).toBe(-32602);
    }
    const encoded = mcpSince(mark).filter((s) => s.body?.params?.name === "créer_page" || s.body?.params?.name === " get_project");
    expect(encoded.map((s) => s.headers.get("mcp-name"))).toEqual([`=?base64?${btoa(String.fromCharCode(...new TextEncoder().encode("créer_page")))}?=`, `=?base64?${btoa(" get_project")}?=`]);

    expect(mcpSince(mark).every((s) => s.status < 500)).toBe(true);
    expect(await nodeCount()).toBe(before);
    expect((await client.callTool({ name: "get_project", arguments: {} })).structuredContent).toMatchObject({ project: { id: p.id } });
  });

  test("parallel calls over one client: each answer reaches its own request; three racing for one slug make one node", async () => {
    const client = await connect(full);
    const before = await nodeCount();
    const slugs = Array.from({ length: 12 }, (_, i) => `par-${i}`);
    const contested = Array.from({ length: 3 }, (_, i) => ({ slug: "contested", title: `racer ${i}` }));
    const results = await Promise.all([...slugs.map((slug) => ({ slug, title: `Parallel ${slug}` })), ...contested].map((args) => client.callTool({ name: "create_node", arguments: args })));
    results.slice(0, 12).forEach((r, i) => {
      expect(r.isError).toBeFalsy();
      expect(r.structuredContent).toMatchObject({ node: { slug: slugs[i], title: `Parallel ${slugs[i]}` } });
    });
    const racers = results.slice(12);
    const won = racers.filter((r) => !r.isError);
    expect(won).toHaveLength(1);
    for (const r of racers.filter((x) => x.isError)) expect(textOf(r)).toMatch(/^conflict/);
    expect(await nodeCount()).toBe(before + 13);
    const [row] = await db
      .select()
      .from(nodes)
      .where(and(eq(nodes.projectId, p.id), eq(nodes.path, "contested")));
    expect(row!.title).toBe((won[0]!.structuredContent as { node: { title: string } }).node.title);
  });

  test("an MCP token without content:write cannot write: a tool error naming the scope, nothing stored; reads still work", async () => {
    const reader = await connect(await mcpToken(["content:read"]));
    expect(reader.initializeResult.protocolVersion).toBe(V);
    const denied = await reader.callTool({ name: "create_node", arguments: { slug: "not-allowed", title: "No" } });
    expect(denied.isError).toBe(true);
    expect(textOf(denied)).toMatch(/^insufficient_scope: create_node needs the content:write scope/);
    expect(denied.structuredContent).toBeUndefined();
    expect(
      await db
        .select()
        .from(nodes)
        .where(and(eq(nodes.projectId, p.id), eq(nodes.path, "not-allowed"))),
    ).toEqual([]);
    const read = await reader.callTool({ name: "get_node", arguments: { path: "home" } });
    expect(read.structuredContent).toMatchObject({ node: { id: home.id } });
  });

  describe("OAuth with the AI SDK's own auth()", async () => {
    const user = await seedUser(h!, "editor");
    /** 401 → metadata → registration → consent → code, then the token exchange. */
    async function authorize(grant?: string[]): Promise<ConsentingProvider> {
      // The AI SDK's OAuthClientProvider, its "browser" walking our consent page headless.
      const check = (url: URL) => expect(url.searchParams.get("resource")).toBe(mcpUrl);
      const provider = new ConsentingProvider({ name: "AI SDK e2e", redirectUrl: "http://127.0.0.1:47002/callback", user, projectId: p.id, tick: grant, browser, check });
      const refused = await createMCPClient({ transport: { type: "http", url: mcpUrl, authProvider: provider } }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(UnauthorizedError);
      expect(provider.code).toMatch(/^cms_code_/);
      expect(await auth(provider, { serverUrl: mcpUrl, authorizationCode: provider.code!, callbackIssuer: base })).toBe("AUTHORIZED");
      expect(provider.tokens()!.access_token).toMatch(/^cms_at_/);
      return provider;
    }

    test("401 → discovery → registration → consent → token, then 2026-07-28 with the access token: read and write", async () => {
      const provider = await authorize();
      const mark = seen.length;
      const client = await createMCPClient({ transport: { type: "http", url: mcpUrl, authProvider: provider } });
      clients.push(client);
      expect(client.initializeResult.protocolVersion).toBe(V);
      const created = await client.callTool({ name: "create_node", arguments: { slug: "oauth-ai-sdk", title: "Via OAuth" } });
      expect(created.isError).toBeFalsy();
      const traffic = mcpSince(mark);
      expect(traffic.map((s) => s.body?.method)).toEqual(["server/discover", "tools/call"]);
      expect(traffic.every((s) => s.headers.get("authorization") === `Bearer ${provider.tokens()!.access_token}` && s.headers.get("mcp-protocol-version") === V)).toBe(true);
      const [row] = await db
        .select()
        .from(nodes)
        .where(and(eq(nodes.projectId, p.id), eq(nodes.path, "oauth-ai-sdk")));
      expect(row).toMatchObject({ title: "Via OAuth", status: "draft" });
    });

    test("an access token consented without content:write: create_node is the 403 scope challenge, nothing stored, reads go on", async () => {
      const provider = await authorize(["content:read"]);
      const client = await createMCPClient({ transport: { type: "http", url: mcpUrl, authProvider: provider } });
      clients.push(client);
      expect(client.initializeResult.protocolVersion).toBe(V);
      const mark = seen.length;
      const err = await client.callTool({ name: "create_node", arguments: { slug: "oauth-denied", title: "No" } }).then(
        () => null,
        (e: unknown) => e,
      );
      // The editor's role holds content:write, so the user could consent to it: the MCP spec's step-up challenge.
      expect(MCPClientError.isInstance(err)).toBe(true);
      expect((err as MCPClientError).statusCode).toBe(403);
      const [challenge] = mcpSince(mark);
      expect(challenge!.status).toBe(403);
      expect(challenge!.responseHeaders.get("www-authenticate")).toContain('error="insufficient_scope", scope="content:read content:write"');
      expect(
        await db
          .select()
          .from(nodes)
          .where(and(eq(nodes.projectId, p.id), eq(nodes.path, "oauth-denied"))),
      ).toEqual([]);
      const read = await client.callTool({ name: "get_project", arguments: {} });
      expect(read.structuredContent).toMatchObject({ project: { id: p.id } });
    });
  });

  test("2025-11-25 fallback: the same client told not to probe (a legacy setup) initializes and is served", async () => {
    const mark = seen.length;
    const client = await connect(full, { protocolVersionDiscovery: false });
    expect(client.initializeResult.protocolVersion).toBe(LEGACY);
    const read = await client.callTool({ name: "get_project", arguments: {} });
    expect(read.structuredContent).toMatchObject({ project: { id: p.id } });
    const posts = mcpSince(mark).filter((s) => s.method === "POST");
    expect(posts.map((s) => s.body?.method)).toEqual(["initialize", "notifications/initialized", "tools/call"]);
    expect(posts[0]!.response.result.protocolVersion).toBe(LEGACY);
    expect(posts.slice(1).every((s) => s.headers.get("mcp-protocol-version") === LEGACY)).toBe(true);
    expect(posts.every((s) => s.body.params?._meta?.[PROTOCOL_VERSION] === undefined)).toBe(true);
    // Its GET for a server-sent stream (legacy only) is the stateless 405, which the client accepts.
    expect(
      mcpSince(mark)
        .filter((s) => s.method === "GET")
        .every((s) => s.status === 405),
    ).toBe(true);
  });
});
