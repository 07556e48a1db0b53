// Review fixes of /mcp: the MCP scope challenge (403 insufficient_scope) for OAuth tokens, and an
// OAuth token never outliving the scopes its user's role holds.
import { afterAll, describe, expect, test } from "bun:test";
import { extractWWWAuthenticateParams, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { and, eq } from "drizzle-orm";
import { nodes, oauthClients, oauthGrants, oauthTokens, projectMembers, users } from "../db/schema";
import { uuidv7 } from "../src/lib/ids";
import type { ProjectRole } from "../src/lib/scopes";
import { generateToken, hashToken } from "../src/lib/tokens";
import { BASE, HIGH_LIMITS, harness, seedProject, type TestHarness } from "./helpers";
import { ConsentingProvider, type Fetcher, mcpRpc, seedUser } from "./oauth.helpers";

const RESOURCE_METADATA = `${BASE}/.well-known/oauth-protected-resource/mcp`;

/** An OAuth access token for `scopes`, issued to a fresh user of `role` (rows as the token endpoint writes them). */
async function mintOAuth(h: TestHarness, projectId: string, role: "owner" | ProjectRole, scopes: string[]): Promise<{ token: string; userId: string }> {
  const db = h.deps.db;
  const user = await seedUser(h, role, [projectId]);
  const clientId = `review-${uuidv7()}`;
  await db.insert(oauthClients).values({ id: clientId, redirectUris: ["http://127.0.0.1/cb"], tokenEndpointAuthMethod: "none", grantTypes: ["authorization_code"], responseTypes: ["code"] });
  const grantId = uuidv7();
  await db.insert(oauthGrants).values({ id: grantId, clientId, userId: user.id, projectId, scopes, resource: `${BASE}/mcp` });
  const token = generateToken("cms_at_");
  await db.insert(oauthTokens).values({
    id: uuidv7(),
    tokenHash: hashToken(token),
    kind: "access",
    grantId,
    clientId,
    userId: user.id,
    projectId,
    scopes,
    resource: `${BASE}/mcp`,
    expiresAt: new Date(Date.now() + 3_600_000),
  });
  return { token, userId: user.id };
}

const rpc = (body: unknown) => JSON.stringify(body);

describe("MCP: scope challenge and role changes", async () => {
  const h = await harness();
  const fetcher: Fetcher = (r) => h.app.handle(r);
  const project = await seedProject(h);
  const createNode = (slug: string) => ({ name: "create_node", arguments: { slug, title: slug } });
  // The user's role in this project (per-project roles since issue 13; before, the instance-wide users.role).
  const setRole = (userId: string, role: ProjectRole) =>
    h.deps.db
      .update(projectMembers)
      .set({ role })
      .where(and(eq(projectMembers.userId, userId), eq(projectMembers.projectId, project.id)));
  // Scoped to this run's project: a reused PostgreSQL database keeps earlier runs' nodes of the same path.
  const nodeCount = async (path: string) =>
    (
      await h.deps.db
        .select()
        .from(nodes)
        .where(and(eq(nodes.projectId, project.id), eq(nodes.path, path)))
    ).length;

  test("an OAuth token lacking a tool's scope its user could grant: 403 insufficient_scope with the challenge the SDK reads", async () => {
    const { token } = await mintOAuth(h, project.id, "editor", ["content:read"]);
    const res = await fetcher(
      new Request(`${BASE}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}`, origin: BASE },
        body: rpc({ jsonrpc: "2.0", id: 7, method: "tools/call", params: createNode("challenged") }),
      }),
    );
    expect(res.status).toBe(403);
    const header = res.headers.get("www-authenticate")!;
    expect(header).toStartWith('Bearer error="insufficient_scope", scope="content:read content:write", ');
    // The SDK's own parser finds what it needs to step up.
    const parsed = extractWWWAuthenticateParams(res);
    expect(parsed.error).toBe("insufficient_scope");
    expect(parsed.scope).toBe("content:read content:write");
    expect(parsed.resourceMetadataUrl?.href).toBe(RESOURCE_METADATA);
    expect(res.headers.get("access-control-allow-origin")).toBe(BASE);
    expect(res.headers.get("access-control-expose-headers")).toContain("www-authenticate");
    expect(await res.json()).toEqual({
      error: {
        code: "insufficient_scope",
        message: 'this call needs the content:write scope, which the access token lacks; authorize again with scope "content:read content:write"',
        details: { required: ["content:write"] },
      },
    });
    expect(await nodeCount("challenged")).toBe(0);

    // Resources need content:read; translate_node needs content:write and ai:read.
    const translator = await mintOAuth(h, project.id, "editor", ["ai:read"]);
    const list = await mcpRpc(fetcher, BASE, translator.token, "resources/list", {});
    expect(list.status).toBe(403);
    expect(list.headers.get("www-authenticate")).toContain('scope="content:read ai:read"');
    const both = await mcpRpc(fetcher, BASE, translator.token, "tools/call", { name: "translate_node", arguments: { node_id: uuidv7(), locale: "fr" } });
    expect(both.status).toBe(403);
    expect(both.json.error.details).toEqual({ required: ["content:write"] });
    // What the token does hold still works.
    expect((await mcpRpc(fetcher, BASE, token, "tools/call", { name: "get_project", arguments: {} })).status).toBe(200);
    expect((await mcpRpc(fetcher, BASE, token, "tools/list", {})).status).toBe(200);
  });

  test("no challenge when re-authorizing cannot help: a scope the user's role lacks, or an MCP token, is a tool error", async () => {
    const viewer = await mintOAuth(h, project.id, "viewer", ["content:read"]);
    const res = await mcpRpc(fetcher, BASE, viewer.token, "tools/call", createNode("viewer-write"));
    expect(res.status).toBe(200);
    expect(res.headers.get("www-authenticate")).toBeNull();
    expect(res.json.result.isError).toBe(true);
    expect(res.json.result.content[0].text).toStartWith("insufficient_scope: create_node needs the content:write scope");
    expect(await nodeCount("viewer-write")).toBe(0);

    const mcp = await h.request("POST", `/admin/p/${project.slug}/ai/mcp/tokens`, { body: { name: "reader", scopes: ["content:read"] } });
    const byToken = await mcpRpc(fetcher, BASE, mcp.json.data.token, "tools/call", createNode("token-write"));
    expect(byToken.status).toBe(200);
    expect(byToken.json.result.isError).toBe(true);
    expect(await nodeCount("token-write")).toBe(0);
  });

  test("a narrowed role takes effect on the next request, not at the next refresh", async () => {
    const { token, userId } = await mintOAuth(h, project.id, "editor", ["content:read", "content:write"]);
    const made = await mcpRpc(fetcher, BASE, token, "tools/call", createNode("before-demotion"));
    expect(made.json.result.isError).toBeFalsy();
    expect(await nodeCount("before-demotion")).toBe(1);

    await setRole(userId, "viewer");
    const refused = await mcpRpc(fetcher, BASE, token, "tools/call", createNode("after-demotion"));
    expect(refused.status).toBe(200);
    expect(refused.json.result.isError).toBe(true);
    expect(refused.json.result.content[0].text).toContain("content:write");
    expect(await nodeCount("after-demotion")).toBe(0);
    const read = await mcpRpc(fetcher, BASE, token, "tools/call", { name: "get_project", arguments: {} });
    expect(read.json.result.isError).toBeFalsy();
    const init = await mcpRpc(fetcher, BASE, token, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } });
    expect(init.json.result.instructions).toContain("This credential holds the scopes: content:read.");

    // A token none of whose scopes the role still holds is as good as revoked.
    const writer = await mintOAuth(h, project.id, "editor", ["content:write"]);
    expect((await mcpRpc(fetcher, BASE, writer.token, "tools/list", {})).status).toBe(200);
    await setRole(writer.userId, "viewer");
    const gone = await mcpRpc(fetcher, BASE, writer.token, "tools/list", {});
    expect(gone.status).toBe(401);
    expect(gone.headers.get("www-authenticate")).toContain('error="invalid_token"');

    // Restoring the role restores what the consent granted (never more).
    await setRole(userId, "editor");
    const again = await mcpRpc(fetcher, BASE, token, "tools/call", createNode("after-restore"));
    expect(again.json.result.isError).toBeFalsy();
  });

  test("a deleted user's tokens stop at once", async () => {
    const { token, userId } = await mintOAuth(h, project.id, "owner", ["content:read"]);
    expect((await mcpRpc(fetcher, BASE, token, "tools/list", {})).status).toBe(200);
    await h.deps.db.delete(users).where(eq(users.id, userId));
    expect((await mcpRpc(fetcher, BASE, token, "tools/list", {})).status).toBe(401);
  });
});

