// Tenant isolation matrix: every admin route that takes a ref or an id, called with a credential
// of project A and the refs/ids of project B, answers 404 exactly like an id that never existed,
// and no list shows B's rows.
import { afterAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { nodes, oauthGrants, projectMembers, themes, translations } from "../db/schema";
import { ADMIN_SCOPES } from "../src/lib/scopes";
import { BASE, harness, keyWith, seedNode, seedProject } from "./helpers";
import { authorizeInBrowser, authorizeUrl, CookieJar, type Fetcher, hiddenFields, mcpRpc, pkce, postForm, seedUser } from "./oauth.helpers";

describe("tenant isolation: admin keys", async () => {
  const h = await harness({ AI_ALLOW_PRIVATE_URLS: "true" });
  const a = await seedProject(h);
  const b = await seedProject(h);
  await seedNode(h, a.slug, { slug: "a-home" }, true);
  const nodeB = await seedNode(h, b.slug, { slug: "b-home", blocks: [{ type: "text" }] }, true);
  await h.request("PUT", `/admin/p/${b.slug}/nodes/${nodeB.id}/translations/fr`, { body: { meta: { title: "B fr" } } });
  const providerB = (await h.request("POST", `/admin/p/${b.slug}/ai/providers`, { body: { name: "b", kind: "openai", api_key: "sk-b-secret", base_url: "http://127.0.0.1:9/v1" } })).json.data;
  const tokenB = (await h.request("POST", `/admin/p/${b.slug}/ai/mcp/tokens`, { body: { name: "b" } })).json.data;
  const keyA = await keyWith(h, [...ADMIN_SCOPES], [a.id]);
  // Users and members: B's member is nobody to A's key.
  const userB = await seedUser(h, "admin", [b.id]);
  const userA = await seedUser(h, "editor", [a.id]);

  const spec = (await h.request("GET", "/swagger/json", { key: null })).json as { paths: Record<string, Record<string, unknown>> };
  const idFor = (path: string): string => {
    if (path.includes("/ai/providers/")) return providerB.id;
    if (path.includes("/mcp/tokens/")) return tokenB.id;
    if (path.startsWith("/admin/users/")) return userB.id;
    return nodeB.id;
  };
  const routes = Object.entries(spec.paths)
    // Admin keys and OAuth clients belong to no project (a project-limited key cannot manage them: 403).
    .filter(([path]) => path.startsWith("/admin") && /\{(ref|id)\}/.test(path) && !path.startsWith("/admin/keys") && !path.startsWith("/admin/oauth/clients"))
    .flatMap(([path, ops]) => Object.keys(ops).map((m) => ({ method: m.toUpperCase(), path })));

  /** The fields of `body` the route's request body declares (an undeclared one is 400 invalid_input, whatever the id). */
  const declaredOnly = (method: string, path: string, body: Record<string, unknown>): Record<string, unknown> => {
    const op = spec.paths[path]?.[method.toLowerCase()] as { requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown> } }> } } | undefined;
    const props = op?.requestBody?.content["application/json"]?.schema.properties ?? {};
    return Object.fromEntries(Object.entries(body).filter(([k]) => k in props));
  };

  test("the matrix covers the routes of every feature", () => {
    const covered = routes.map((r) => r.path).join(" ");
    for (const part of [
      "/admin/projects/{ref}",
      "/nodes/{id}",
      "/translations/{locale}",
      "/theme",
      "/ai/providers",
      "/ai/translate",
      "/mcp/tokens",
      "/admin/users/{id}",
      "/members",
      "/members/{userId}",
    ])
      expect(covered).toContain(part);
  });

  test("every route with B's ref or ids and A's key is 404, with the body of a missing id", async () => {
    for (const { method, path } of routes) {
      const url = path.replace("{ref}", b.slug).replace("{id}", idFor(path)).replace("{locale}", "fr").replace("{userId}", userB.id);
      const bodyFor =
        method === "GET" || method === "DELETE"
          ? undefined
          : path.endsWith("/blocks")
            ? []
            : path.endsWith("/translate")
              ? { from: "en", to: "fr", text: "hi" }
              : declaredOnly(method, path, {
                  name: "x",
                  title: "x",
                  slug: "x",
                  kind: "openai",
                  accent_color: "#000000",
                  role: path.startsWith("/admin/users") ? "member" : "viewer",
                  email: "x@example.com",
                });
      const r = await h.request(method, url, { key: keyA, body: bodyFor });
      expect({ method, url, status: r.status }).toEqual({ method, url, status: 404 });
      expect(r.json.error.code).toBe("not_found");
      // The same route with an id that never existed answers the same body.
      const ghost = await h.request(method, path.replace("{ref}", crypto.randomUUID()).replace("{id}", crypto.randomUUID()).replace("{locale}", "fr").replace("{userId}", crypto.randomUUID()), {
        key: keyA,
        body: bodyFor,
      });
      expect({ url, body: r.json }).toEqual({ url, body: ghost.json });
    }
  });

  test("no list shows B's rows to A's key", async () => {
    const lists = ["/admin/projects", `/admin/p/${a.slug}/nodes`, `/admin/p/${a.slug}/ai/providers`, `/admin/p/${a.slug}/ai/mcp/tokens`, "/admin/users", `/admin/p/${a.slug}/members`];
    for (const url of lists) {
      const r = await h.request("GET", url, { key: keyA });
      expect({ url, status: r.status }).toEqual({ url, status: 200 });
      for (const s of [b.id, b.slug, nodeB.id, providerB.id, tokenB.id, userB.id, userB.email]) expect({ url, leaked: r.text.includes(s) }).toEqual({ url, leaked: false });
    }
    // The lists are not empty by accident: A's own member is there.
    expect((await h.request("GET", "/admin/users", { key: keyA })).text).toContain(userA.id);
    expect((await h.request("GET", `/admin/p/${a.slug}/members`, { key: keyA })).text).toContain(userA.email);
    // Nothing of B changed through A's key.
    const [m] = await h.deps.db.select().from(projectMembers).where(eq(projectMembers.userId, userB.id));
    expect(m).toMatchObject({ projectId: b.id, role: "admin" });
  });
});

