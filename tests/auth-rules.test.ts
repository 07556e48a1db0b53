import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { adminKeys, mcpTokens, oauthClients, oauthGrants, oauthTokens, users } from "../db/schema";
import { createAdminKey } from "../src/keys/service";
import { uuidv7 } from "../src/lib/ids";
import { generateToken, hashToken } from "../src/lib/tokens";
import { newNonce, pageKey, SIGN_IN_TTL_MS, signedInUser, signInValue } from "../src/oauth/session";
import { BASE, harness, keyWith, seedNode, seedProject, type TestHarness } from "./helpers";
import { seedUser } from "./oauth.helpers";

/** An OAuth access token of an editor expiring at `expiresAt` (the rows the token endpoint writes). */
async function oauthToken(h: TestHarness, projectId: string, expiresAt: Date): Promise<string> {
  const db = h.deps.db;
  const user = await seedUser(h, "editor", [projectId]);
  const clientId = `edge-${uuidv7()}`;
  await db.insert(oauthClients).values({ id: clientId, redirectUris: ["http://127.0.0.1/cb"], tokenEndpointAuthMethod: "none", grantTypes: ["authorization_code"], responseTypes: ["code"] });
  const grantId = uuidv7();
  const scopes = ["content:read"];
  await db.insert(oauthGrants).values({ id: grantId, clientId, userId: user.id, projectId, scopes, resource: `${BASE}/mcp` });
  const token = generateToken("cms_at_");
  await db.insert(oauthTokens).values({ id: uuidv7(), tokenHash: hashToken(token), kind: "access", grantId, clientId, userId: user.id, projectId, scopes, resource: `${BASE}/mcp`, expiresAt });
  return token;
}

// The edges of src/auth.ts that mutation testing (tests/MUTATION.md) found unguarded: the instant a
// credential expires, the minute-precision last_used_at of MCP tokens, and the longest bearer taken.