describe("MCP scope challenge with the SDK's own client: step-up re-authorization", async () => {
  let h: TestHarness | null = null;
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (r) => h!.app.handle(r) });
  const base = `http://127.0.0.1:${server.port}`;
  const mcpUrl = new URL(`${base}/mcp`);
  h = await harness({ ...HIGH_LIMITS, PUBLIC_URL: base });
  const project = await seedProject(h);
  const user = await seedUser(h, "editor", [project.id]);
  afterAll(() => server.stop(true));
  const browser: Fetcher = (r) => fetch(r, { redirect: "manual" });

  test("403 → the SDK asks the user for the token's scopes plus the missing one → the retried call succeeds", async () => {
    // Ticks only `tick` on the consent page: the user grants less than asked, then more when asked again.
    // No refresh_token grant: the SDK would refresh first on a 403, which cannot add scopes.
    const provider = new ConsentingProvider({
      name: "step-up",
      redirectUrl: "http://127.0.0.1:47002/callback",
      user,
      projectId: project.id,
      grantTypes: ["authorization_code"],
      tick: ["content:read"],
      browser,
    });
    const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
    const c1 = new Client({ name: "step-up", version: "1.0.0" });
    expect(await c1.connect(first).catch((e) => e)).toBeInstanceOf(UnauthorizedError);
    await first.finishAuth(provider.code!);
    expect(provider.tokens()?.scope).toBe("content:read");

    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
    const client = new Client({ name: "step-up", version: "1.0.0" });
    await client.connect(transport);
    expect((await client.callTool({ name: "get_project", arguments: {} })).isError).toBeFalsy();

    provider.tick = ["content:read", "content:write"];
    const stepped = await client.callTool({ name: "create_node", arguments: { slug: "stepped-up", title: "Stepped up" } }).catch((e) => e);
    expect(stepped).toBeInstanceOf(UnauthorizedError);
    expect(provider.asked.at(-1)).toBe("content:read content:write");
    await transport.finishAuth(provider.code!);
    expect(provider.tokens()?.scope).toBe("content:read content:write");

    const retried = await client.callTool({ name: "create_node", arguments: { slug: "stepped-up", title: "Stepped up" } });
    expect(retried.isError).toBeFalsy();
    expect((await h!.deps.db.select().from(nodes).where(eq(nodes.projectId, project.id))).map((n) => n.path)).toContain("stepped-up");
    await client.close();
  });
});

