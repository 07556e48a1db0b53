import { describe, expect, test } from "bun:test";
import { BASE, HIGH_LIMITS, harness, seedProject } from "./helpers";
import { authorizeInBrowser, authorizeUrl, type Fetcher, pkce, seedUser } from "./oauth.helpers";

// Issue 12 §4: a loopback redirect_uri is matched as the exact registered string, the port aside
// (RFC 8252 §7.3, OAuth 2.1 §2.3.1); dot segments and percent-encoded dots are other URIs.
const REGISTERED = "http://127.0.0.1:53682/callback";

describe("redirect_uri: exact string match, loopback port aside", async () => {
  const h = await harness(HIGH_LIMITS);
  const fetcher: Fetcher = (r) => h.app.handle(r);
  const project = await seedProject(h);
  const user = await seedUser(h, "editor");
  const reg = await h.request("POST", "/oauth/register", { key: null, body: { client_name: "Loopback Agent", redirect_uris: [REGISTERED], token_endpoint_auth_method: "none" } });
  if (reg.status !== 201) throw new Error(reg.text);
  const clientId: string = reg.json.client_id;
  const request = (redirectUri: string) => {
    const { challenge } = pkce();
    return authorizeUrl(BASE, {
      response_type: "code",
      client_id: clientId,
      redirect_uri: redirectUri,
      code_challenge: challenge,
      code_challenge_method: "S256",
      state: "st",
      resource: `${BASE}/mcp`,
    });
  };

  test("dot-segment and encoded spellings of the registered path are refused with an error page, never a redirect", async () => {
    for (const spelling of [
      "http://127.0.0.1:53682/x/../callback",
      "http://127.0.0.1:53682/%2e%2e/callback",
      "http://127.0.0.1:53682/%2E%2E/callback",
      "http://127.0.0.1:53682/./callback",
      "http://127.0.0.1:53682/x/%2e%2e/callback",
      "http://127.0.0.1:4000/x/../callback", // another port does not open the door to normalisation
      "http://127.0.0.1:53682/callback/",
      "http://127.0.0.1:53682/callback?",
      "http://127.0.0.1:53682/%63allback",
      "http://127.0.0.2:53682/callback",
      "http://localhost:53682/callback",
      "http://127.0.0.1:53682:1/callback",
      "http://127.0.0.1:99999/callback",
    ]) {
      const res = await fetcher(new Request(request(spelling)));
      expect({ spelling, status: res.status, location: res.headers.get("location") }).toEqual({ spelling, status: 400, location: null });
      expect(await res.text()).toContain("not one the application registered");
    }
  });

  test("the exact path on another loopback port is accepted, and the code is sent to that port", async () => {
    const presented = "http://127.0.0.1:50999/callback";
    const page = await fetcher(new Request(request(presented)));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('name="step" value="signin"');
    const done = await authorizeInBrowser(fetcher, request(presented), { email: user.email, password: user.password, projectId: project.id });
    const loc = new URL(done.location);
    expect(`${loc.origin}${loc.pathname}`).toBe(presented);
    expect(loc.searchParams.get("code")).toMatch(/^cms_code_/);
    // The registered string itself, and no port at all, match too.
    expect((await fetcher(new Request(request(REGISTERED)))).status).toBe(200);
    expect((await fetcher(new Request(request("http://127.0.0.1/callback")))).status).toBe(200);
  });
});
