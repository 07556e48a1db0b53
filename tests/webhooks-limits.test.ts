// Webhooks (issue 36 §6): the endpoints of a project are bounded (WEBHOOKS_MAX_ENDPOINTS, default
// 10): each event is one request per endpoint, so the bound bounds what one write sends; one more
// is 409 conflict naming the bound, also when the creations come at once. An endpoint's URL often
// carries the receiver's credential: only webhooks:write reads it whole; content:read and
// projects:read (REST) and MCP credentials (list_webhooks) read its origin only.
import { afterAll, describe, expect, test } from "bun:test";
import { count, eq } from "drizzle-orm";
import { webhookEndpoints, webhookOutbox } from "../db/schema";
import { harness, keyWith, seedNode, seedProject } from "./helpers";
import { call, mcpHarness } from "./mcp-harness";

const ENV = { WEBHOOKS_ALLOW_PRIVATE_URLS: "true", WEBHOOKS_DISPATCH: "false" };
const SECRET_PATH = "/services/T0001/B0002/s3cr3tPathPart";
const HOOK = `http://127.0.0.1:9${SECRET_PATH}?token=s3cr3tQueryPart`;

const h = await harness({ ...ENV, WEBHOOKS_MAX_ENDPOINTS: "3" });
const m = await mcpHarness(ENV);
afterAll(() => m.stop());

const endpointsOf = async (projectId: string): Promise<number> => Number((await h.deps.db.select({ n: count() }).from(webhookEndpoints).where(eq(webhookEndpoints.projectId, projectId)))[0]?.n ?? 0);

describe("endpoints per project", () => {
  test("past WEBHOOKS_MAX_ENDPOINTS creation is 409 conflict naming the bound; one write sends at most that many requests per event", async () => {
    const p = await seedProject(h);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await h.request("POST", `/admin/p/${p.slug}/webhooks`, { body: { url: `http://127.0.0.1:9/h${i}`, events: ["*"] } });
      expect(res.status).toBe(201);
      ids.push(res.json.data.id);
    }
    const refused = await h.request("POST", `/admin/p/${p.slug}/webhooks`, { body: { url: "http://127.0.0.1:9/h3", events: ["*"] } });
    expect(refused.status).toBe(409);
    expect(refused.json.error).toMatchObject({ code: "conflict", details: { max: 3 } });
    expect(refused.json.error.message).toContain("at most 3 webhook endpoints");
    expect(await endpointsOf(p.id)).toBe(3);
    // One write: one request per endpoint for its event, no more.
    await seedNode(h, p.slug, { slug: "fan-out" });
    const queued = await Promise.all(ids.map((id) => h.deps.db.select({ n: count() }).from(webhookOutbox).where(eq(webhookOutbox.endpointId, id))));
    expect(queued.map((r) => Number(r[0]?.n))).toEqual([1, 1, 1]);
    // A deleted endpoint frees its place.
    expect((await h.request("DELETE", `/admin/p/${p.slug}/webhooks/${ids[0]}`)).status).toBe(204);
    expect((await h.request("POST", `/admin/p/${p.slug}/webhooks`, { body: { url: "http://127.0.0.1:9/h4", events: ["*"] } })).status).toBe(201);
  });

  test("creations at once do not pass the bound together", async () => {
    const p = await seedProject(h);
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => h.request("POST", `/admin/p/${p.slug}/webhooks`, { body: { url: `http://127.0.0.1:9/r${i}`, events: ["*"] } })));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 201, 201, 409, 409, 409]);
    expect(await endpointsOf(p.id)).toBe(3);
  });

  test("the default bound is 10", async () => {
    const d = await harness(ENV);
    const p = await seedProject(d);
    for (let i = 0; i < 10; i++) expect((await d.request("POST", `/admin/p/${p.slug}/webhooks`, { body: { url: `http://127.0.0.1:9/d${i}`, events: ["*"] } })).status).toBe(201);
    const refused = await d.request("POST", `/admin/p/${p.slug}/webhooks`, { body: { url: "http://127.0.0.1:9/d10", events: ["*"] } });
    expect(refused.status).toBe(409);
    expect(refused.json.error.details).toEqual({ max: 10 });
  });
});

describe("endpoint URLs", () => {
  test("content:read and projects:read read the origin only; webhooks:write reads the whole URL", async () => {
    const p = await seedProject(h);
    const created = await h.request("POST", `/admin/p/${p.slug}/webhooks`, { body: { url: HOOK, events: ["*"] } });
    expect(created.status).toBe(201);
    expect(created.json.data).toMatchObject({ url: HOOK, url_masked: false });
    const id = created.json.data.id;
    for (const scopes of [["content:read"], ["projects:read"], ["content:read", "projects:read"]]) {
      const key = await keyWith(h, scopes);
      const list = await h.request("GET", `/admin/p/${p.slug}/webhooks`, { key });
      expect(list.status).toBe(200);
      expect(list.json.data.map((w: any) => [w.id, w.url, w.url_masked])).toEqual([[id, "http://127.0.0.1:9/…", true]]);
      const one = await h.request("GET", `/admin/p/${p.slug}/webhooks/${id}`, { key });
      expect(one.status).toBe(200);
      expect(one.json.data).toMatchObject({ id, url: "http://127.0.0.1:9/…", url_masked: true });
      for (const text of [list.text, one.text]) {
        expect(text).not.toContain("s3cr3tPathPart");
        expect(text).not.toContain("s3cr3tQueryPart");
      }
    }
    const writer = await keyWith(h, ["webhooks:write", "content:read"]);
    const whole = await h.request("GET", `/admin/p/${p.slug}/webhooks/${id}`, { key: writer });
    expect(whole.json.data).toMatchObject({ url: HOOK, url_masked: false });
    expect((await h.request("GET", `/admin/p/${p.slug}/webhooks`, { key: writer })).json.data[0]).toMatchObject({ url: HOOK, url_masked: false });
  });

  test("a URL with no path shows as it is, masked or not", async () => {
    const p = await seedProject(h);
    const created = await h.request("POST", `/admin/p/${p.slug}/webhooks`, { body: { url: "http://127.0.0.1:9", events: ["*"] } });
    expect(created.status).toBe(201);
    const key = await keyWith(h, ["content:read"]);
    expect((await h.request("GET", `/admin/p/${p.slug}/webhooks`, { key })).json.data[0]).toMatchObject({ url: "http://127.0.0.1:9", url_masked: true });
  });

  test("over MCP (content:read) list_webhooks answers the origin only", async () => {
    const p = await seedProject(m.h);
    const created = await m.h.request("POST", `/admin/p/${p.slug}/webhooks`, { body: { url: HOOK, events: ["*"] } });
    expect(created.status).toBe(201);
    const { token } = await m.token(p.slug, { name: "reader", scopes: ["content:read"] });
    const client = await m.connect(token);
    const r = await client.callTool({ name: "list_webhooks", arguments: {} });
    expect(r.isError).toBeFalsy();
    expect(JSON.stringify(r)).not.toContain("s3cr3t");
    const listed = await call(client, "list_webhooks");
    expect(listed.webhooks.map((w: any) => [w.id, w.url, w.url_masked])).toEqual([[created.json.data.id, "http://127.0.0.1:9/…", true]]);
  });
});
