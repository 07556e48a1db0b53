// Issue 22 §5: with the database gone, the OAuth endpoints answer 503 as the admin API does (in
// the RFC form on the JSON endpoints, a page on the consent pages), never a raw error or a 500,
// and take part in readiness: /readyz says not ready after such a failure, as after an admin one.
// The database really goes away (delivery.helpers' outageDatabase: the PostgreSQL proxy cut, or the
// embedded database closed under the app); once PostgreSQL's connections are back, the same
// requests are answered as usual and the instance is ready again (a closed embedded database does
// not come back).
import { describe, expect, test } from "bun:test";
import { type OutageDb, outageDatabase } from "./delivery.helpers";
import { harness, seedProject, type TestHarness, type TestResponse, waitFor } from "./helpers";
import { authorizeUrl, pkce } from "./oauth.helpers";

const redirect = "http://127.0.0.1:9/cb";
const form = (fields: Record<string, string>) => ({ headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString() });

/** An app over a database that really goes away, with a registered public client and its authorization request. */
async function oauthOverOutage(): Promise<{ h: TestHarness; outage: OutageDb; clientId: string; query: Record<string, string> }> {
  const outage = await outageDatabase();
  const h = await harness({ OAUTH_REGISTER_RATE_LIMIT: "1000" }, { db: outage.db, dbHandle: outage.handle });
  await seedProject(h);
  const registered = await h.app.handle(
    new Request("http://localhost/oauth/register", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: [redirect], token_endpoint_auth_method: "none", client_name: "outage" }),
    }),
  );
  const clientId = ((await registered.json()) as { client_id: string }).client_id;
  const query = { response_type: "code", client_id: clientId, redirect_uri: redirect, code_challenge: pkce().challenge, code_challenge_method: "S256", resource: "http://localhost/mcp", state: "s" };
  return { h, outage, clientId, query };
}

const call = async (h: TestHarness, method: string, url: string, init: RequestInit): Promise<TestResponse> => {
  const res = await h.app.handle(new Request(url.startsWith("http") ? url : `http://localhost${url}`, { method, ...init }));
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, headers: res.headers, text, json };
};
const ready = async (h: TestHarness): Promise<number> => (await h.request("GET", "/readyz", { key: null })).status;
/** No driver's words reach the client. */
const DRIVER_TEXT = /ECONN|EPIPE|CONNECTION_|PGlite|Failed query/;

/**
 * Runs `send` with the database gone: /readyz must say not ready after it. Then, on PostgreSQL, the
 * database comes back: ready again, and `send` answered as usual (`usual` checks it).
 */
async function whileDown(s: Awaited<ReturnType<typeof oauthOverOutage>>, send: () => Promise<TestResponse>, down: (r: TestResponse) => void, usual: (r: TestResponse) => void): Promise<void> {
  try {
    await waitFor(async () => (await ready(s.h)) === 200, { timeout: 5000, what: "ready before" });
    await s.outage.cut();
    down(await send());
    expect(await ready(s.h)).toBe(503);
    if (!s.outage.restore) return;
    await s.outage.restore();
    await waitFor(async () => (await ready(s.h)) === 200, { timeout: 10_000, what: "ready after" });
    usual(await send());
  } finally {
    await s.outage.drop();
  }
}

describe("OAuth while the database is down", () => {
  const JSON_ENDPOINTS: [string, (clientId: string) => RequestInit, (r: TestResponse) => void][] = [
    [
      "/oauth/register",
      () => ({ headers: { "content-type": "application/json" }, body: JSON.stringify({ redirect_uris: [redirect], token_endpoint_auth_method: "none" }) }),
      (r) => expect(r.status).toBe(201),
    ],
    ["/oauth/token", (clientId) => form({ grant_type: "refresh_token", refresh_token: "cms_rt_x", client_id: clientId }), (r) => expect([r.status, r.json.error]).toEqual([400, "invalid_grant"])],
    ["/oauth/revoke", (clientId) => form({ token: "cms_rt_x", client_id: clientId }), (r) => expect(r.status).toBe(200)],
  ];
  test.each(JSON_ENDPOINTS)("%s: 503 temporarily_unavailable (RFC form), Retry-After, no-store; not ready", async (path, init, usual) => {
    const s = await oauthOverOutage();
    await whileDown(
      s,
      () => call(s.h, "POST", path, { method: "POST", ...init(s.clientId) }),
      (r) => {
        expect({ path, status: r.status, body: r.json }).toEqual({ path, status: 503, body: { error: "temporarily_unavailable", error_description: expect.any(String) } });
        expect(r.headers.get("retry-after")).toBe("1");
        expect(r.headers.get("cache-control")).toBe("no-store");
        expect(r.headers.get("access-control-allow-origin")).toBe("*");
        expect(r.text).not.toMatch(DRIVER_TEXT);
      },
      usual,
    );
  });

  test.each(["GET", "POST"])("%s /oauth/authorize: a 503 page, Retry-After; not ready", async (method) => {
    const s = await oauthOverOutage();
    const [url, init] =
      method === "GET"
        ? [authorizeUrl("http://localhost", s.query), {}]
        : ["http://localhost/oauth/authorize", form({ ...s.query, step: "signin", csrf_token: "x", email: "a@example.com", password: "a-long-enough-password" })];
    await whileDown(
      s,
      () => call(s.h, method, url, init),
      (r) => {
        expect({ method, status: r.status, type: r.headers.get("content-type") }).toEqual({ method, status: 503, type: "text/html; charset=utf-8" });
        expect(r.text).toContain("temporarily unavailable");
        expect(r.text).not.toMatch(DRIVER_TEXT);
        expect(r.headers.get("retry-after")).toBe("1");
        expect(r.headers.get("cache-control")).toBe("no-store");
        expect(r.headers.get("content-security-policy")).toContain("default-src 'none'");
        // No redirect: the client and its redirect URI could not be checked.
        expect(r.headers.get("location")).toBeNull();
      },
      (r) => {
        // Back: the sign-in page, or (a forged CSRF token) refused as such, never 503.
        expect(r.status).not.toBe(503);
        if (method === "GET") expect([r.status, r.text.includes("Sign in")]).toEqual([200, true]);
      },
    );
  });
});
