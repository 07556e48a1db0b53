import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { mcpTokens } from "../db/schema";
import { uuidv7 } from "../src/lib/ids";
import { hashToken } from "../src/lib/tokens";
import { harness, keyWith, seedProject } from "./helpers";

describe("MCP token admin API", async () => {
  const h = await harness();
  const base = (ref: string) => `/admin/p/${ref}/ai/mcp/tokens`;
  const mcp = (token: string) =>
    h.app.handle(
      new Request("http://localhost/mcp", {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      }),
    );

  test("create returns the plaintext once; only its SHA-256 is stored; list shows hints and usage", async () => {
    const p = await seedProject(h);
    const expires = new Date(Date.now() + 86_400_000).toISOString();
    const refused = await h.request("POST", base(p.slug), { body: { name: "Claude", scopes: ["content:read", "ai:read"], expires_at: expires, id: uuidv7(), project_id: uuidv7() } });
    expect([refused.status, refused.json.error.code, refused.json.error.details.fields]).toEqual([400, "invalid_input", ["id", "project_id"]]);
    expect(await h.deps.db.select().from(mcpTokens).where(eq(mcpTokens.projectId, p.id))).toEqual([]);
    const res = await h.request("POST", base(p.slug), { body: { name: "Claude", scopes: ["content:read", "ai:read"], expires_at: expires } });
    expect(res.status).toBe(201);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const d = res.json.data;
    expect(Object.keys(d).sort()).toEqual(["created_at", "expires_at", "id", "name", "scopes", "token", "token_hint"]);
    expect(d.token).toMatch(/^cms_mcp_[a-z2-7]{32}$/);
    expect(d).toMatchObject({ name: "Claude", scopes: ["content:read", "ai:read"], expires_at: expires, token_hint: `cms_mcp_…${d.token.slice(-4)}` });

    const [row] = await h.deps.db.select().from(mcpTokens).where(eq(mcpTokens.id, d.id));
    expect(row!.projectId).toBe(p.id);
    expect(row!.tokenHash).toBe(hashToken(d.token));
    expect(JSON.stringify(row)).not.toContain(d.token);

    const list = await h.request("GET", base(p.id));
    expect(list.status).toBe(200);
    expect(list.json.data).toEqual([{ id: d.id, name: "Claude", token_hint: d.token_hint, scopes: ["content:read", "ai:read"], created_at: d.created_at, last_used_at: null, expires_at: expires }]);
    expect(list.text).not.toContain(d.token);
    expect(list.text).not.toContain(row!.tokenHash);

    expect((await mcp(d.token)).status).toBe(200);
    const used = await h.request("GET", base(p.id));
    expect(used.json.data[0].last_used_at).not.toBeNull();
  });

  test("scopes default to the MCP scopes the calling key holds and can never exceed them", async () => {
    const p = await seedProject(h);
    const root = await h.request("POST", base(p.slug), { body: { name: "all" } });
    expect(root.json.data.scopes).toEqual(["content:read", "content:write", "content:publish", "ai:read"]);

    const limited = await keyWith(h, ["ai:write", "content:read"]);
    const dflt = await h.request("POST", base(p.slug), { key: limited, body: { name: "reader" } });
    expect(dflt.status).toBe(201);
    expect(dflt.json.data.scopes).toEqual(["content:read"]);
    const escalate = await h.request("POST", base(p.slug), { key: limited, body: { name: "writer", scopes: ["content:write"] } });
    expect(escalate.status).toBe(403);
    expect(escalate.json.error).toMatchObject({ code: "insufficient_scope", details: { required: "content:write" } });
    const nothing = await keyWith(h, ["ai:write"]);
    expect((await h.request("POST", base(p.slug), { key: nothing, body: { name: "x" } })).status).toBe(403);
  });

  test("bad bodies are 400 and write nothing", async () => {
    const p = await seedProject(h);
    for (const body of [
      {},
      { name: "" },
      { name: "x", scopes: ["keys:write"] },
      { name: "x", scopes: [] },
      { name: "x", scopes: "content:read" },
      { name: "x", expires_at: "tomorrow" },
      { name: "x", expires_at: new Date(Date.now() - 1000).toISOString() },
    ]) {
      const res = await h.request("POST", base(p.slug), { body });
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe("invalid_request");
    }
    expect(await h.deps.db.select().from(mcpTokens).where(eq(mcpTokens.projectId, p.id))).toHaveLength(0);
  });

  test("delete by ?id=, by JSON body and by path: 204, then the token is gone and refused at once", async () => {
    const p = await seedProject(h);
    const mint = async (): Promise<{ id: string; token: string }> => (await h.request("POST", base(p.slug), { body: { name: "t" } })).json.data;
    const a = await mint();
    const b = await mint();
    const c = await mint();
    expect((await mcp(a.token)).status).toBe(200);
    expect((await h.request("DELETE", `${base(p.slug)}?id=${a.id}`)).status).toBe(204);
    expect((await mcp(a.token)).status).toBe(401);
    expect((await h.request("DELETE", base(p.slug), { body: { id: b.id } })).status).toBe(204);
    expect((await h.request("DELETE", `${base(p.slug)}/${c.id}`)).status).toBe(204);
    expect(await h.deps.db.select().from(mcpTokens).where(eq(mcpTokens.projectId, p.id))).toHaveLength(0);
    expect((await h.request("GET", base(p.slug))).json.data).toEqual([]);

    const again = await h.request("DELETE", `${base(p.slug)}/${c.id}`);
    expect(again.status).toBe(404);
    expect(again.json.error.code).toBe("not_found");
    expect((await h.request("DELETE", `${base(p.slug)}?id=not-a-uuid`)).status).toBe(404);
    const missing = await h.request("DELETE", base(p.slug));
    expect(missing.status).toBe(400);
    expect(missing.json.error.code).toBe("missing_parameter");
  });

  test("scopes on the routes: ai:read lists, ai:write creates and deletes; no key is 401", async () => {
    const p = await seedProject(h);
    const t = (await h.request("POST", base(p.slug), { body: { name: "t" } })).json.data;
    const reader = await keyWith(h, ["ai:read", "content:read"]);
    expect((await h.request("GET", base(p.slug), { key: reader })).status).toBe(200);
    const denied = await h.request("POST", base(p.slug), { key: reader, body: { name: "x" } });
    expect(denied.status).toBe(403);
    expect(denied.json.error.message).toContain("ai:write");
    expect((await h.request("DELETE", `${base(p.slug)}/${t.id}`, { key: reader })).status).toBe(403);
    expect((await h.request("GET", base(p.slug), { key: await keyWith(h, ["content:read"]) })).status).toBe(403);
    expect((await h.request("GET", base(p.slug), { key: null })).status).toBe(401);
    expect((await h.request("POST", base(p.slug), { key: null, body: { name: "x" } })).status).toBe(401);
  });

  test("another project's tokens are invisible: 404, never listed, never deleted", async () => {
    const a = await seedProject(h);
    const b = await seedProject(h);
    const tb = (await h.request("POST", base(b.slug), { body: { name: "b" } })).json.data;
    expect((await h.request("GET", base(a.slug))).json.data.map((t: any) => t.id)).not.toContain(tb.id);
    expect((await h.request("DELETE", `${base(a.slug)}/${tb.id}`)).status).toBe(404);
    expect((await h.request("DELETE", `${base(a.slug)}?id=${tb.id}`)).status).toBe(404);
    expect(await h.deps.db.select().from(mcpTokens).where(eq(mcpTokens.id, tb.id))).toHaveLength(1);
    // A key limited to project A does not see B at all.
    const limited = await keyWith(h, ["ai:read", "ai:write", "content:read"], [a.id]);
    expect((await h.request("GET", base(b.slug), { key: limited })).status).toBe(404);
    expect((await h.request("POST", base(b.slug), { key: limited, body: { name: "x" } })).status).toBe(404);
    expect((await h.request("GET", base("no-such-project"))).status).toBe(404);
  });
});
