// The content model over MCP (issue 24), through the SDK's Client: get_content_model (compact),
// update_content_model (model:write, given only by name: never a default of a token or an OAuth
// request), its conflict/force/dry_run, the resource cms://{slug}/model, the model_content prompt,
// and content writes refused with pointers; over an MCP token and over OAuth.
import { afterAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { oauthTokens, projects } from "../db/schema";
import { hashToken } from "../src/lib/tokens";
import { seedNode, seedProject } from "./helpers";
import { call, callError, mcpHarness } from "./mcp-harness";
import { authorizeInBrowser, authorizeUrl, type Fetcher, mcpRpc, pkce, postForm, seedUser } from "./oauth.helpers";

const HERO = {
  name: "hero",
  description: "A big heading",
  schema: { type: "object", properties: { heading: { type: "string", translatable: true }, tone: { enum: ["light", "dark"] } }, required: ["heading"] },
};
const MODEL = {
  block_types: [HERO],
  node_types: [
    {
      name: "page",
      description: "A page",
      fields: { type: "object", properties: { date: { type: "string", format: "date-time", index: true } }, required: ["date"] },
      blocks: [{ type: "hero", min: 1, max: 1 }],
      children: null,
    },
  ],
};

describe("content model over MCP", async () => {
  const m = await mcpHarness({ OAUTH_SIGNIN_RATE_LIMIT: "1000000", OAUTH_TOKEN_RATE_LIMIT: "1000000", OAUTH_REGISTER_RATE_LIMIT: "1000000" });
  afterAll(() => m.stop());
  const h = m.h;

  test("a token minted without scopes gets no model:write; update_content_model then names the scope it lacks", async () => {
    const p = await seedProject(h);
    const minted = await h.request("POST", `/admin/p/${p.slug}/ai/mcp/tokens`, { body: { name: "default" } });
    expect(minted.status).toBe(201);
    expect(minted.json.data.scopes).toEqual(["content:read", "content:write", "content:publish", "ai:read"]);
    const client = await m.connect(minted.json.data.token);
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toContain("get_content_model");
    expect(names).toContain("update_content_model");
    expect(tools.find((t) => t.name === "get_content_model")?.annotations?.readOnlyHint).toBe(true);
    expect(tools.find((t) => t.name === "update_content_model")?.description).toContain("Requires scope: model:write.");
    const text = await callError(client, "update_content_model", MODEL);
    expect(text).toContain("insufficient_scope: update_content_model needs the model:write scope");
    const [row] = await h.deps.db.select({ v: projects.modelVersion }).from(projects).where(eq(projects.id, p.id));
    expect(row?.v).toBe(0);
    // A key without model:write cannot hand it out either.
    const { plaintext } = await import("../src/keys/service").then((k) => k.createAdminKey(h.deps.db, { name: "ai", scopes: ["ai:write", "content:read"] }, null, new Date()));
    const denied = await h.request("POST", `/admin/p/${p.slug}/ai/mcp/tokens`, { key: plaintext, body: { name: "x", scopes: ["content:read", "model:write"] } });
    expect(denied.status).toBe(403);
    expect(denied.json.error.message).toContain("model:write");
  });

  test("with model:write named: update_content_model (dry_run, conflict, force), get_content_model compact, writes checked", async () => {
    const p = await seedProject(h);
    const old = await seedNode(h, p.slug, { slug: "old", blocks: [{ type: "hero", data: { title: "no heading" } }] });
    const { token } = await m.token(p.slug, { name: "modeller", scopes: ["content:read", "content:write", "model:write"] });
    const client = await m.connect(token);
    const dry = await call(client, "update_content_model", { ...MODEL, dry_run: true });
    expect(dry).toMatchObject({ applied: false, count: 1, model: { version: 0 } });
    expect(dry.invalid[0]).toMatchObject({ node_id: old.id, path: "old", type: "page" });
    expect(dry.invalid[0].violations.map((v: any) => v.pointer)).toEqual(["/fields/date", "/blocks/0/data/heading"]);
    const conflict = await callError(client, "update_content_model", MODEL);
    expect(conflict).toContain("conflict: 1 node would no longer match the content model");
    expect(conflict).toContain(`"count":1`);
    expect(conflict).toContain(old.id);
    const forced = await call(client, "update_content_model", { ...MODEL, force: true });
    expect(forced).toMatchObject({ applied: true, count: 1, model: { version: 1 } });

    const compact = (await call(client, "get_content_model")).model;
    expect(compact).toEqual({
      version: 1,
      strict: false,
      block_types: { hero: { description: "A big heading", data: { heading: { type: "string", required: true, translatable: true }, tone: { enum: ["light", "dark"] } } } },
      node_types: { page: { description: "A page", fields: { date: { type: "string", format: "date-time", required: true, index: true } }, blocks: ["hero 1..1"], children: "any" } },
    });
    expect(JSON.stringify(compact).length).toBeLessThan(500);
    const full = (await call(client, "get_content_model", { compact: false })).model;
    expect(full).toMatchObject({ version: 1, block_types: [HERO] });

    // Content writes through MCP meet the new model: a tool error listing the pointers.
    const bad = await callError(client, "create_node", { slug: "new", title: "New", blocks: [{ type: "hero", data: { tone: "loud" } }] });
    expect(bad).toContain("invalid_content:");
    expect(bad).toContain('"pointer":"/blocks/0/data/heading"');
    expect(bad).toContain('"pointer":"/blocks/0/data/tone"');
    // Without fields on create (another branch adds them) a page cannot meet required date; a free-form type can.
    const ok = await call(client, "create_node", { slug: "new", title: "New", type: "note", blocks: [{ type: "hero", data: { heading: "Hi", tone: "dark" } }] });
    expect(ok.node.slug).toBe("new");
    const invalidModel = await callError(client, "update_content_model", { block_types: [{ name: "x", schema: { type: "object", properties: { a: { format: "nope", type: "string" } } } }] });
    expect(invalidModel).toContain("invalid_content: the content model is not valid: /block_types/0/schema");
  });

  test("the model is a resource (listed first) and the model_content prompt carries it", async () => {
    const p = await seedProject(h);
    await seedNode(h, p.slug, { slug: "home", blocks: [{ type: "hero", data: { heading: "x" } }] });
    expect((await h.request("PUT", `/admin/p/${p.slug}/model`, { body: MODEL })).status).toBe(409);
    expect((await h.request("PUT", `/admin/p/${p.slug}/model?force=true`, { body: MODEL })).status).toBe(200);
    const { token } = await m.token(p.slug, { name: "reader", scopes: ["content:read"] });
    const client = await m.connect(token);
    const { resources } = await client.listResources();
    expect(resources[0]).toMatchObject({ uri: `cms://${p.slug}/model`, name: "model", mimeType: "application/json" });
    const read = await client.readResource({ uri: `cms://${p.slug}/model` });
    const model = JSON.parse(String((read.contents[0] as { text: string }).text));
    expect(model).toMatchObject({ version: 1, strict: false, block_types: [HERO] });
    // Another project's model URI is unknown, like its nodes.
    const other = await seedProject(h);
    await expect(client.readResource({ uri: `cms://${other.slug}/model` })).rejects.toThrow(/Resource not found/);

    const { prompts } = await client.listPrompts();
    expect(prompts.find((x) => x.name === "model_content")).toMatchObject({ arguments: [{ name: "site", required: false }] });
    const prompt = await client.getPrompt({ name: "model_content", arguments: { site: "a bakery with a blog" } });
    const text = (prompt.messages[0]!.content as { text: string }).text;
    expect(text).toContain("The site: a bakery with a blog");
    expect(text).toContain("node types: page (1)");
    expect(text).toContain("block types: hero (1)");
    expect(text).toContain("update_content_model");
    expect(text).toContain("dry_run: true");
    expect(prompt.messages[1]?.content).toMatchObject({ type: "resource", resource: { uri: `cms://${p.slug}/model` } });
    // The descriptions of the tools that write content point to the model.
    const { tools } = await client.listTools();
    for (const name of ["create_node", "update_node", "upsert_translation"])
      expect({ name, d: tools.find((t) => t.name === name)?.description }).toMatchObject({ d: expect.stringContaining("get_content_model") });
    expect(tools.find((t) => t.name === "create_node")?.description).toContain("cms://{project slug}/model");
  });

  test("OAuth: no scope asked gives no model:write, the 401 challenge does not ask for it; asked by name, an admin's grant carries it and writes the model", async () => {
    const fetcher: Fetcher = (r) => h.app.handle(r);
    const base = "http://localhost";
    const p = await seedProject(h);
    const admin = await seedUser(h, "admin", [p.id]);
    const unauth = await mcpRpc(fetcher, base, null, "tools/list");
    expect(unauth.status).toBe(401);
    expect(unauth.headers.get("www-authenticate")).toContain('scope="content:read content:write content:publish ai:read"');
    const redirect = "http://127.0.0.1:43125/cb";
    const client = (await h.request("POST", "/oauth/register", { key: null, body: { redirect_uris: [redirect], token_endpoint_auth_method: "none" } })).json.client_id as string;
    const tokenFor = async (scope: string | undefined): Promise<{ access_token: string; scope: string }> => {
      const { verifier, challenge } = pkce();
      const url = authorizeUrl(base, { response_type: "code", client_id: client, redirect_uri: redirect, code_challenge: challenge, code_challenge_method: "S256", resource: `${base}/mcp`, scope });
      const r = await authorizeInBrowser(fetcher, url, { email: admin.email, password: admin.password, projectId: p.id });
      const code = new URL(r.location).searchParams.get("code");
      if (!code) throw new Error(`no code: ${r.location}`);
      const t = await postForm(fetcher, base, "/oauth/token", { grant_type: "authorization_code", client_id: client, code, code_verifier: verifier, redirect_uri: redirect, resource: `${base}/mcp` });
      return t.json;
    };
    const plain = await tokenFor(undefined);
    expect(plain.scope).toBe("content:read content:write content:publish ai:read");
    const [stored] = await h.deps.db
      .select({ scopes: oauthTokens.scopes })
      .from(oauthTokens)
      .where(eq(oauthTokens.tokenHash, hashToken(plain.access_token)));
    expect(stored?.scopes).toEqual(["content:read", "content:write", "content:publish", "ai:read"]);
    // The admin's role holds model:write, so the call gets the spec's step-up challenge naming it.
    const stepUp = await mcpRpc(fetcher, base, plain.access_token, "tools/call", { name: "update_content_model", arguments: MODEL });
    expect(stepUp.status).toBe(403);
    expect(stepUp.headers.get("www-authenticate")).toContain('scope="content:read content:write content:publish ai:read model:write"');

    const asked = await tokenFor("content:read model:write");
    expect(asked.scope).toBe("content:read model:write");
    const c = await m.connect(asked.access_token);
    expect(await call(c, "update_content_model", { block_types: [HERO] })).toMatchObject({ applied: true, model: { version: 1 } });
    // An editor's role does not hold model:write: asked for, it is not offered.
    const editor = await seedUser(h, "editor", [p.id]);
    const { challenge } = pkce();
    const url = authorizeUrl(base, {
      response_type: "code",
      client_id: client,
      redirect_uri: redirect,
      code_challenge: challenge,
      code_challenge_method: "S256",
      resource: `${base}/mcp`,
      scope: "content:read model:write",
    });
    const r = await authorizeInBrowser(fetcher, url, { email: editor.email, password: editor.password, projectId: p.id });
    const consent = r.pages.at(-1) ?? "";
    expect(consent).toContain('value="content:read"');
    expect(consent).not.toContain('value="model:write"');
  });
});
