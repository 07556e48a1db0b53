// Cross-runtime: one real service (XRT_RUNTIME, XRT_DB) with AI_ALLOW_PRIVATE_URLS=true, so
// translation reaches the loopback fake vendor. Each test seeds what it needs through HTTP only.
import { afterAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import * as oauth from "oauth4webapi";
import { startFakeVendors } from "../fake-vendors";
import { TOOL_NAMES } from "../mcp-harness";
import { authorizeInBrowser } from "../oauth.helpers";
import { seedNode, seedProject } from "./seed";
import { ADMIN_EMAIL, ADMIN_PASSWORD, ADMIN_TOKEN, describeRun, RUNTIME, reply, runsRequestedRuntime, startService, stopAll } from "./service";

describe(`service over HTTP: ${describeRun()}`, async () => {
  afterAll(async () => {
    await stopAll();
    await vendors.stop();
  });
  const vendors = await startFakeVendors();
  const svc = await startService({ env: { AI_ALLOW_PRIVATE_URLS: "true" } });

  test(`the service process runs ${RUNTIME}`, () => {
    const { ok, exe } = runsRequestedRuntime(svc.servicePid());
    if (!ok) throw new Error(`the service runs ${exe}, not the requested ${RUNTIME}`);
  });

  test("health and readiness", async () => {
    const health = await reply(await fetch(`${svc.base}/healthz`));
    expect(health.status).toBe(200);
    expect(health.json).toEqual({ status: "ok" });
    const ready = await reply(await fetch(`${svc.base}/readyz`));
    expect(ready.status).toBe(200);
    expect(ready.json).toEqual({ status: "ready" });
  });

  test("the studio: its page under the CSP for every route, a hashed asset immutable, a sign-in and the admin API with the session", async () => {
    const page = await fetch(`${svc.base}/studio/p/any/nodes/x`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self';");
    expect(page.headers.get("cache-control")).toBe("no-cache");
    const html = await page.text();
    const asset = /src="(\/studio\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(asset).toBeDefined();
    const js = await fetch(`${svc.base}${asset}`);
    expect(js.status).toBe(200);
    expect(js.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    await js.arrayBuffer();
    const signIn = await fetch(`${svc.base}/studio/api/session`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-cms-studio": "1", "sec-fetch-site": "same-origin" },
      body: JSON.stringify({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
    });
    expect(signIn.status).toBe(200);
    const cookie = (signIn.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    expect(cookie).toMatch(/^cms_studio=/);
    const projects = await fetch(`${svc.base}/admin/projects`, { headers: { cookie, "x-cms-studio": "1", "sec-fetch-site": "same-origin" } });
    expect(projects.status).toBe(200);
    expect((await fetch(`${svc.base}/admin/projects`, { headers: { cookie } })).status).toBe(403);
  });

  test("delivery: a published page with a strong ETag; If-None-Match gives 304 with no body", async () => {
    const p = await seedProject(svc);
    await seedNode(svc, p.slug, { slug: "about", title: "About us" }, true);
    const url = `${svc.base}/api/p/${p.slug}/nodes/by-path/about`;
    const first = await reply(await fetch(url));
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(first.json.data).toMatchObject({ slug: "about", title: "About us", path: "about", locale: "en" });
    const etag = first.headers.get("etag")!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{16,}(\.gz)?"$/); // the gzip representation has its own tag
    const again = await fetch(url, { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
    expect(again.headers.get("etag")).toBe(etag);
    expect(await again.text()).toBe("");
    const missing = await reply(await fetch(`${svc.base}/api/p/${p.slug}/nodes/by-path/nowhere`));
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe("not_found");
  });

  test("an admin write is seen by delivery (new body, new ETag, the old ETag no longer 304)", async () => {
    const p = await seedProject(svc);
    const node = await seedNode(svc, p.slug, { slug: "news", title: "Old title" }, true);
    const url = `${svc.base}/api/p/${p.slug}/nodes/by-path/news`;
    const before = await fetch(url);
    expect((await before.json()).data.title).toBe("Old title");
    const etag = before.headers.get("etag")!;
    const patched = await svc.admin("PATCH", `/admin/p/${p.slug}/nodes/${node.id}`, { title: "New title" });
    expect(patched.status).toBe(200);
    expect((await svc.admin("POST", `/admin/p/${p.slug}/nodes/${node.id}/publish`)).status).toBe(200);
    const after = await fetch(url, { headers: { "if-none-match": etag } });
    expect(after.status).toBe(200);
    expect((await after.json()).data.title).toBe("New title");
    expect(after.headers.get("etag")).not.toBe(etag);
  });

  test("MCP with a static token through the SDK's Client: initialize, tools/list, tools/call", async () => {
    const p = await seedProject(svc);
    const node = await seedNode(svc, p.slug, { slug: "home", title: "Home" });
    const minted = await svc.admin("POST", `/admin/p/${p.slug}/ai/mcp/tokens`, { name: "xrt" });
    expect(minted.status).toBe(201);
    const client = new Client({ name: "xrt", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(`${svc.base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${minted.json.data.token}` } } });
    await client.connect(transport);
    try {
      expect(client.getServerVersion()).toMatchObject({ name: "content-service" });
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
      const read = await client.callTool({ name: "get_node", arguments: { id: node.id } });
      expect(read.isError).toBeFalsy();
      expect((read.structuredContent as { node: { title: string } }).node.title).toBe("Home");
      const made = await client.callTool({ name: "create_node", arguments: { slug: "by-mcp", title: "By MCP", type: "page" } });
      expect(made.isError).toBeFalsy();
      const listed = await svc.admin("GET", `/admin/p/${p.slug}/nodes`);
      expect(listed.json.data.map((n: { slug: string }) => n.slug).sort()).toEqual(["by-mcp", "home"]);
    } finally {
      await client.close();
    }
    const refused = await fetch(`${svc.base}/mcp`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: "{}" });
    expect(refused.status).toBe(401);
  });

  test("MCP 2026-07-28: server/discover and a tools/call without initialize", async () => {
    const p = await seedProject(svc);
    const { json } = await svc.admin("POST", `/admin/p/${p.slug}/ai/mcp/tokens`, { name: "xrt-2026" });
    const V = "2026-07-28";
    const meta = { "io.modelcontextprotocol/protocolVersion": V, "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/clientInfo": { name: "xrt", version: "1" } };
    const post = async (method: string, params: Record<string, unknown>, name?: string) =>
      reply(
        await fetch(`${svc.base}/mcp`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${json.data.token}`,
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-protocol-version": V,
            "mcp-method": method,
            ...(name ? { "mcp-name": name } : {}),
          },
          body: JSON.stringify({ jsonrpc: "2.0", id: 7, method, params: { ...params, _meta: meta } }),
        }),
      );
    const discover = await post("server/discover", {});
    expect(discover.status).toBe(200);
    expect(discover.json.id).toBe(7);
    expect(discover.json.result.supportedVersions).toEqual(["2026-07-28", "2025-11-25"]);
    expect(discover.json.result._meta["io.modelcontextprotocol/serverInfo"]).toMatchObject({ name: "content-service" });
    const call = await post("tools/call", { name: "get_project", arguments: {} }, "get_project");
    expect(call.status).toBe(200);
    expect(call.json.result.structuredContent.project.id).toBe(p.id);
  });

  test("OAuth metadata: authorization server and protected resource, issuer = PUBLIC_URL", async () => {
    const as = await reply(await fetch(`${svc.base}/.well-known/oauth-authorization-server`));
    expect(as.status).toBe(200);
    expect(as.json).toMatchObject({
      issuer: svc.base,
      authorization_endpoint: `${svc.base}/oauth/authorize`,
      token_endpoint: `${svc.base}/oauth/token`,
      code_challenge_methods_supported: ["S256"],
    });
    const rs = await reply(await fetch(`${svc.base}/.well-known/oauth-protected-resource/mcp`));
    expect(rs.status).toBe(200);
    expect(rs.json).toMatchObject({ resource: `${svc.base}/mcp`, authorization_servers: [svc.base] });
  });

  test("OAuth with oauth4webapi: registration, consent page, code + PKCE, tools/call, refresh, reuse refused", async () => {
    const p = await seedProject(svc);
    const insecure = { [oauth.allowInsecureRequests]: true } as const;
    const mcpUrl = new URL(`${svc.base}/mcp`);
    const rpc = (token: string) =>
      oauth.protectedResourceRequest(
        token,
        "POST",
        mcpUrl,
        new Headers({ "content-type": "application/json", accept: "application/json, text/event-stream" }),
        JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get_project", arguments: {} } }),
        insecure,
      );
    const rs = await oauth.processResourceDiscoveryResponse(mcpUrl, await oauth.resourceDiscoveryRequest(mcpUrl, insecure));
    const issuer = new URL(rs.authorization_servers![0]!);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...insecure, algorithm: "oauth2" }));
    const redirectUri = "http://127.0.0.1:47009/cb";
    const registered = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(as, { redirect_uris: [redirectUri], token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"] }, insecure),
    );
    const client: oauth.Client = { client_id: registered.client_id };
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const authUrl = new URL(as.authorization_endpoint!);
    authUrl.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: redirectUri,
      response_type: "code",
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      state,
      scope: "content:read",
      resource: rs.resource,
    }).toString();
    // The consent page: sign in as the bootstrap owner (ADMIN_EMAIL/ADMIN_PASSWORD), pick the project, approve.
    const walked = await authorizeInBrowser((r) => fetch(r, { redirect: "manual" }), authUrl.href, { email: ADMIN_EMAIL, password: ADMIN_PASSWORD, projectId: p.id });
    expect(walked.pages.length).toBeGreaterThanOrEqual(2);
    const params = oauth.validateAuthResponse(as, client, new URL(walked.location), state);
    const opts = { ...insecure, additionalParameters: { resource: rs.resource } };
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri, verifier, opts));
    expect(tokens.access_token).toMatch(/^cms_at_/);
    expect(tokens.scope).toBe("content:read");
    const call = await rpc(tokens.access_token);
    expect(call.status).toBe(200);
    expect((await call.json()).result.structuredContent.project.id).toBe(p.id);

    const refreshed = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, opts));
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect((await rpc(refreshed.access_token)).status).toBe(200);
    // The spent refresh token is refused (strict single use by default).
    const reuse = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, opts)).catch((e) => e);
    expect(reuse).toBeInstanceOf(oauth.ResponseBodyError);
    expect((reuse as oauth.ResponseBodyError).error).toBe("invalid_grant");
  });

  test("translate against the loopback fake vendor (OpenAI and Anthropic wire); a vendor redirect is not followed", async () => {
    const p = await seedProject(svc);
    for (const kind of ["openai", "anthropic"] as const) {
      const key = `sk-xrt-${kind}-${crypto.randomUUID()}`;
      const prov = await svc.admin("POST", `/admin/p/${p.slug}/ai/providers`, { name: kind, kind, api_key: key, base_url: vendors.base("ok"), is_default: false });
      expect(prov.status).toBe(201);
      const before = vendors.received("ok").length;
      const tr = await svc.admin("POST", `/admin/p/${p.slug}/ai/translate`, { provider_id: prov.json.data.id, from: "en", to: "fr", text: "Hello world" });
      expect(tr.status).toBe(200);
      expect(tr.json.data.translation).toBe("[translated] Hello world");
      const got = vendors.received("ok").slice(before);
      expect(got.map((r) => r.protocol)).toEqual([kind]);
      expect(kind === "openai" ? got[0]!.headers.authorization : got[0]!.headers["x-api-key"]).toBe(kind === "openai" ? `Bearer ${key}` : key);
      expect(tr.text).not.toContain(key);
    }
    const redirecting = await svc.admin("POST", `/admin/p/${p.slug}/ai/providers`, { name: "moved", kind: "openai", api_key: "sk-xrt-moved", base_url: vendors.base("redirect"), is_default: false });
    const okBefore = vendors.received("ok").length;
    const moved = await svc.admin("POST", `/admin/p/${p.slug}/ai/translate`, { provider_id: redirecting.json.data.id, from: "en", to: "fr", text: "Hello" });
    expect(moved.status).toBe(502);
    expect(moved.json.error.code).toBe("provider_error");
    expect(vendors.received("ok").length).toBe(okBefore);
  });

  // Runs last: nothing above put a secret in the service's output (logs, start-up lines).
  test("no secret in the service's output: admin token, owner password, vendor keys, bearer tokens", () => {
    const out = svc.output();
    expect(out).toContain('"msg":"listening"');
    for (const secret of [ADMIN_TOKEN, ADMIN_PASSWORD, "sk-xrt-"]) expect(out).not.toContain(secret);
    expect(out).not.toMatch(/cms_(mcp|at|rt|code)_[A-Za-z0-9]/);
  });
});
