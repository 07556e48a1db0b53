// Writes racing a project deletion: every answer is a success or 404 not_found (never 500), over
// REST and over MCP, and once the deletion has committed the database holds nothing of the project.
import { afterAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { aiProviders, blocks, mcpTokens, nodes, projects, publishedBlocks, publishedNodes, publishedTranslations, themes, translations } from "../db/schema";
import { vanishedRow } from "../src/errors";
import { errorResult } from "../src/mcp/errors";
import { readReply, seedNode, seedProject, testDb, uniqueSlug } from "./helpers";
import { call, mcpHarness } from "./mcp-harness";

interface Outcome {
  via: string;
  status: number | string;
  body: string;
  created?: string;
}

const ROUNDS = 4;

// On PostgreSQL this hits the window between a write's authentication and its statement a few
// times per round (before the fix: 500s from 23503 and 400 "parent_id is not a node"); PGlite
// runs one statement at a time and rarely lands there, so the deterministic test below forces it.
describe("writes racing a project deletion", async () => {
  const m = await mcpHarness({ AI_ALLOW_PRIVATE_URLS: "true", ADMIN_AUTH_FAILURE_LIMIT: "1000000" });
  const { h } = m;
  const db = h.deps.db;
  const origin = new URL(m.url).origin;
  afterAll(() => m.stop());

  /** One REST write, classified. */
  const rest = async (method: string, path: string, body?: unknown): Promise<Outcome> => {
    // Over the listening server, like the MCP calls, so both kinds interleave as real clients do.
    const r = await readReply(
      await fetch(origin + path, {
        method,
        headers: { authorization: `Bearer ${h.rootKey}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );
    return { via: `${method} ${path.replace(/^\/admin\/p\/[^/]+/, "")}`, status: r.status, body: r.text.slice(0, 200), created: r.status === 201 ? r.json?.data?.id : undefined };
  };
  /** One MCP tool call through the SDK client, classified: a result, a tool error, or a transport failure. */
  const tool = async (client: Client, name: string, args: Record<string, unknown>): Promise<Outcome> => {
    try {
      const r = await client.callTool({ name, arguments: args });
      const text = ((r.content ?? []) as Array<{ text?: string }>).map((c) => c.text ?? "").join(" ");
      const created = (r.structuredContent as { node?: { id?: string } } | undefined)?.node?.id;
      return { via: `mcp ${name}`, status: r.isError ? text.split(":")[0]! : "ok", body: text.slice(0, 200), created: name === "create_node" ? created : undefined };
    } catch (err) {
      // The token is deleted with its project: the endpoint then answers 401, which the SDK throws.
      const msg = err instanceof Error ? err.message : String(err);
      const code = (err as { code?: unknown }).code;
      return { via: `mcp ${name}`, status: code === 401 ? "http 401" : `thrown ${String(code)}`, body: msg.slice(0, 200) };
    }
  };

  async function round(): Promise<{ outcomes: Outcome[]; projectId: string }> {
    const p = await seedProject(h);
    const node = await seedNode(h, p.slug, {
      slug: "home",
      blocks: [
        { type: "text", data: { text: "a" } },
        { type: "text", data: { text: "b" } },
      ],
    });
    const col = await seedNode(h, p.slug, { slug: "blog", type: "collection" });
    // The default MCP scopes and theme:write, which update_theme needs (issue 37).
    const { token } = await m.token(p.slug, { name: "racer", scopes: ["content:read", "content:write", "content:publish", "ai:read", "theme:write"] });
    const clients = [await m.connect(token), await m.connect(token)];
    const base = `/admin/p/${p.slug}`;
    const restOps: Array<() => Promise<Outcome>> = [
      () => rest("POST", `${base}/nodes`, { slug: uniqueSlug("r"), title: "root" }),
      () => rest("POST", `${base}/nodes`, { slug: uniqueSlug("c"), title: "child", parent_id: col.id, blocks: [{ type: "text", data: { text: "x" } }] }),
      () => rest("PATCH", `${base}/nodes/${node.id}`, { title: "t" }),
      () => rest("PUT", `${base}/nodes/${node.id}/blocks`, [{ id: node.blocks[0].id, type: "text", data: { text: "v" } }, { type: "text" }]),
      () => rest("PUT", `${base}/nodes/${node.id}/translations/fr`, { meta: { title: "fr" }, blocks: { [node.blocks[0].id]: { text: "fr" } } }),
      () => rest("PUT", `${base}/theme`, { accent_color: "#112233" }),
      () => rest("POST", `${base}/ai/providers`, { name: "p", kind: "openai", base_url: "http://127.0.0.1:9/v1", api_key: "sk-test-1234" }),
      () => rest("POST", `${base}/ai/mcp/tokens`, { name: "t" }),
    ];
    const mcpOps = (c: Client): Array<() => Promise<Outcome>> => [
      () => tool(c, "create_node", { slug: uniqueSlug("m"), title: "mcp", parent_id: col.id }),
      () => tool(c, "create_node", { slug: uniqueSlug("m"), title: "mcp" }),
      () => tool(c, "update_node", { node_id: node.id, title: "m" }),
      () => tool(c, "upsert_translation", { node_id: node.id, locale: "fr", meta: { title: "mfr" } }),
      () => tool(c, "update_theme", { logo_url: null, favicon_url: null, accent_color: "#445566" }),
    ];
    // Writers loop until they see the project gone; the deletion starts once 40 writes (8 of them
    // MCP calls) have answered, so every writer has a request under way when it commits.
    const outcomes: Outcome[] = [];
    let deletion: Promise<void> | null = null;
    let deleted = false;
    const gone = (o: Outcome): boolean => o.status === 404 || o.status === "not_found" || o.status === "http 401";
    const writer = async (ops: Array<() => Promise<Outcome>>, offset: number): Promise<void> => {
      for (let i = offset; i < offset + 400; i++) {
        const wasDeleted = deleted;
        const o = await ops[i % ops.length]!();
        outcomes.push(o);
        if (deletion === null && outcomes.filter((x) => x.via.startsWith("mcp")).length >= 8 && outcomes.length >= 40) {
          deletion = rest("DELETE", `/admin/projects/${p.id}`).then((d) => {
            outcomes.push({ ...d, via: "DELETE project" });
            deleted = true;
          });
        }
        if (wasDeleted && gone(o)) return;
      }
    };
    await Promise.all([...Array.from({ length: 8 }, (_, w) => writer(restOps, w)), ...Array.from({ length: 4 }, (_, w) => writer(mcpOps(clients[w % 2]!), w))]);
    await deletion;
    return { outcomes, projectId: p.id };
  }

  test(`${ROUNDS} rounds: every answer is 2xx or 404 not_found, and nothing of the project is left`, async () => {
    const all: Outcome[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const { outcomes, projectId } = await round();
      all.push(...outcomes);
      expect(outcomes.find((o) => o.via === "DELETE project")?.status).toBe(204);
      await expectNothingLeft(
        db,
        projectId,
        outcomes.map((o) => o.created).filter((id): id is string => typeof id === "string"),
      );
    }
    const bad = all.filter(
      (o) => !(o.status === "ok" || o.status === "not_found" || o.status === "http 401" || (typeof o.status === "number" && ((o.status >= 200 && o.status < 300) || o.status === 404))),
    );
    expect(bad).toEqual([]);
    // A 404 must be the documented body (not_found), never another code under a 404 status.
    for (const o of all.filter((x) => x.status === 404)) expect(JSON.parse(o.body).error.code).toBe("not_found");
    // The race is real: some writes landed before the deletion, some were refused after it.
    expect(all.some((o) => o.status === 201)).toBe(true);
    expect(all.some((o) => o.status === 404 || o.status === "not_found")).toBe(true);
  }, 120_000);
});

/**
 * The real database, with one hook: `beforeNextWrite(f)` runs f just before the next transaction
 * or INSERT starts, i.e. after the request has authenticated and resolved its project. This
 * puts a project deletion exactly in the window a racing request may hit, on both drivers.
 */
function interleaving(real: Db): { db: Db; beforeNextWrite(f: () => Promise<unknown>): void; armed(): boolean } {
  let pending: (() => Promise<unknown>) | null = null;
  const runPending = async (): Promise<void> => {
    const f = pending;
    pending = null;
    if (f) await f();
  };
  // Query builders are lazy: the statement runs when awaited, so the hook runs in `then`.
  const lazy = (target: object): any =>
    new Proxy(target, {
      get(t, prop) {
        const v = Reflect.get(t, prop, t);
        if (prop === "then") return (ok: (v: unknown) => unknown, fail: (e: unknown) => unknown) => runPending().then(() => (t as PromiseLike<unknown>).then(ok, fail), fail);
        if (typeof v !== "function") return v;
        return (...args: unknown[]) => {
          const r = v.apply(t, args);
          return r && typeof r === "object" ? lazy(r) : r;
        };
      },
    });
  const db = new Proxy(real, {
    get(t, prop) {
      const v = Reflect.get(t, prop, t);
      if (prop === "transaction") return async (...args: unknown[]) => (await runPending(), v.apply(t, args));
      if (prop === "insert") return (...args: unknown[]) => lazy(v.apply(t, args));
      return typeof v === "function" ? v.bind(t) : v;
    },
  }) as Db;
  return { db, beforeNextWrite: (f) => void (pending = f), armed: () => pending !== null };
}

describe("a project deleted between a write's authentication and its statement (deterministic)", async () => {
  const hook = interleaving((await testDb()).db);
  const m = await mcpHarness({ AI_ALLOW_PRIVATE_URLS: "true" }, { db: hook.db });
  const { h } = m;
  afterAll(() => m.stop());

  /** A fresh project with a node, a collection and an MCP token; the next write deletes it first. */
  async function doomed(): Promise<{ id: string; slug: string; node: any; col: any; token: string }> {
    const p = await seedProject(h);
    const node = await seedNode(h, p.slug, { slug: "home", blocks: [{ type: "text", data: { text: "a" } }] });
    const col = await seedNode(h, p.slug, { slug: "blog", type: "collection" });
    const { token } = await m.token(p.slug);
    hook.beforeNextWrite(() => h.deps.dbHandle.db.delete(projects).where(eq(projects.id, p.id)));
    return { ...p, node, col, token };
  }

  const cases: Array<[string, (p: Awaited<ReturnType<typeof doomed>>) => [string, string, unknown]]> = [
    ["create a top-level node", (p) => ["POST", `/admin/p/${p.slug}/nodes`, { slug: "new", title: "New" }]],
    ["create a child node", (p) => ["POST", `/admin/p/${p.slug}/nodes`, { slug: "new", title: "New", parent_id: p.col.id }]],
    ["update a node", (p) => ["PATCH", `/admin/p/${p.slug}/nodes/${p.node.id}`, { title: "T" }]],
    ["replace blocks", (p) => ["PUT", `/admin/p/${p.slug}/nodes/${p.node.id}/blocks`, [{ type: "text" }]]],
    ["publish", (p) => ["POST", `/admin/p/${p.slug}/nodes/${p.node.id}/publish`, undefined]],
    ["delete a node", (p) => ["DELETE", `/admin/p/${p.slug}/nodes/${p.node.id}`, undefined]],
    ["write a translation", (p) => ["PUT", `/admin/p/${p.slug}/nodes/${p.node.id}/translations/fr`, { meta: { title: "T" } }]],
    ["write the theme", (p) => ["PUT", `/admin/p/${p.slug}/theme`, { accent_color: "#112233" }]],
    ["create a provider", (p) => ["POST", `/admin/p/${p.slug}/ai/providers`, { name: "x", kind: "openai", base_url: "http://127.0.0.1:9/v1" }]],
    ["create an MCP token", (p) => ["POST", `/admin/p/${p.slug}/ai/mcp/tokens`, { name: "x" }]],
  ];
  for (const [name, build] of cases) {
    test(`REST: ${name} → 404 project not found, nothing written`, async () => {
      const p = await doomed();
      const [method, path, body] = build(p);
      const res = await h.request(method, path, { body });
      expect(hook.armed()).toBe(false); // the deletion ran inside this request, after its authentication
      expect({ status: res.status, body: res.json }).toEqual({ status: 404, body: { error: { code: "not_found", message: "project not found" } } });
      await expectNothingLeft(h.deps.dbHandle.db, p.id, [p.node.id, p.col.id]);
    });
  }

  test("MCP: create_node, update_node and upsert_translation → tool error not_found, nothing written", async () => {
    for (const [tool, args] of [
      ["create_node", { slug: "new", title: "New" }],
      ["create_node", { slug: "new", title: "New", parent_id: "COL" }],
      ["update_node", { node_id: "NODE", title: "T" }],
      ["upsert_translation", { node_id: "NODE", locale: "fr", meta: { title: "T" } }],
    ] as const) {
      const p = await doomed();
      const client = await m.connect(p.token);
      const filled = JSON.parse(JSON.stringify(args).replace("COL", p.col.id).replace("NODE", p.node.id));
      const r = await client.callTool({ name: tool, arguments: filled });
      expect(hook.armed()).toBe(false);
      expect({ tool, isError: r.isError, text: (r.content as Array<{ text: string }>)[0]!.text }).toEqual({ tool, isError: true, text: "not_found: project not found" });
      await expectNothingLeft(h.deps.dbHandle.db, p.id, [p.node.id, p.col.id]);
    }
  });

  test("a live project is unaffected: the same writes succeed when nothing deletes it", async () => {
    const p = await seedProject(h);
    const res = await h.request("POST", `/admin/p/${p.slug}/nodes`, { body: { slug: "new", title: "New" } });
    expect(res.status).toBe(201);
    const { token } = await m.token(p.slug);
    expect((await call(await m.connect(token), "create_node", { slug: "other", title: "Other" })).node.path).toBe("other");
  });
});

describe("a foreign-key violation names what vanished, whichever driver raised it", () => {
  const log = { debug() {}, info() {}, warn() {}, error() {} } as unknown as Parameters<typeof errorResult>[2];
  const failure = async (write: () => PromiseLike<unknown>): Promise<unknown> => {
    try {
      await write();
    } catch (err) {
      return err;
    }
    throw new Error("the write was expected to fail");
  };

  test("a node of a deleted project → project not found; a block of a deleted node → node not found; other errors untouched", async () => {
    const db = (await testDb()).db;
    const gone = "0190a3c4-0000-7000-8000-000000000000";
    const noProject = await failure(() => db.insert(nodes).values({ id: gone, projectId: gone, slug: "x", path: "x", type: "page", title: "x" }));
    const noNode = await failure(() => db.insert(blocks).values({ id: gone, nodeId: gone, type: "text", order: 0 }));
    expect(vanishedRow(noProject)).toMatchObject({ code: "not_found", message: "project not found", status: 404 });
    expect(vanishedRow(noNode)).toMatchObject({ code: "not_found", message: "node not found", status: 404 });
    // The MCP mapping answers the same as a tool error, without the driver's text (it carries the query).
    expect(errorResult(noProject, "create_node", log)).toEqual({ isError: true, content: [{ type: "text", text: "not_found: project not found" }] });
    const syntax = await failure(() => db.execute(sql`select from nowhere_at_all`));
    expect(vanishedRow(syntax)).toBeNull();
    expect(vanishedRow(new Error("x"))).toBeNull();
  });
});

async function expectNothingLeft(db: Db, projectId: string, createdNodeIds: string[]): Promise<void> {
  const counts = await Promise.all([
    db.select({ n: sql<number>`count(*)::int` }).from(projects).where(eq(projects.id, projectId)),
    db.select({ n: sql<number>`count(*)::int` }).from(nodes).where(eq(nodes.projectId, projectId)),
    db.select({ n: sql<number>`count(*)::int` }).from(translations).where(eq(translations.projectId, projectId)),
    // The published versions too (issue 37).
    db.select({ n: sql<number>`count(*)::int` }).from(publishedNodes).where(eq(publishedNodes.projectId, projectId)),
    db.select({ n: sql<number>`count(*)::int` }).from(publishedTranslations).where(eq(publishedTranslations.projectId, projectId)),
    db.select({ n: sql<number>`count(*)::int` }).from(themes).where(eq(themes.projectId, projectId)),
    db.select({ n: sql<number>`count(*)::int` }).from(aiProviders).where(eq(aiProviders.projectId, projectId)),
    db.select({ n: sql<number>`count(*)::int` }).from(mcpTokens).where(eq(mcpTokens.projectId, projectId)),
    createdNodeIds.length === 0 ? Promise.resolve([{ n: 0 }]) : db.select({ n: sql<number>`count(*)::int` }).from(nodes).where(inArray(nodes.id, createdNodeIds)),
    createdNodeIds.length === 0 ? Promise.resolve([{ n: 0 }]) : db.select({ n: sql<number>`count(*)::int` }).from(blocks).where(inArray(blocks.nodeId, createdNodeIds)),
    createdNodeIds.length === 0 ? Promise.resolve([{ n: 0 }]) : db.select({ n: sql<number>`count(*)::int` }).from(publishedBlocks).where(inArray(publishedBlocks.nodeId, createdNodeIds)),
  ]);
  expect(counts.map((c) => Number(c[0]!.n))).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
}
