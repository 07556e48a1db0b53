// Issue 27 across two real service processes (`bun src/main.ts`) over one PostgreSQL database: the
// agent asks on one, the person approves on the page of the other, the retry there publishes. No
// state lives in a process. PostgreSQL only (two processes cannot share an embedded database).
import { describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UrlElicitationRequiredError } from "@modelcontextprotocol/sdk/types.js";
import { decideInBrowser } from "./approvals.helpers";
import { freshDatabase } from "./helpers";
import { type Served, serve } from "./service-process";

const pgUrl = process.env.DATABASE_URL?.startsWith("postgres") ? process.env.DATABASE_URL : null;

describe.if(pgUrl !== null)("approvals across two processes (PostgreSQL only: needs DATABASE_URL; processes cannot share the embedded database)", () => {
  test("asked on A, approved on B's page, the retry on B publishes", async () => {
    const fresh = await freshDatabase();
    const token = `approvals-root-token-${crypto.randomUUID()}`;
    const served: Served[] = [];
    const clients: Client[] = [];
    try {
      const a = await serve(fresh.url!, token, 3);
      served.push(a);
      const b = await serve(fresh.url!, token, 3);
      served.push(b);
      const call = async (base: string, method: string, path: string, body?: unknown) => {
        const r = await fetch(base + path, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
        return { status: r.status, json: (await r.json().catch(() => null)) as any };
      };
      const project = await call(a.url, "POST", "/admin/projects", { slug: "two-procs", name: "Two", default_locale: "en", locales: ["en"] });
      expect(project.status).toBe(201);
      const node = (await call(a.url, "POST", "/admin/p/two-procs/nodes", { slug: "page", title: "Page" })).json.data;
      const drafter = (await call(a.url, "POST", "/admin/p/two-procs/ai/mcp/tokens", { name: "drafter", scopes: ["content:read", "content:write"] })).json.data.token as string;
      const email = `editor-${crypto.randomUUID()}@example.com`;
      const password = `pw-${crypto.randomUUID()}`;
      const user = (await call(b.url, "POST", "/admin/users", { email, password })).json.data;
      expect((await call(b.url, "PUT", `/admin/p/two-procs/members/${user.id}`, { role: "editor" })).status).toBe(200);

      const connect = async (base: string) => {
        const client = new Client({ name: "agent", version: "1.0.0" }, { capabilities: { elicitation: { url: {} } } });
        await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${drafter}` } } }));
        clients.push(client);
        return client;
      };
      const err = await (await connect(a.url)).callTool({ name: "publish_node", arguments: { node_id: node.id } }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UrlElicitationRequiredError);
      const link = new URL((err as UrlElicitationRequiredError).elicitations[0]!.url);
      expect(link.origin).toBe(a.url.replace("127.0.0.1", "localhost")); // A's PUBLIC_URL
      const onB = `${b.url}${link.pathname}`;
      const decided = await decideInBrowser((r) => fetch(r), onB, { email, password }, "approve");
      expect(decided.decided?.status).toBe(200);
      const done = await (await connect(b.url)).callTool({ name: "publish_node", arguments: { node_id: node.id } });
      expect(done.isError).toBeFalsy();
      expect((done.structuredContent as any).node.status).toBe("published");
      const listed = await call(a.url, "GET", "/admin/p/two-procs/approvals");
      expect(listed.json.data.map((x: any) => x.status)).toEqual(["used"]);
    } finally {
      for (const c of clients) await c.close().catch(() => {});
      for (const s of served) await s.kill();
      await fresh.drop().catch(() => {});
    }
  }, 60_000);
});
