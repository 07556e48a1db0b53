// Issue 22 §5: what an MCP call costs in queries before its tool runs, per kind of bearer: one
// (the credential with its project, and for OAuth the grant and the user's role, joined).
import { describe, expect, test } from "bun:test";
import type { Db } from "../db/client";
import { BASE, harness, seedProject } from "./helpers";
import { authorizeInBrowser, authorizeUrl, mcpRpc, pkce, postForm, seedUser } from "./oauth.helpers";

const RESOURCE = `${BASE}/mcp`;
const REDIRECT = "http://127.0.0.1:43123/callback";

/**
 * The statements `fn` sends through `db` outside transactions: every query builder, relational query
 * and execute prepares its statement on the session (a Db proxy sees only some of them).
 */
async function statementsOf(db: Db, fn: () => Promise<void>): Promise<number> {
  const session = (db as unknown as { session: { prepareQuery: (...a: unknown[]) => unknown } }).session;
  const prepare = session.prepareQuery;
  let n = 0;
  session.prepareQuery = (...args: unknown[]) => {
    n += 1;
    return prepare.apply(session, args);
  };
  try {
    await fn();
  } finally {
    delete (session as { prepareQuery?: unknown }).prepareQuery;
  }
  return n;
}

describe("MCP: queries per call", async () => {
  const h = await harness({ OAUTH_REGISTER_RATE_LIMIT: "1000", OAUTH_TOKEN_RATE_LIMIT: "1000", OAUTH_SIGNIN_RATE_LIMIT: "1000" });
  const fetcher = (r: Request) => h.app.handle(r);
  const project = await seedProject(h);
  const editor = await seedUser(h, "editor", [project.id]);
  const clientId = (await h.request("POST", "/oauth/register", { key: null, body: { redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" } })).json.client_id;
  const { verifier, challenge } = pkce();
  const url = authorizeUrl(BASE, { response_type: "code", client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: "S256", state: "s", resource: RESOURCE });
  const code = new URL((await authorizeInBrowser(fetcher, url, { email: editor.email, password: editor.password, projectId: project.id })).location).searchParams.get("code")!;
  const oauthToken = (
    await postForm(fetcher, BASE, "/oauth/token", { grant_type: "authorization_code", client_id: clientId, code, code_verifier: verifier, redirect_uri: REDIRECT, resource: RESOURCE })
  ).json.access_token as string;
  const mcpToken = (await h.request("POST", `/admin/p/${project.slug}/ai/mcp/tokens`, { body: { name: "q", scopes: ["content:read", "content:write", "ai:read"] } })).json.data.token as string;

  const cost = async (token: string, method: string, params: unknown = {}): Promise<number> => {
    await mcpRpc(fetcher, BASE, token, method, params); // last_used_at written, caches warm
    return statementsOf(h.deps.db, async () => {
      const r = await mcpRpc(fetcher, BASE, token, method, params);
      expect(r.status).toBe(200);
    });
  };

  // get_project reads nothing itself (the project comes with the credential): its cost is the bearer check's.
  test("an OAuth access token and an MCP token each cost one query before the tool runs", async () => {
    for (const [kind, token] of [
      ["oauth", oauthToken],
      ["mcp", mcpToken],
    ] as const) {
      expect({ kind, list: await cost(token, "tools/list"), call: await cost(token, "tools/call", { name: "get_project", arguments: {} }) }).toEqual({ kind, list: 1, call: 1 });
    }
  });
});
