// Two instances of the binary on two ports against one PostgreSQL database act as one service:
// a write through one is served fresh by the other (delivery ETag changes), an MCP token made on
// one works on the other, an OAuth code issued by one is redeemed on the other.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { authorizeInBrowser, authorizeUrl, mcpRpc, pkce, postForm } from "../tests/oauth.helpers";
import { check, freePort, type Instance, start } from "./instance";

export async function scaleChecks(serverUrl: string): Promise<void> {
  const name = `ci_scale_${Date.now().toString(36)}`;
  const admin = postgres(`${serverUrl}/postgres`, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const dir = mkdtempSync(join(tmpdir(), "cms-scale-"));
  const instances: Instance[] = [];
  try {
    const key = new Uint8Array(32);
    crypto.getRandomValues(key);
    const publicPort = await freePort();
    const env = {
      DATABASE_URL: `${serverUrl}/${name}`,
      SECRET_KEYS: `k1:${Buffer.from(key).toString("base64")}`,
      ADMIN_TOKEN: `ci-root-token-${crypto.randomUUID()}`,
      ADMIN_EMAIL: "owner@example.com",
      ADMIN_PASSWORD: "ci-owner-password",
      // Behind a load balancer every instance shares one public URL (OAuth issuer, MCP resource).
      PUBLIC_URL: `http://127.0.0.1:${publicPort}`,
      LOG_LEVEL: "warn",
    };
    // Both start at once: migrations serialise on the advisory lock, bootstrap runs once.
    const [one, two] = await Promise.all([start(env, dir), start(env, dir)]);
    instances.push(one, two);
    const auth = { authorization: `Bearer ${env.ADMIN_TOKEN}`, "content-type": "application/json" };

    const path = "/api/p/demo/nodes/by-path/home";
    const before = await fetch(two.url + path);
    const etag = before.headers.get("etag");
    check(before.status === 200 && etag, "instance 2 serves the demo home page with an ETag");
    const nodes = await (await fetch(`${one.url}/admin/p/demo/nodes?path_prefix=home`, { headers: auth })).json();
    const home = nodes.data.find((n: { path: string }) => n.path === "home");
    const patched = await fetch(`${one.url}/admin/p/demo/nodes/${home.id}`, { method: "PATCH", headers: auth, body: JSON.stringify({ title: "Welcome, scaled" }) });
    check(patched.status === 200, "a write through instance 1");
    // The edit is the page's working copy until it is published (docs/content-states.md).
    check((await fetch(two.url + path, { headers: { "if-none-match": etag! } })).status === 304, "instance 2 still serves the published version after the edit");
    const published = await fetch(`${one.url}/admin/p/demo/nodes/${home.id}/publish`, { method: "POST", headers: auth });
    check(published.status === 200, "the edit published through instance 1");
    let fresh: Response | null = null;
    for (let i = 0; i < 20; i++) {
      fresh = await fetch(two.url + path, { headers: { "if-none-match": etag! } });
      if (fresh.status === 200) break;
      await Bun.sleep(100);
    }
    check(fresh?.status === 200 && fresh.headers.get("etag") !== etag && (await fresh.json()).data.title === "Welcome, scaled", "instance 2 serves the write fresh with a new ETag");

    const token = await (await fetch(`${one.url}/admin/p/demo/ai/mcp/tokens`, { method: "POST", headers: auth, body: JSON.stringify({ name: "scale" }) })).json();
    const listed = await mcpRpc(fetch, two.url, token.data.token, "tools/list");
    check(listed.status === 200 && listed.json.result.tools.length > 10, "an MCP token created on instance 1 works on instance 2");
    await fetch(`${one.url}/admin/p/demo/ai/mcp/tokens/${token.data.id}`, { method: "DELETE", headers: auth });
    check((await mcpRpc(fetch, two.url, token.data.token, "tools/list")).status === 401, "a token deleted on instance 1 is refused by instance 2");

    const reg = await fetch(`${one.url}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "scale", redirect_uris: ["http://127.0.0.1/callback"], token_endpoint_auth_method: "none" }),
    });
    const client = await reg.json();
    check(reg.status === 201, "a client registered on instance 1");
    const { verifier, challenge } = pkce();
    const demo = await (await fetch(`${one.url}/admin/projects/demo`, { headers: auth })).json();
    const url = authorizeUrl(one.url, {
      response_type: "code",
      client_id: client.client_id,
      redirect_uri: "http://127.0.0.1/callback",
      code_challenge: challenge,
      code_challenge_method: "S256",
      state: "s1",
      scope: "content:read",
      resource: `${env.PUBLIC_URL}/mcp`,
    });
    // A browser stand-in that stops at the redirect to the client, as the real client would.
    const browser = (req: Request): Promise<Response> => fetch(req, { redirect: "manual" });
    const walk = await authorizeInBrowser(browser, url, { email: env.ADMIN_EMAIL, password: env.ADMIN_PASSWORD, projectId: demo.data.id });
    const code = new URL(walk.location).searchParams.get("code");
    check(code, "instance 1 issued an authorization code");
    const tok = await postForm(fetch, two.url, "/oauth/token", {
      grant_type: "authorization_code",
      code: code!,
      redirect_uri: "http://127.0.0.1/callback",
      client_id: client.client_id,
      code_verifier: verifier,
      resource: `${env.PUBLIC_URL}/mcp`,
    });
    check(tok.status === 200 && tok.json.access_token, "instance 2 redeemed the code");
    const call = await mcpRpc(fetch, one.url, tok.json.access_token, "tools/call", { name: "get_project", arguments: {} });
    check(call.status === 200 && !call.json.result.isError, "the access token from instance 2 works on instance 1's /mcp");
  } catch (err) {
    for (const i of instances) console.error(`--- output of ${i.url}\n${i.output().slice(-4000)}`);
    throw err;
  } finally {
    for (const i of instances) await i.stop().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}