describe("tenant isolation: a member of A through MCP and OAuth", async () => {
  // B's AI vendor: any call reaching it would be A's member spending B's key.
  let vendorCalls = 0;
  const vendor = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: () => {
      vendorCalls += 1;
      return Response.json({ choices: [{ message: { content: "x" } }] });
    },
  });
  afterAll(() => vendor.stop(true));
  // Registration counts are per address in the one database of a run: other files register clients too.
  const h = await harness({ AI_ALLOW_PRIVATE_URLS: "true", OAUTH_SIGNIN_RATE_LIMIT: "1000000", OAUTH_TOKEN_RATE_LIMIT: "1000000", OAUTH_REGISTER_RATE_LIMIT: "1000000" });
  const fetcher: Fetcher = (r) => h.app.handle(r);
  const a = await seedProject(h);
  const b = await seedProject(h);
  const SECRET = `b-secret-${crypto.randomUUID().slice(0, 8)}`;
  await seedNode(h, a.slug, { slug: "a-home" }, true);
  const colB = await seedNode(h, b.slug, { slug: "blog", type: "collection", title: SECRET }, true);
  const nodeB = await seedNode(h, b.slug, { slug: "b-draft", parent_id: colB.id, title: SECRET, blocks: [{ type: "text", data: { text: SECRET } }] });
  await h.request("PUT", `/admin/p/${b.slug}/nodes/${nodeB.id}/translations/fr`, { body: { meta: { title: SECRET } } });
  const providerB = (await h.request("POST", `/admin/p/${b.slug}/ai/providers`, { body: { name: "b", kind: "openai", api_key: "sk-b-secret", base_url: `http://127.0.0.1:${vendor.port}/v1` } })).json
    .data;
  // The strongest role in A, and A's MCP token with every MCP scope.
  const member = await seedUser(h, "admin", [a.id]);
  const mcpTokenA = (await h.request("POST", `/admin/p/${a.slug}/ai/mcp/tokens`, { body: { name: "a", scopes: ["content:read", "content:write", "ai:read", "media:write"] } })).json.data
    .token as string;
  const client = (await h.request("POST", "/oauth/register", { key: null, body: { redirect_uris: ["http://127.0.0.1:43123/cb"], token_endpoint_auth_method: "none" } })).json.client_id as string;
  const authorize = async (projectId: string): Promise<string> => {
    const { verifier, challenge } = pkce();
    const url = authorizeUrl(BASE, {
      response_type: "code",
      client_id: client,
      redirect_uri: "http://127.0.0.1:43123/cb",
      code_challenge: challenge,
      code_challenge_method: "S256",
      resource: `${BASE}/mcp`,
    });
    const r = await authorizeInBrowser(fetcher, url, { email: member.email, password: member.password, projectId });
    const code = new URL(r.location).searchParams.get("code")!;
    const t = await postForm(fetcher, BASE, "/oauth/token", {
      grant_type: "authorization_code",
      client_id: client,
      code,
      code_verifier: verifier,
      redirect_uri: "http://127.0.0.1:43123/cb",
      resource: `${BASE}/mcp`,
    });
    return t.json.access_token;
  };
  const oauthA = await authorize(a.id);
  const snapshot = async () => ({
    nodes: (await h.deps.db.select().from(nodes).where(eq(nodes.projectId, b.id))).map((n) => [n.id, n.title, n.status, n.updatedAt.getTime()]),
    translations: (await h.deps.db.select().from(translations).where(eq(translations.projectId, b.id))).map((t) => [t.id, t.updatedAt.getTime()]),
    theme: (await h.deps.db.select().from(themes).where(eq(themes.projectId, b.id))).map((t) => t.updatedAt.getTime()),
  });

  test("the member cannot obtain a token for B", async () => {
    // A member of one project is shown its consent directly; the form, edited to name B, is refused.
    const jar = new CookieJar();
    const url = authorizeUrl(BASE, {
      response_type: "code",
      client_id: client,
      redirect_uri: "http://127.0.0.1:43123/cb",
      code_challenge: pkce().challenge,
      code_challenge_method: "S256",
      resource: `${BASE}/mcp`,
    });
    const send = async (req: Request) => {
      const res = await fetcher(req);
      jar.store(res);
      return res;
    };
    const post = (form: URLSearchParams) =>
      send(new Request(`${BASE}/oauth/authorize`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", cookie: jar.header() }, body: form.toString() }));
    const signIn = await (await send(new Request(url))).text();
    const consent = await (await post(new URLSearchParams({ ...hiddenFields(signIn), email: member.email, password: member.password }))).text();
    expect(hiddenFields(consent)).toMatchObject({ step: "consent", project: a.id });
    const forged = new URLSearchParams({ ...hiddenFields(consent), project: b.id, action: "approve", grant_scope: "content:read" });
    const refused = await post(forged);
    expect(refused.status).toBe(403);
    expect(refused.headers.get("location")).toBeNull();
    const grants = await h.deps.db.select().from(oauthGrants).where(eq(oauthGrants.userId, member.id));
    expect(grants.map((g) => g.projectId)).toEqual([a.id]);
  });

  for (const [name, token] of [
    ["MCP token of A", mcpTokenA],
    ["OAuth token of A's member", oauthA],
  ] as const) {
    test(`${name}: every tool and resource with B's ids, slugs and paths reaches nothing of B`, async () => {
      const before = await snapshot();
      const listed = await mcpRpc(fetcher, BASE, token, "tools/list", {});
      expect(listed.status).toBe(200);
      const tools = listed.json.result.tools as { name: string; inputSchema: { properties?: Record<string, unknown> } }[];
      expect(tools.length).toBeGreaterThanOrEqual(15);
      type Prop = { type?: string | string[]; enum?: unknown[]; format?: string; pattern?: string };
      const valueFor = (prop: string, schema: Prop): unknown => {
        if (prop === "provider_id") return providerB.id;
        if (prop === "parent_id") return colB.id;
        if (/^(id|node_id)$/.test(prop)) return nodeB.id;
        if (/locale|^to$|^from$/.test(prop)) return "fr";
        if (prop === "path") return "/blog/b-draft";
        if (schema.enum) return schema.enum[0];
        const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
        if (type === "integer" || type === "number") return 0;
        if (type === "boolean") return false;
        if (type === "array") return [];
        if (type === "object") return { title: "pwned" };
        if (prop.includes("color")) return "#000000";
        return "pwned";
      };
      let reachedB = 0;
      for (const tool of tools) {
        const schema = tool.inputSchema as { properties?: Record<string, Prop>; required?: string[] };
        const props = schema.properties ?? {};
        const wanted = (k: string) => (schema.required ?? []).includes(k) || /^(id|node_id|parent_id|provider_id|locale|text|title)$/.test(k);
        // Once by B's ids, once by B's path (tools take one or the other).
        for (const drop of ["path", "id"]) {
          const args = Object.fromEntries(
            Object.entries(props)
              .filter(([k]) => k !== drop && wanted(k))
              .map(([k, v]) => [k, valueFor(k, v)]),
          );
          const r = await mcpRpc(fetcher, BASE, token, "tools/call", { name: tool.name, arguments: args });
          // Over OAuth, update_content_model needs model:write, which the member's role holds and the grant does not: the step-up 403.
          // So do the media writes, which need media:write (asked for by name, as model:write is).
          const stepUp = tool.name === "update_content_model" || ["upload_media_from_url", "update_media", "describe_media"].includes(tool.name);
          expect({ tool: tool.name, status: r.status }).toEqual({ tool: tool.name, status: stepUp && token === oauthA ? 403 : 200 });
          for (const leak of [SECRET, b.id, "sk-b-secret"]) expect({ tool: tool.name, leaked: r.text.includes(leak) }).toEqual({ tool: tool.name, leaked: false });
          // Most calls must pass argument validation and be refused by the operation itself (B's object is not found).
          if (/not_found|no_provider/.test(r.json.result?.content?.[0]?.text ?? "")) reachedB += 1;
        }
      }
      expect(reachedB).toBeGreaterThanOrEqual(10);
      const resources = await mcpRpc(fetcher, BASE, token, "resources/list", {});
      expect(resources.status).toBe(200);
      expect(resources.text).not.toContain(nodeB.id);
      for (const uri of [`cms://${b.slug}/nodes/${nodeB.id}`, `cms://${a.slug}/nodes/${nodeB.id}`]) {
        const read = await mcpRpc(fetcher, BASE, token, "resources/read", { uri });
        expect(read.json.error?.code).toBe(-32002);
        expect(read.text).not.toContain(SECRET);
      }
      expect(await snapshot()).toEqual(before);
      expect(vendorCalls).toBe(0);
    });
  }
});
