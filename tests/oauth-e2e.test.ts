// End to end over a listening server with two independent OAuth clients: the MCP SDK's own
// client auth, and oauth4webapi. Each starts from nothing but the /mcp URL.
import { afterAll, describe, expect, test } from "bun:test";
import { auth, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InvalidGrantError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type { OAuthClientMetadata } from "@modelcontextprotocol/sdk/shared/auth.js";
import { eq } from "drizzle-orm";
import * as oauth from "oauth4webapi";
import { oauthGrants, oauthTokens } from "../db/schema";
import { hashToken } from "../src/lib/tokens";

/** The parallel-refresh window the tests that need one configure (OAUTH_REFRESH_REUSE_GRACE=60). */
const REFRESH_REUSE_GRACE_MS = 60_000;

import { HIGH_LIMITS, harness, seedNode, seedProject, type TestHarness } from "./helpers";
import { authorizeInBrowser, type Fetcher, MemoryClientProvider, metadataDocumentFetch, seedUser } from "./oauth.helpers";

// A browser does not follow the final redirect to a loopback client here: we read its Location.
const browser: Fetcher = (r) => fetch(r, { redirect: "manual" });

describe("OAuth end to end", async () => {
  let h: TestHarness | null = null;
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (r) => h!.app.handle(r) });
  const base = `http://127.0.0.1:${server.port}`;
  const mcpUrl = new URL(`${base}/mcp`);
  // What the server fetches from outside: only client metadata documents, served from this map.
  const documents = new Map<string, unknown>();
  const outbound = metadataDocumentFetch(documents);
  h = await harness({ ...HIGH_LIMITS, PUBLIC_URL: base }, { fetch: outbound, resolveHost: async () => ["93.184.216.34"] });
  const project = await seedProject(h);
  const user = await seedUser(h, "editor", [project.id]);
  afterAll(() => server.stop(true));

  /** An OAuthClientProvider whose "browser" is the headless page walk. */
  class HeadlessProvider extends MemoryClientProvider {
    readonly redirectUrl = "http://127.0.0.1:47001/callback";
    constructor(readonly clientMetadataUrl?: string) {
      super();
    }
    private lastState = "";
    code: string | null = null;
    redirects = 0;
    get clientMetadata(): OAuthClientMetadata {
      return {
        client_name: "MCP SDK e2e",
        redirect_uris: [this.redirectUrl],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      };
    }
    state(): string {
      this.lastState = crypto.randomUUID();
      return this.lastState;
    }
    async redirectToAuthorization(url: URL): Promise<void> {
      this.redirects += 1;
      expect(url.searchParams.get("code_challenge_method")).toBe("S256");
      expect(url.searchParams.get("resource")).toBe(mcpUrl.href);
      const r = await authorizeInBrowser(browser, url.href, { email: user.email, password: user.password, projectId: project.id });
      const loc = new URL(r.location);
      expect(loc.searchParams.get("state")).toBe(this.lastState);
      expect(loc.searchParams.get("iss")).toBe(base);
      this.code = loc.searchParams.get("code");
    }
  }

  test("MCP SDK: 401 → discovery → registration → consent → token → tools → refresh", async () => {
    const node = await seedNode(h!, project.id, { slug: "sdk-hello", title: "Hello from SDK" });
    const provider = new HeadlessProvider();

    // The first connection is refused; the SDK follows WWW-Authenticate to the metadata, registers and "redirects".
    const first = new Client({ name: "sdk-e2e", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
    let refused: unknown = null;
    await first.connect(transport).catch((e) => (refused = e));
    expect(refused).toBeInstanceOf(UnauthorizedError);
    expect(provider.redirects).toBe(1);
    expect(provider.clientInformation()?.client_id).toBeTruthy();
    expect(provider.code).toMatch(/^cms_code_/);
    await transport.finishAuth(provider.code!);
    const tokens = provider.tokens()!;
    expect(tokens.access_token).toMatch(/^cms_at_/);
    expect(tokens.refresh_token).toMatch(/^cms_rt_/);
    expect(tokens.scope).toBe("content:read content:write content:publish ai:read");

    const client = new Client({ name: "sdk-e2e", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain("get_node");
    const read = await client.callTool({ name: "get_node", arguments: { id: node.id } });
    expect(read.isError).toBeFalsy();
    expect((read.structuredContent as { node: { title: string } }).node.title).toBe("Hello from SDK");
    const created = await client.callTool({ name: "create_node", arguments: { slug: "made-by-sdk", title: "Made by SDK", type: "page" } });
    expect(created.isError).toBeFalsy();
    await client.close();

    // auth() again with stored tokens refreshes: a new pair, and the old refresh token is spent.
    expect(await auth(provider, { serverUrl: mcpUrl })).toBe("AUTHORIZED");
    const rotated = provider.tokens()!;
    expect(rotated.refresh_token).not.toBe(tokens.refresh_token);
    const [old] = await h!.deps.db
      .select()
      .from(oauthTokens)
      .where(eq(oauthTokens.tokenHash, hashToken(tokens.refresh_token!)));
    expect(old!.usedAt).not.toBeNull();
    const again = new Client({ name: "sdk-e2e", version: "1.0.0" });
    await again.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
    expect((await again.callTool({ name: "get_project", arguments: {} })).structuredContent).toMatchObject({ project: { id: project.id } });
    await again.close();
    expect(provider.redirects).toBe(1);
  });

  test("MCP SDK with a Client ID Metadata Document instead of registration", async () => {
    const metadataUrl = `https://sdk-${crypto.randomUUID().slice(0, 8)}.example/oauth/client.json`;
    const provider = new HeadlessProvider(metadataUrl);
    documents.set(metadataUrl, { ...provider.clientMetadata, client_id: metadataUrl, client_name: "SDK via metadata document" });
    const before = await h!.request("GET", "/admin/oauth/clients");
    expect(await auth(provider, { serverUrl: mcpUrl })).toBe("REDIRECT");
    expect(provider.clientInformation()?.client_id).toBe(metadataUrl);
    expect(await auth(provider, { serverUrl: mcpUrl, authorizationCode: provider.code! })).toBe("AUTHORIZED");
    const client = new Client({ name: "sdk-cimd", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
    expect((await client.callTool({ name: "get_project", arguments: {} })).structuredContent).toMatchObject({ project: { id: project.id } });
    await client.close();
    // No registration happened: the only new client is the document's URL.
    const after = await h!.request("GET", "/admin/oauth/clients");
    const added = after.json.data.filter((c: { client_id: string }) => !before.json.data.some((b: { client_id: string }) => b.client_id === c.client_id));
    expect(added.map((c: { client_id: string }) => c.client_id)).toEqual([metadataUrl]);
  });

  test("MCP SDK: a member of A cannot obtain a token for B, and loses A mid-session when removed", async () => {
    const a2 = await seedProject(h!);
    const b = await seedProject(h!);
    const member = await seedUser(h!, "editor", [project.id, a2.id]);
    /** The same SDK client flow; its "browser" signs in as the member and picks `target`. */
    class MemberProvider extends HeadlessProvider {
      target = b.id;
      override async redirectToAuthorization(url: URL): Promise<void> {
        this.redirects += 1;
        const r = await authorizeInBrowser(browser, url.href, { email: member.email, password: member.password, projectId: this.target });
        this.code = new URL(r.location).searchParams.get("code");
      }
    }
    const provider = new MemberProvider();
    // Asking for B: the page refuses (403), the SDK's auth() fails, and no token exists.
    const refused = await auth(provider, { serverUrl: mcpUrl }).catch((e: Error) => e);
    expect(String(refused)).toContain("authorization page answered 403");
    expect(provider.tokens()).toBeUndefined();
    expect(await h!.deps.db.select().from(oauthGrants).where(eq(oauthGrants.userId, member.id))).toHaveLength(0);

    // Asking for A works through to tools.
    provider.target = project.id;
    expect(await auth(provider, { serverUrl: mcpUrl })).toBe("REDIRECT");
    expect(await auth(provider, { serverUrl: mcpUrl, authorizationCode: provider.code! })).toBe("AUTHORIZED");
    const client = new Client({ name: "sdk-member", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
    expect((await client.callTool({ name: "get_project", arguments: {} })).structuredContent).toMatchObject({ project: { id: project.id } });

    // Removed from A while connected: the next call is refused (401), and the refresh the SDK then
    // attempts is refused too (invalid_grant), so the session ends there.
    const removedAt = Date.now();
    expect((await h!.request("DELETE", `/admin/p/${project.id}/members/${member.id}`)).status).toBe(204);
    const after = await client.callTool({ name: "get_project", arguments: {} }).catch((e: Error) => e);
    expect(after).toBeInstanceOf(InvalidGrantError);
    expect(String(after)).toContain("no longer holds any of the granted scopes in this project");
    // Nothing was issued after the removal (the refresh was refused, not answered with narrower tokens).
    const issued = await h!.deps.db.select().from(oauthTokens).where(eq(oauthTokens.userId, member.id));
    expect(issued.filter((t) => t.createdAt.getTime() >= removedAt)).toHaveLength(0);
    expect(issued.filter((t) => t.kind === "access")).toHaveLength(1);
    await client.close().catch(() => {});
  });

  test("oauth4webapi: 401 → discovery → registration → authorize → token → tools/call → refresh → revoke", async () => {
    const insecure = { [oauth.allowInsecureRequests]: true } as const;
    const rpc = (accessToken: string, method: string, params: unknown = {}) =>
      oauth.protectedResourceRequest(
        accessToken,
        "POST",
        mcpUrl,
        new Headers({ "content-type": "application/json", accept: "application/json, text/event-stream" }),
        JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
        insecure,
      );

    // 401 with a challenge naming the resource metadata.
    const challenge = await rpc("cms_at_not-a-token", "tools/list").catch((e) => e);
    expect(challenge).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    const bearer = (challenge as oauth.WWWAuthenticateChallengeError).cause.find((c) => c.scheme === "bearer")!;
    expect(bearer.parameters.resource_metadata).toBe(`${base}/.well-known/oauth-protected-resource/mcp`);
    expect(bearer.parameters.scope).toBe("content:read content:write content:publish ai:read");

    const rs = await oauth.processResourceDiscoveryResponse(mcpUrl, await oauth.resourceDiscoveryRequest(mcpUrl, insecure));
    const issuer = new URL(rs.authorization_servers![0]!);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...insecure, algorithm: "oauth2" }));
    expect(as.issuer).toBe(base);
    expect(as.code_challenge_methods_supported).toEqual(["S256"]);

    const redirectUri = "http://127.0.0.1:47002/cb";
    const registered = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(
        as,
        { redirect_uris: [redirectUri], token_endpoint_auth_method: "client_secret_basic", client_name: "oauth4webapi e2e", grant_types: ["authorization_code", "refresh_token"] },
        insecure,
      ),
    );
    const client: oauth.Client = { client_id: registered.client_id };
    const clientAuth = oauth.ClientSecretBasic(registered.client_secret as string);

    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const authUrl = new URL(as.authorization_endpoint!);
    for (const [k, v] of Object.entries({
      client_id: client.client_id,
      redirect_uri: redirectUri,
      response_type: "code",
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      state,
      scope: rs.scopes_supported!.join(" "),
      resource: rs.resource,
    }))
      authUrl.searchParams.set(k, v);
    const walked = await authorizeInBrowser(browser, authUrl.href, { email: user.email, password: user.password, projectId: project.id, scopes: ["content:read"] });
    // validateAuthResponse checks state and the RFC 9207 iss parameter.
    const params = oauth.validateAuthResponse(as, client, new URL(walked.location), state);

    const tokenOpts = { ...insecure, additionalParameters: { resource: rs.resource } };
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, redirectUri, verifier, tokenOpts));
    expect(tokens.token_type).toBe("bearer");
    expect(tokens.scope).toBe("content:read");

    const call = await rpc(tokens.access_token, "tools/call", { name: "get_project", arguments: {} });
    expect(call.status).toBe(200);
    expect((await call.json()).result.structuredContent.project.id).toBe(project.id);

    const refreshed = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token!, tokenOpts));
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect((await rpc(refreshed.access_token, "tools/call", { name: "get_project", arguments: {} })).status).toBe(200);

    // Reusing the first refresh token (past the grace for parallel refreshes) is refused and takes the family down.
    const realNow = h!.deps.now;
    (h!.deps as { now: () => Date }).now = () => new Date(Date.now() + REFRESH_REUSE_GRACE_MS + 5_000);
    try {
      const reuse = await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token!, tokenOpts);
      const reuseError = await oauth.processRefreshTokenResponse(as, client, reuse).catch((e) => e);
      expect(reuseError).toBeInstanceOf(oauth.ResponseBodyError);
      expect((reuseError as oauth.ResponseBodyError).error).toBe("invalid_grant");
      expect(await rpc(refreshed.access_token, "tools/list").catch((e) => e)).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    } finally {
      (h!.deps as { now: () => Date }).now = realNow;
    }

    // A fresh authorization, then RFC 7009 revocation of its refresh token.
    const v2 = oauth.generateRandomCodeVerifier();
    const s2 = oauth.generateRandomState();
    authUrl.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(v2));
    authUrl.searchParams.set("state", s2);
    const walked2 = await authorizeInBrowser(browser, authUrl.href, { email: user.email, password: user.password, projectId: project.id });
    const t2 = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, clientAuth, oauth.validateAuthResponse(as, client, new URL(walked2.location), s2), redirectUri, v2, tokenOpts),
    );
    expect((await rpc(t2.access_token, "tools/list")).status).toBe(200);
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, clientAuth, t2.refresh_token!, insecure));
    expect(await rpc(t2.access_token, "tools/list").catch((e) => e)).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    const afterRevoke = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, clientAuth, t2.refresh_token!, tokenOpts)).catch((e) => e);
    expect((afterRevoke as oauth.ResponseBodyError).error).toBe("invalid_grant");
  });

  test("oauth4webapi sees the RFC 9700 refusals: wrong verifier, wrong redirect URI, another client's code", async () => {
    const insecure = { [oauth.allowInsecureRequests]: true } as const;
    const issuer = new URL(base);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...insecure, algorithm: "oauth2" }));
    const redirectUri = "http://127.0.0.1:47003/cb";
    const registerPublic = async (): Promise<oauth.Client> =>
      oauth.processDynamicClientRegistrationResponse(await oauth.dynamicClientRegistrationRequest(as, { redirect_uris: [redirectUri], token_endpoint_auth_method: "none" }, insecure));
    const alice = await registerPublic();
    const mallory = await registerPublic();
    const none = oauth.None();
    const opts = { ...insecure, additionalParameters: { resource: `${base}/mcp` } };

    const codeFor = async (client: oauth.Client, verifier: string, presentedBy: oauth.Client = client): Promise<URLSearchParams> => {
      const state = oauth.generateRandomState();
      const u = new URL(as.authorization_endpoint!);
      u.search = new URLSearchParams({
        client_id: client.client_id,
        redirect_uri: redirectUri,
        response_type: "code",
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: "S256",
        state,
        resource: `${base}/mcp`,
      }).toString();
      const walked = await authorizeInBrowser(browser, u.href, { email: user.email, password: user.password, projectId: project.id });
      return oauth.validateAuthResponse(as, presentedBy, new URL(walked.location), state);
    };
    const grantError = async (res: Promise<Response>, client: oauth.Client): Promise<string> => {
      const err = await oauth.processAuthorizationCodeResponse(as, client, await res).catch((e) => e);
      expect(err).toBeInstanceOf(oauth.ResponseBodyError);
      return (err as oauth.ResponseBodyError).error;
    };

    const v1 = oauth.generateRandomCodeVerifier();
    const p1 = await codeFor(alice, v1);
    expect(await grantError(oauth.authorizationCodeGrantRequest(as, alice, none, p1, redirectUri, oauth.generateRandomCodeVerifier(), opts), alice)).toBe("invalid_grant");

    const v2 = oauth.generateRandomCodeVerifier();
    const p2 = await codeFor(alice, v2);
    expect(await grantError(oauth.authorizationCodeGrantRequest(as, alice, none, p2, "http://127.0.0.1:47003/other", v2, opts), alice)).toBe("invalid_grant");

    const v3 = oauth.generateRandomCodeVerifier();
    // Mallory holds Alice's code and verifier, but the code was issued to Alice.
    const stolen = await codeFor(alice, v3, mallory);
    expect(await grantError(oauth.authorizationCodeGrantRequest(as, mallory, none, stolen, redirectUri, v3, opts), mallory)).toBe("invalid_grant");
  });
});