describe("MCP: Accept negotiation for clients that send less than both types", async () => {
  const h = await harness();
  const project = await seedProject(h);
  const created = await h.request("POST", `/admin/p/${project.slug}/ai/mcp/tokens`, { body: { name: "accept" } });
  const token: string = created.json.data.token;
  const post = (accept: string | null, body: unknown) => {
    const headers: Record<string, string> = { "content-type": "application/json", authorization: `Bearer ${token}` };
    if (accept !== null) headers.accept = accept;
    return h.app.handle(new Request(`${BASE}/mcp`, { method: "POST", headers, body: JSON.stringify(body) }));
  };
  const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } };
  const getProject = { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "get_project", arguments: {} } };

  test("application/json alone, */* or no Accept at all: answered in JSON", async () => {
    for (const accept of ["application/json", "*/*", null, "application/json; q=1.0", "application/*"]) {
      const res = await post(accept, init);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("application/json");
      expect((await res.json()).result.protocolVersion).toBe("2025-06-18");
      const call = await post(accept, getProject);
      expect((await call.json()).result.structuredContent.project.id).toBe(project.id);
    }
  });

  test("text/event-stream alone: the same answer as one server-sent event", async () => {
    for (const body of [init, getProject, { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "no_such_tool", arguments: {} } }]) {
      const res = await post("text/event-stream", body);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/event-stream");
      const text = await res.text();
      expect(text).toStartWith("event: message\ndata: ");
      expect(text).toEndWith("\n\n");
      const msg = JSON.parse(text.slice("event: message\ndata: ".length));
      expect(msg.id).toBe(body.id);
    }
    const notification = await post("text/event-stream", { jsonrpc: "2.0", method: "notifications/initialized" });
    expect(notification.status).toBe(202);
  });

  test("an Accept naming neither is still 406, and a bad token is still 401 whatever the Accept", async () => {
    const res = await post("text/html", init);
    expect(res.status).toBe(406);
    const anon = await h.app.handle(new Request(`${BASE}/mcp`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json" }, body: JSON.stringify(init) }));
    expect(anon.status).toBe(401);
  });
});
