import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { oauthGrants, oauthTokens } from "../db/schema";
import { createApp } from "../src/app";
import { loadConfig } from "../src/config";
import { hashToken } from "../src/lib/tokens";
import { BASE, harness, seedProject } from "./helpers";
import { authorizeInBrowser, authorizeUrl, type Fetcher, mcpRpc, pkce, postForm, seedUser } from "./oauth.helpers";

// Issue 12 §4: a refresh-token family has an absolute lifetime (OAUTH_REFRESH_FAMILY_TTL) from the
// consent; rotating the refresh token does not extend it. Time moves through the app's own clock.
const RESOURCE = `${BASE}/mcp`;
const REDIRECT = "http://127.0.0.1:43125/callback";
const HOUR = 3600_000;
const ENV = {
  OAUTH_REGISTER_RATE_LIMIT: "1000000",
  OAUTH_TOKEN_RATE_LIMIT: "1000000",
  OAUTH_SIGNIN_RATE_LIMIT: "1000000",
  OAUTH_ACCESS_TOKEN_TTL: "3600",
  OAUTH_REFRESH_TOKEN_TTL: "43200", // 12 h: every refresh token below is fresh when presented
  OAUTH_REFRESH_FAMILY_TTL: "86400", // 1 day
};

describe("refresh-token families have an absolute lifetime", async () => {
  let clock = Date.now();
  const t0 = clock;
  const h = await harness(ENV, { now: () => new Date(clock) });
  const fetcher: Fetcher = (r) => h.app.handle(r);
  const project = await seedProject(h);
  const user = await seedUser(h, "editor");
  const token = (form: Record<string, string>, app: Fetcher = fetcher) => postForm(app, BASE, "/oauth/token", form);
  const refreshRow = async (refresh: string) =>
    (
      await h.deps.db
        .select()
        .from(oauthTokens)
        .where(eq(oauthTokens.tokenHash, hashToken(refresh)))
        .limit(1)
    )[0];

  async function authorized(app: Fetcher = fetcher): Promise<{ clientId: string; grantId: string; access: string; refresh: string }> {
    const reg = await h.request("POST", "/oauth/register", { key: null, body: { client_name: "Family Agent", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" } });
    if (reg.status !== 201) throw new Error(reg.text);
    const clientId: string = reg.json.client_id;
    const { verifier, challenge } = pkce();
    const url = authorizeUrl(BASE, { response_type: "code", client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: "S256", state: "s", resource: RESOURCE });
    const done = await authorizeInBrowser(app, url, { email: user.email, password: user.password, projectId: project.id });
    const code = new URL(done.location).searchParams.get("code")!;
    const res = await token({ grant_type: "authorization_code", client_id: clientId, code, code_verifier: verifier, redirect_uri: REDIRECT, resource: RESOURCE }, app);
    expect(res.status).toBe(200);
    const row = await refreshRow(res.json.refresh_token);
    return { clientId, grantId: row!.grantId, access: res.json.access_token, refresh: res.json.refresh_token };
  }

  test("refreshing works within the lifetime, tokens never outlive it, and past it a fresh refresh token is refused with invalid_grant", async () => {
    clock = t0;
    const a = await authorized();
    const [grant] = await h.deps.db.select().from(oauthGrants).where(eq(oauthGrants.id, a.grantId));
    const end = grant!.createdAt.getTime() + 24 * HOUR;
    let refresh = a.refresh;
    let access = a.access;
    for (const at of [10, 20, 23.5]) {
      clock = t0 + at * HOUR;
      const res = await token({ grant_type: "refresh_token", client_id: a.clientId, refresh_token: refresh });
      expect({ at, status: res.status }).toEqual({ at, status: 200 });
      refresh = res.json.refresh_token;
      access = res.json.access_token;
      // Nothing the family issues reaches past its end: the refresh token, the access token and expires_in.
      const row = await refreshRow(refresh);
      expect(row!.expiresAt.getTime()).toBe(Math.min(clock + 12 * HOUR, end));
      expect(res.json.expires_in).toBe(Math.ceil((Math.min(clock + HOUR, end) - clock) / 1000));
    }
    clock = t0 + 23.75 * HOUR;
    expect((await mcpRpc(fetcher, BASE, access, "tools/call", { name: "get_project", arguments: {} })).status).toBe(200);

    clock = end + 1000;
    const late = await token({ grant_type: "refresh_token", client_id: a.clientId, refresh_token: refresh });
    expect(late.status).toBe(400);
    expect(late.json.error).toBe("invalid_grant");
    expect(late.headers.get("cache-control")).toBe("no-store");
    // The refused token was not spent and nothing new was issued.
    expect((await refreshRow(refresh))!.usedAt).toBeNull();
    const tokens = await h.deps.db.select().from(oauthTokens).where(eq(oauthTokens.grantId, a.grantId));
    expect(tokens.every((t) => t.expiresAt.getTime() <= end)).toBe(true);
    // The last access token has run out with its family.
    expect((await mcpRpc(fetcher, BASE, access, "tools/call", { name: "get_project", arguments: {} })).status).toBe(401);
  });

  test("a shortened lifetime applies to families already issued: a refresh token still valid for hours is refused", async () => {
    // Issued under a 30-day lifetime; the operator then sets 1 day (or the tokens predate the setting).
    clock = t0;
    const longApp = createApp({ ...h.deps, config: loadConfig({ LOG_LEVEL: "silent", PUBLIC_URL: BASE, SEED_DEMO: "false", ...ENV, OAUTH_REFRESH_FAMILY_TTL: String(30 * 86_400) }) }).app;
    const longFetcher: Fetcher = (r) => longApp.handle(r);
    const a = await authorized(longFetcher);
    clock = t0 + 10 * HOUR;
    const first = await token({ grant_type: "refresh_token", client_id: a.clientId, refresh_token: a.refresh }, longFetcher);
    expect(first.status).toBe(200);
    clock = t0 + 20 * HOUR;
    const res = await token({ grant_type: "refresh_token", client_id: a.clientId, refresh_token: first.json.refresh_token }, longFetcher);
    expect(res.status).toBe(200);
    const fresh = await refreshRow(res.json.refresh_token);
    expect(fresh!.expiresAt.getTime()).toBe(clock + 12 * HOUR);

    clock = t0 + 25 * HOUR; // the refresh token has 7 hours left; the 1-day family is over
    const refused = await token({ grant_type: "refresh_token", client_id: a.clientId, refresh_token: res.json.refresh_token });
    expect(refused.status).toBe(400);
    expect(refused.json.error).toBe("invalid_grant");
    expect((await refreshRow(res.json.refresh_token))!.usedAt).toBeNull();
    // Under the 30-day lifetime the same token still works: the refusal is the family's age, nothing else.
    const ok = await token({ grant_type: "refresh_token", client_id: a.clientId, refresh_token: res.json.refresh_token }, longFetcher);
    expect(ok.status).toBe(200);
  });
});
