// Issue 27: content:publish is a scope of its own. Upgrading keeps every right: each admin key, MCP
// token, OAuth grant, token and code (and a registered client's scope) that held content:write gains
// content:publish; nothing else gains. Run on a database created by the previous schema.
import { describe, expect, test } from "bun:test";
import { runMigrations } from "../db/migrate";
import { authenticateMcpBearer } from "../src/auth";
import { hashToken } from "../src/lib/tokens";
import { BASE, harness, previousSchemaDatabase, seedNode } from "./helpers";

describe("migration to content:publish", async () => {
  const fresh = await previousSchemaDatabase("_agent_control");
  const db = fresh.handle.db;
  const { exec } = fresh;
  const id = () => crypto.randomUUID();
  const project = id();
  const user = id();
  const plain = { writerKey: `cms_ak_${id()}`, readerKey: `cms_ak_${id()}`, writerMcp: `cms_mcp_${id()}`, readerMcp: `cms_mcp_${id()}`, access: `cms_at_${id()}` };
  const grant = id();
  const client = `old-client-${grant}`;

  // What the previous version wrote: keys, tokens, a consent with its access token and a pending code.
  await exec(`insert into projects (id, slug, name, default_locale, locales) values ('${project}', 'old-${project.slice(0, 8)}', 'Old', 'en', '["en"]')`);
  await exec(`insert into users (id, email, password_hash, role) values ('${user}', 'editor-${user}@example.com', 'x', 'member')`);
  await exec(`insert into project_members (project_id, user_id, role) values ('${project}', '${user}', 'editor')`);
  await exec(`insert into admin_keys (id, name, key_hash, key_hint, scopes, project_ids) values
    ('${id()}', 'writer', '${hashToken(plain.writerKey)}', 'hint', '["content:read","content:write"]', null),
    ('${id()}', 'reader', '${hashToken(plain.readerKey)}', 'hint', '["content:read","ai:read"]', null)`);
  await exec(`insert into mcp_tokens (id, project_id, name, token_hash, token_hint, scopes) values
    ('${id()}', '${project}', 'writer', '${hashToken(plain.writerMcp)}', 'hint', '["content:read","content:write","ai:read"]'),
    ('${id()}', '${project}', 'reader', '${hashToken(plain.readerMcp)}', 'hint', '["content:read"]')`);
  await exec(
    `insert into oauth_clients (id, redirect_uris, token_endpoint_auth_method, grant_types, response_types, scope) values ('${client}', '["http://127.0.0.1/cb"]', 'none', '["authorization_code"]', '["code"]', 'content:read content:write')`,
  );
  await exec(
    `insert into oauth_grants (id, client_id, user_id, project_id, scopes, resource) values ('${grant}', '${client}', '${user}', '${project}', '["content:read","content:write"]', '${BASE}/mcp')`,
  );
  await exec(`insert into oauth_tokens (id, token_hash, kind, grant_id, client_id, user_id, project_id, scopes, resource, expires_at)
    values ('${id()}', '${hashToken(plain.access)}', 'access', '${grant}', '${client}', '${user}', '${project}', '["content:read","content:write"]', '${BASE}/mcp', now() + interval '1 hour')`);
  await exec(`insert into oauth_codes (code_hash, grant_id, client_id, redirect_uri, code_challenge, resource, scopes, expires_at)
    values ('code-${grant}', '${grant}', '${client}', 'http://127.0.0.1/cb', 'c', '${BASE}/mcp', '["content:read","content:write"]', now() + interval '10 minutes')`);

  const column = async (q: string): Promise<unknown[]> => {
    const r = (await exec(q)) as unknown as { rows?: Array<{ v: unknown }> } & Array<{ v: unknown }>;
    return (r.rows ?? r).map((row) => row.v);
  };

  test("the previous schema has no approvals", async () => {
    expect(await column("select count(*)::int as v from information_schema.tables where table_name = 'approvals'")).toEqual([0]);
  });

  test("every credential holding content:write gains content:publish; the others are unchanged", async () => {
    await runMigrations(fresh.handle);
    const admin = async (key: string) => (await column(`select scopes as v from admin_keys where key_hash = '${hashToken(key)}'`))[0];
    expect(await admin(plain.writerKey)).toEqual(["content:read", "content:write", "content:publish"]);
    expect(await admin(plain.readerKey)).toEqual(["content:read", "ai:read"]);
    const mcp = async (token: string) => (await authenticateMcpBearer(db, `Bearer ${token}`, `${BASE}/mcp`, new Date()))?.scopes;
    expect(await mcp(plain.writerMcp)).toEqual(["content:read", "content:write", "ai:read", "content:publish"]);
    expect(await mcp(plain.readerMcp)).toEqual(["content:read"]);
    // The OAuth token: the grant's scopes the editor's role holds now (content:publish included).
    expect(await mcp(plain.access)).toEqual(["content:read", "content:write", "content:publish"]);
    expect(await column(`select scopes as v from oauth_grants where id = '${grant}'`)).toEqual([["content:read", "content:write", "content:publish"]]);
    expect(await column(`select scopes as v from oauth_codes where grant_id = '${grant}'`)).toEqual([["content:read", "content:write", "content:publish"]]);
    expect(await column(`select scope as v from oauth_clients where id = '${client}'`)).toEqual(["content:read content:write content:publish"]);
  });

  test("the migrated rights work: the writer key publishes, the migrated MCP token publishes without asking anyone", async () => {
    const h = await harness({}, { db, dbHandle: fresh.handle });
    const node = await seedNode(h, project, { slug: "kept", title: "Kept" });
    const published = await h.request("POST", `/admin/p/${project}/nodes/${node.id}/publish`, { key: plain.writerKey });
    expect(published.status).toBe(200);
    const other = await seedNode(h, project, { slug: "kept-too", title: "Kept too" });
    const res = await h.app.handle(
      new Request(`${BASE}/mcp`, {
        method: "POST",
        headers: { authorization: `Bearer ${plain.writerMcp}`, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "publish_node", arguments: { node_id: other.id } } }),
      }),
    );
    const body = (await res.json()) as { result: { isError?: boolean; structuredContent: { node: { status: string } } } };
    expect(body.result.isError).toBeUndefined();
    expect(body.result.structuredContent.node.status).toBe("published");
    expect(await column("select count(*)::int as v from approvals")).toEqual([0]);
  });
});