describe("auth rules at their edges (injectable clock)", async () => {
  let now = Date.parse("2030-01-01T00:00:00.000Z");
  const h = await harness({}, { now: () => new Date(now) });
  const p = await seedProject(h);
  const mcp = async (token: string, authorization = `Bearer ${token}`) => {
    const res = await h.app.handle(
      new Request("http://localhost/mcp", {
        method: "POST",
        headers: { ...(authorization ? { authorization } : {}), "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      }),
    );
    return { status: res.status, challenge: res.headers.get("www-authenticate") };
  };
  const lastUsed = async (id: string) => (await h.deps.db.select({ at: mcpTokens.lastUsedAt }).from(mcpTokens).where(eq(mcpTokens.id, id)))[0]?.at?.getTime() ?? null;

  test("/mcp without a bearer (none, or another scheme) is 401 with a challenge that names no invalid token", async () => {
    for (const authorization of ["", "Basic dXNlcjpwYXNz", "Bearer"]) {
      const res = await mcp("", authorization);
      expect({ authorization, status: res.status }).toEqual({ authorization, status: 401 });
      expect(res.challenge).toStartWith("Bearer resource_metadata=");
      expect(res.challenge).not.toContain("invalid_token");
    }
  });

  test("an MCP token works until the millisecond before expires_at and is refused (401) at expires_at", async () => {
    const expires = now + 3_600_000;
    const made = await h.request("POST", `/admin/p/${p.slug}/ai/mcp/tokens`, { body: { name: "edge", expires_at: new Date(expires).toISOString() } });
    expect(made.status).toBe(201);
    now = expires - 1;
    expect((await mcp(made.json.data.token)).status).toBe(200);
    now = expires;
    const refused = await mcp(made.json.data.token);
    expect(refused.status).toBe(401);
    expect(refused.challenge).toStartWith("Bearer ");
    now = expires + 1;
    expect((await mcp(made.json.data.token)).status).toBe(401);
  });

  test("an OAuth access token works until the millisecond before its expiry and is refused (401) at it", async () => {
    now = Date.parse("2030-03-01T00:00:00.000Z");
    const expires = now + 3_600_000;
    const token = await oauthToken(h, p.id, new Date(expires));
    now = expires - 1;
    expect((await mcp(token)).status).toBe(200);
    now = expires;
    expect((await mcp(token)).status).toBe(401);
  });

  test("an MCP token's last_used_at is written on first use, then at most once a minute (after 60 s, not at 60 s)", async () => {
    now = Date.parse("2030-02-01T00:00:00.000Z");
    const made = await h.request("POST", `/admin/p/${p.slug}/ai/mcp/tokens`, { body: { name: "usage" } });
    const { id, token } = made.json.data;
    expect(await lastUsed(id)).toBeNull();
    const first = now;
    expect((await mcp(token)).status).toBe(200);
    expect(await lastUsed(id)).toBe(first);
    for (const later of [1_000, 30_000, 60_000]) {
      now = first + later;
      expect((await mcp(token)).status).toBe(200);
      expect({ later, at: await lastUsed(id) }).toEqual({ later, at: first });
    }
    now = first + 60_001;
    expect((await mcp(token)).status).toBe(200);
    expect(await lastUsed(id)).toBe(first + 60_001);
  });

  test("a 512-character bearer is looked up (an operator's ADMIN_TOKEN may be that long); 513 characters are refused unread, even when stored", async () => {
    // Unique per run: a reused PostgreSQL database keeps the keys of earlier runs.
    const long = `op_${crypto.randomUUID()}`.padEnd(512, "k");
    const { key } = await createAdminKey(h.deps.db, { name: "long", scopes: ["projects:read"] }, null, new Date(now), long);
    const ok = await h.request("GET", "/admin/projects", { key: long });
    expect(ok.status).toBe(200);
    const [row] = await h.deps.db.select({ at: adminKeys.lastUsedAt }).from(adminKeys).where(eq(adminKeys.id, key.id));
    expect(row?.at?.getTime()).toBe(now);
    // Even a stored one (an ADMIN_TOKEN of 513 characters, which the configuration admits): refused before any lookup.
    const stored = `${long}k`;
    const { key: over } = await createAdminKey(h.deps.db, { name: "too long", scopes: ["projects:read"] }, null, new Date(now), stored);
    const tooLong = await h.request("GET", "/admin/projects", { key: stored });
    expect(tooLong.status).toBe(401);
    expect(tooLong.headers.get("www-authenticate")).toBe('Bearer realm="admin", error="invalid_token"');
    const [unused] = await h.deps.db.select({ at: adminKeys.lastUsedAt }).from(adminKeys).where(eq(adminKeys.id, over.id));
    expect(unused?.at).toBeNull();
  });

  test("an operation needing two scopes, both missing: 403 names the first one only (message, details, challenge)", async () => {
    const n = await seedNode(h, p.slug, { slug: "to-translate" });
    const reader = await keyWith(h, ["content:read"]);
    const res = await h.request("POST", `/admin/p/${p.slug}/nodes/${n.id}/translations/fr/translate`, { key: reader, body: {} });
    expect([res.status, res.json.error.code, res.json.error.message]).toEqual([403, "insufficient_scope", "this credential lacks the content:write scope"]);
    expect(res.json.error.details).toEqual({ required: "content:write" });
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="admin", error="insufficient_scope", scope="content:write"');
  });

  test("the consent page's sign-in cookie is good until the millisecond before it expires, and not at it", async () => {
    const user = await seedUser(h, "editor", [p.id]);
    const [row] = await h.deps.db.select({ hash: users.passwordHash }).from(users).where(eq(users.id, user.id));
    const key = await pageKey(h.deps.db);
    const nonce = newNonce();
    const signedAt = new Date("2030-04-01T00:00:00.000Z");
    const value = signInValue(key, user.id, row!.hash, nonce, signedAt);
    const at = (ms: number) => signedInUser(h.deps.db, key, value, nonce, new Date(signedAt.getTime() + ms));
    expect((await at(SIGN_IN_TTL_MS - 1))?.id).toBe(user.id);
    expect(await at(SIGN_IN_TTL_MS)).toBeNull();
    expect(await at(SIGN_IN_TTL_MS + 60_000)).toBeNull();
  });
});
