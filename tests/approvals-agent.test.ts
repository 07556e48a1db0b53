// Approvals (docs/editorial.md, Approvals) in two cases no other test covers: an agent without
// content:publish schedules a publication through a person's approval, and the scheduler then
// carries it out; and a 2026-07-28 retry whose requestState is wrong (another request's, altered,
// or not a string): the state never decides what runs, and a malformed one is -32602.
import { afterAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, UrlElicitationRequiredError } from "@modelcontextprotocol/sdk/types.js";
import { and, eq } from "drizzle-orm";
import { activity, approvals, nodes } from "../db/schema";
import { startScheduler } from "../src/schedule/scheduler";
import { decideInBrowser } from "./approvals.helpers";
import { seedNode, seedProject, waitFor } from "./helpers";
import { mcpHarness } from "./mcp-harness";
import { seedUser } from "./oauth.helpers";

const V = "2026-07-28";

describe("approvals for agents", async () => {
  const m = await mcpHarness({ OAUTH_SIGNIN_RATE_LIMIT: "1000000" });
  const { h } = m;
  const db = h.deps.db;
  const p = await seedProject(h);
  const editor = await seedUser(h, "editor", [p.id]);
  const drafter = await m.token(p.slug, { name: "drafter", scopes: ["content:read", "content:write"] });
  const clients: Client[] = [];
  afterAll(() => {
    for (const c of clients) void c.close().catch(() => {});
    m.stop();
  });
  const approval = async (id: string) => (await db.select().from(approvals).where(eq(approvals.id, id)))[0]!;
  const node = async (id: string) => (await db.select().from(nodes).where(eq(nodes.id, id)))[0]!;

  test("schedule_node by an agent without content:publish: a person approves, the retry sets the schedule, the scheduler publishes at the time", async () => {
    const n = await seedNode(h, p.slug, { slug: "launch", title: "Launch" });
    const client = new Client({ name: "agent", version: "1.0.0" }, { capabilities: { elicitation: { url: {} } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(m.url), { requestInit: { headers: { authorization: `Bearer ${drafter.token}` } } }));
    clients.push(client);
    const publishAt = new Date(Date.now() + 3000).toISOString();
    const args = { node_id: n.id, publish_at: publishAt };
    const asked = await client.callTool({ name: "schedule_node", arguments: args }).then(
      (r) => new Error(`expected -32042, got ${JSON.stringify(r)}`),
      (e: unknown) => e,
    );
    if (!(asked instanceof UrlElicitationRequiredError)) throw asked;
    const { elicitationId, url } = asked.elicitations[0]!;
    expect(await approval(elicitationId)).toMatchObject({ status: "pending", operation: "schedule_node", nodeId: n.id });
    expect((await node(n.id)).publishAt).toBeNull();

    const decided = await decideInBrowser((r) => h.app.handle(r), url as string, editor, "approve");
    expect(decided.decided?.status).toBe(200);
    expect((await approval(elicitationId)).status).toBe("approved");

    const done = await client.callTool({ name: "schedule_node", arguments: args });
    expect(done.isError).toBeFalsy();
    expect((done.structuredContent as { schedule: { publish_at: string } }).schedule.publish_at).toBe(publishAt);
    expect((await approval(elicitationId)).status).toBe("used");
    const scheduled = await node(n.id);
    expect([scheduled.status, scheduled.publishAt?.toISOString()]).toEqual(["draft", publishAt]);
    const [entry] = await db
      .select()
      .from(activity)
      .where(and(eq(activity.projectId, p.id), eq(activity.operation, "schedule_node")));
    expect(entry?.actor).toMatchObject({ kind: "mcp_token", id: drafter.id });

    // The scheduler carries it out at its time, not before.
    const scheduler = startScheduler(h.deps, 100);
    try {
      const published = await waitFor(async () => ((await node(n.id)).status === "published" ? await node(n.id) : null), { timeout: 15_000, what: "the scheduled publication" });
      expect(published.publishedAt!.getTime()).toBeGreaterThanOrEqual(Date.parse(publishAt));
    } finally {
      scheduler.stop();
    }
    expect((await h.request("GET", `/api/p/${p.slug}/nodes/by-path/launch`, { key: null })).status).toBe(200);
  });

  test("2026-07-28: a retry's requestState never decides what runs; one that is not a string (or inputResponses not an object) is -32602", async () => {
    let id = 1;
    const call = (nodeId: string, extra: Record<string, unknown> = {}) =>
      m.post(
        {
          jsonrpc: "2.0",
          id: id++,
          method: "tools/call",
          params: {
            name: "publish_node",
            arguments: { node_id: nodeId },
            ...extra,
            _meta: {
              "io.modelcontextprotocol/protocolVersion": V,
              "io.modelcontextprotocol/clientCapabilities": { elicitation: { url: {} } },
              "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
            },
          },
        },
        { token: drafter.token, headers: { "mcp-protocol-version": V, "mcp-method": "tools/call", "mcp-name": "publish_node" } },
      );
    const x = await seedNode(h, p.slug, { slug: "x", title: "X" });
    const y = await seedNode(h, p.slug, { slug: "y", title: "Y" });
    const askX = (await call(x.id)).json.result;
    const askY = (await call(y.id)).json.result;
    expect([askX.resultType, askY.resultType]).toEqual(["input_required", "input_required"]);
    const [keyY, requestY] = Object.entries(askY.inputRequests as Record<string, { params: { url: string } }>)[0]!;
    expect((await decideInBrowser((r) => h.app.handle(r), requestY.params.url, editor, "approve")).decided?.status).toBe(200);

    // X's retry carrying Y's (approved) state: X still waits for its own approval; Y's stays unused.
    const forged = await call(x.id, { inputResponses: { [keyY]: { action: "accept" } }, requestState: askY.requestState });
    expect(forged.json.result).toMatchObject({ resultType: "input_required", requestState: askX.requestState });
    expect((await node(x.id)).status).toBe("draft");
    expect((await approval(askY.requestState)).status).toBe("approved");

    // Malformed: refused before anything runs.
    for (const [extra, message] of [
      [{ requestState: 42 }, "Invalid params: requestState must be the string the input_required result gave"],
      [{ requestState: { id: askX.requestState } }, "Invalid params: requestState must be the string the input_required result gave"],
      [{ requestState: askX.requestState, inputResponses: "accept" }, "Invalid params: inputResponses must be an object of responses"],
    ] as const) {
      const res = await call(x.id, extra);
      expect([res.status, res.json.error]).toEqual([200, { code: ErrorCode.InvalidParams, message }]);
      expect(res.json.result).toBeUndefined();
    }

    // Y's retry with a state altered on the way: the approval is bound to the caller and the call, so it runs, once.
    const altered = await call(y.id, { inputResponses: { [keyY]: { action: "accept" } }, requestState: `${askY.requestState}-altered` });
    expect(altered.json.result.resultType).toBe("complete");
    expect(altered.json.result.structuredContent.node.status).toBe("published");
    expect((await approval(askY.requestState)).status).toBe("used");
    expect([(await node(x.id)).status, (await approval(askX.requestState)).status]).toEqual(["draft", "pending"]);
  });
});
