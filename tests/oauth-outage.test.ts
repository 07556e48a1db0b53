// Issue 22 §5: with the database gone, the OAuth endpoints answer 503 as the admin API does (in
// the RFC form on the JSON endpoints, a page on the consent pages), never a raw error or a 500,
// and take part in readiness: /readyz says not ready after such a failure, as after an admin one.
import { describe, expect, test } from "bun:test";
import type { Db } from "../db/client";
import { watchedDb } from "./delivery.helpers";
import { harness, seedProject, type TestResponse, testDb, waitFor } from "./helpers";
import { authorizeUrl, pkce } from "./oauth.helpers";

/** The Db whose queries fail, once armed, as if the server were gone. */
function breakableDb(db: Db): { db: Db; fail: (on: boolean) => void } {
  let down = false;
  const watched = watchedDb(db, () => {
    if (down) throw Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
  });
  return { db: watched, fail: (on) => void (down = on) };
}

describe("OAuth while the database is down", async () => {
  const broken = breakableDb((await testDb()).db);
  const h = await harness({ OAUTH_REGISTER_RATE_LIMIT: "1000" }, { db: broken.db });
  await seedProject(h);
  const redirect = "http://127.0.0.1:9/cb";
  const registered = await h.app.handle(
    new Request("http://localhost/oauth/register", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: [redirect], token_endpoint_auth_method: "none", client_name: "outage" }),
    }),
  );
  const clientId = ((await registered.json()) as { client_id: string }).client_id;
  const query = { response_type: "code", client_id: clientId, redirect_uri: redirect, code_challenge: pkce().challenge, code_challenge_method: "S256", resource: "http://localhost/mcp", state: "s" };
  const form = (fields: Record<string, string>) => ({ headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString() });

  const JSON_ENDPOINTS: [string, RequestInit][] = [
    ["/oauth/register", { headers: { "content-type": "application/json" }, body: JSON.stringify({ redirect_uris: [redirect], token_endpoint_auth_method: "none" }) }],
    ["/oauth/token", form({ grant_type: "refresh_token", refresh_token: "cms_rt_x", client_id: clientId })],
    ["/oauth/revoke", form({ token: "cms_rt_x", client_id: clientId })],
  ];
  const PAGES: [string, string, RequestInit][] = [
    ["GET", authorizeUrl("http://localhost", query), {}],
    ["POST", "http://localhost/oauth/authorize", form({ ...query, step: "signin", csrf_token: "x", email: "a@example.com", password: "a-long-enough-password" })],
  ];

  const call = async (method: string, url: string, init: RequestInit): Promise<TestResponse> => {
    const res = await h.app.handle(new Request(url.startsWith("http") ? url : `http://localhost${url}`, { method, ...init }));
    const text = await res.text();
    let json: any = null;
    try {
      json = JSON.parse(text);
    } catch {}
    return { status: res.status, headers: res.headers, text, json };
  };
  const ready = async (): Promise<number> => (await h.request("GET", "/readyz", { key: null })).status;

  /** Runs `fn` with the database gone; /readyz must say not ready after it, and ready again once it is back. */
  async function whileDown(fn: () => Promise<void>): Promise<void> {
    await waitFor(async () => (await ready()) === 200, { timeout: 5000, what: "ready before" });
    broken.fail(true);
    try {
      await fn();
      expect(await ready()).toBe(503);
    } finally {
      broken.fail(false);
    }
    await waitFor(async () => (await ready()) === 200, { timeout: 5000, what: "ready after" });
  }

  for (const [path, init] of JSON_ENDPOINTS) {
    test(`${path}: 503 temporarily_unavailable (RFC form), Retry-After, no-store; not ready`, async () => {
      await whileDown(async () => {
        const r = await call("POST", path, { method: "POST", ...init });
        expect({ path, status: r.status, body: r.json }).toEqual({ path, status: 503, body: { error: "temporarily_unavailable", error_description: expect.any(String) } });
        expect(r.headers.get("retry-after")).toBe("1");
        expect(r.headers.get("cache-control")).toBe("no-store");
        expect(r.headers.get("access-control-allow-origin")).toBe("*");
        expect(r.text).not.toContain("ECONNREFUSED");
      });
    });
  }

  for (const [method, url, init] of PAGES) {
    test(`${method} /oauth/authorize: a 503 page, Retry-After; not ready`, async () => {
      await whileDown(async () => {
        const r = await call(method, url, init);
        expect({ method, status: r.status, type: r.headers.get("content-type") }).toEqual({ method, status: 503, type: "text/html; charset=utf-8" });
        expect(r.text).toContain("temporarily unavailable");
        expect(r.text).not.toContain("ECONNREFUSED");
        expect(r.headers.get("retry-after")).toBe("1");
        expect(r.headers.get("cache-control")).toBe("no-store");
        expect(r.headers.get("content-security-policy")).toContain("default-src 'none'");
        // No redirect: the client and its redirect URI could not be checked.
        expect(r.headers.get("location")).toBeNull();
      });
    });
  }

  test("with the database back, the same requests are answered as usual", async () => {
    const page = await call("GET", authorizeUrl("http://localhost", query), {});
    expect(page.status).toBe(200);
    expect(page.text).toContain("Sign in");
    const [path, init] = JSON_ENDPOINTS[1]!;
    const token = await call("POST", path, { method: "POST", ...init });
    expect(token.status).toBe(400);
    expect(token.json.error).toBe("invalid_grant");
  });
});
