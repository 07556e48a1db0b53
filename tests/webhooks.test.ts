// Webhooks (issue 28) end to end against a real receiver on loopback: endpoints over REST, events
// from the outbox written in the write's transaction, signed per Standard Webhooks (verified with
// the `standardwebhooks` package), retried after 500 and 429 (Retry-After), redelivered, tested,
// paused, rotated, disabled; the outbound guard; scopes; MCP read-only tools; two dispatchers.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { asc, eq } from "drizzle-orm";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { webhookDeliveries, webhookEndpoints, webhookEvents, webhookOutbox } from "../db/schema";
import { transitionNode } from "../src/content/service";
import { startDispatcher } from "../src/webhooks/dispatcher";
import { systemWrite } from "../src/write/context";
import { enqueueEvent } from "../src/write/outbox";
import { harness, keyWith, seedNode, seedProject, type TestHarness, waitFor } from "./helpers";
import { call } from "./mcp-harness";
import { type Received, startReceiver } from "./webhooks.helpers";

const FAST = {
  WEBHOOKS_ALLOW_PRIVATE_URLS: "true",
  WEBHOOKS_RETRY_SCHEDULE: "0,100ms,100ms,100ms",
  WEBHOOKS_POLL_MS: "500",
  WEBHOOKS_TIMEOUT_MS: "2000",
  WEBHOOKS_SECRET_GRACE: "3600",
};

setDefaultTimeout(30_000);
const receiver = startReceiver();
const h: TestHarness = await harness(FAST);
const dispatcher = startDispatcher(h.deps);
afterAll(async () => {
  await dispatcher.stop();
  receiver.stop();
});

async function endpoint(ref: string, path: string, events: string[] = ["*"]): Promise<{ id: string; secret: string }> {
  const res = await h.request("POST", `/admin/p/${ref}/webhooks`, { body: { url: receiver.url(path), events } });
  expect(res.status).toBe(201);
  return { id: res.json.data.id, secret: res.json.data.secret };
}

/** Verified with the standardwebhooks package (not our own code); answers the parsed payload. */
const verify = (r: Received, secret: string): any => new Webhook(secret).verify(r.body, r.headers);
const types = (rs: Received[]): string[] => rs.map((r) => JSON.parse(r.body).type);
const paths = (rs: Received[], secret: string): string[] => rs.map((r) => verify(r, secret).data.node.path);

/** An endpoint's outbox rows in event order, as [status, attempts], once none is leased (each attempt recorded). */
const outboxOf = (endpointId: string): Promise<Array<[string, number]>> =>
  waitFor(async () => {
    const rows = await h.deps.db.select().from(webhookOutbox).where(eq(webhookOutbox.endpointId, endpointId)).orderBy(asc(webhookOutbox.seq));
    return rows.every((r) => r.leaseUntil === null) && rows.map((r): [string, number] => [r.status, r.attempts]);
  });

describe("webhook endpoints", () => {
  test("create answers the secret once (no-store), sealed at rest; reads never show it", async () => {
    const p = await seedProject(h);
    const res = await h.request("POST", `/admin/p/${p.slug}/webhooks`, { body: { url: receiver.url("/crud"), events: ["node.published", "node.deleted"], description: "CDN purge" } });
    expect(res.status).toBe(201);
    expect(res.headers.get("cache-control")).toContain("no-store");
    const { id, secret } = res.json.data;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(res.json.data).toMatchObject({ url: receiver.url("/crud"), events: ["node.published", "node.deleted"], description: "CDN purge", status: "active", pending: 0, disabled_reason: null });
    const [row] = await h.deps.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id));
    expect(row?.secretSealed).toStartWith("v1:");
    expect(row?.secretSealed).not.toContain(secret.slice(6));
    const list = await h.request("GET", `/admin/p/${p.slug}/webhooks`);
    expect(list.status).toBe(200);
    expect(list.json.data).toHaveLength(1);
    expect(list.text).not.toContain(secret);
    const one = await h.request("GET", `/admin/p/${p.slug}/webhooks/${id}`);
    expect(one.status).toBe(200);
    expect(one.json.data.secret).toBeUndefined();
    const patched = await h.request("PATCH", `/admin/p/${p.slug}/webhooks/${id}`, { body: { events: ["*"], description: null } });
    expect(patched.status).toBe(200);
    expect(patched.json.data).toMatchObject({ events: ["*"], description: null });
    expect(patched.json.data.secret).toBeUndefined();
    expect((await h.request("POST", `/admin/p/${p.slug}/webhooks`, { body: { url: receiver.url("/x"), events: ["node.exploded"] } })).status).toBe(400);
    expect((await h.request("DELETE", `/admin/p/${p.slug}/webhooks/${id}`)).status).toBe(204);
    expect((await h.request("GET", `/admin/p/${p.slug}/webhooks/${id}`)).status).toBe(404);
    expect(await h.deps.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id))).toHaveLength(0);
  });

  test("outbound guard: private and http URLs need WEBHOOKS_ALLOW_PRIVATE_URLS; link-local and metadata never", async () => {
    const strict = await harness({});
    const p = await seedProject(strict);
    const refused = await strict.request("POST", `/admin/p/${p.slug}/webhooks`, { body: { url: "http://127.0.0.1:9/hook", events: ["*"] } });
    expect(refused.status).toBe(400);
    expect(refused.json.error.message).toContain("WEBHOOKS_ALLOW_PRIVATE_URLS");
    const loop = await strict.request("POST", `/admin/p/${p.slug}/webhooks`, { body: { url: "https://10.0.0.8/hook", events: ["*"] } });
    expect(loop.status).toBe(400);
    const p2 = await seedProject(h);
    for (const url of ["http://169.254.169.254/latest/meta-data", "http://[fe80::1]/x", "http://metadata.google.internal/x", "ftp://example.com/x"]) {
      const r = await h.request("POST", `/admin/p/${p2.slug}/webhooks`, { body: { url, events: ["*"] } });
      expect(r.status).toBe(400);
    }
  });

  test("scopes: projects:read reads, webhooks:write changes; MCP has read-only tools only", async () => {
    const p = await seedProject(h);
    const ep = await endpoint(p.slug, "/scopes");
    const reader = await keyWith(h, ["projects:read"]);
    expect((await h.request("GET", `/admin/p/${p.slug}/webhooks`, { key: reader })).status).toBe(200);
    expect((await h.request("GET", `/admin/p/${p.slug}/webhooks/${ep.id}/deliveries`, { key: reader })).status).toBe(200);
    const denied = await h.request("POST", `/admin/p/${p.slug}/webhooks`, { key: reader, body: { url: receiver.url("/x"), events: ["*"] } });
    expect(denied.status).toBe(403);
    expect(denied.json.error.code).toBe("insufficient_scope");
    expect((await h.request("PATCH", `/admin/p/${p.slug}/webhooks/${ep.id}`, { key: reader, body: { status: "paused" } })).status).toBe(403);
    const writer = await keyWith(h, ["webhooks:write"]);
    expect((await h.request("PATCH", `/admin/p/${p.slug}/webhooks/${ep.id}`, { key: writer, body: { description: "x" } })).status).toBe(200);

    // MCP, through the SDK's Client: list_webhooks and list_webhook_deliveries, nothing that writes.
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (r) => mcpApp.app.handle(r) });
    const mcpApp = await harness({ ...FAST, PUBLIC_URL: `http://127.0.0.1:${server.port}` });
    try {
      const token = await mcpApp.request("POST", `/admin/p/${p.id}/ai/mcp/tokens`, { body: { name: "agent" } });
      expect(token.status).toBe(201);
      const client = new Client({ name: "webhooks", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${server.port}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token.json.data.token}` } } }));
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain("list_webhooks");
      expect(names).toContain("list_webhook_deliveries");
      for (const n of ["create_webhook", "update_webhook", "delete_webhook", "redeliver_webhook", "test_webhook", "get_webhook"]) expect(names).not.toContain(n);
      const listed = await call(client, "list_webhooks");
      expect(listed.webhooks.map((w: { id: string }) => w.id)).toEqual([ep.id]);
      expect(JSON.stringify(listed)).not.toContain(ep.secret);
      const log = await call(client, "list_webhook_deliveries", { webhook_id: ep.id });
      expect(log).toMatchObject({ deliveries: [], total: 0, page: 1 }); // nothing was sent to it yet
      await client.close();
    } finally {
      server.stop(true);
    }
  });
});

describe("events", () => {
  test("content writes send signed events in order, verified by standardwebhooks; payload carries the node, path, locale and public URL", async () => {
    const p = await seedProject(h, { public_base_url: "https://www.example.com" });
    const ep = await endpoint(p.slug, "/content");
    const node = await seedNode(h, p.slug, { slug: "hello", title: "Hello" }, true);
    expect((await h.request("PATCH", `/admin/p/${p.slug}/nodes/${node.id}`, { body: { title: "Hello again" } })).status).toBe(200);
    // status published: a publisher's write publishes the translation (without it, a draft working copy: translation.updated).
    expect((await h.request("PUT", `/admin/p/${p.slug}/nodes/${node.id}/translations/fr`, { body: { meta: { title: "Bonjour", slug: "bonjour" }, status: "published" } })).status).toBe(200);
    expect((await h.request("POST", `/admin/p/${p.slug}/nodes/${node.id}/unpublish`)).status).toBe(200);
    expect((await h.request("POST", `/admin/p/${p.slug}/nodes/${node.id}/archive`)).status).toBe(200);
    expect((await h.request("POST", `/admin/p/${p.slug}/nodes/${node.id}/restore`)).status).toBe(200);
    expect((await h.request("PUT", `/admin/p/${p.slug}/theme`, { body: { accent_color: "#112233" } })).status).toBe(200);
    expect((await h.request("PATCH", `/admin/projects/${p.slug}`, { body: { name: "Renamed" } })).status).toBe(200);
    expect((await h.request("DELETE", `/admin/p/${p.slug}/nodes/${node.id}`)).status).toBe(204);
    // Back from the trash (its first revision): node.restored, like an archived node brought back.
    const back = await h.request("POST", `/admin/p/${p.slug}/nodes/${node.id}/revisions/1/restore`);
    expect(back.status).toBe(200);
    const want = [
      "node.created",
      "node.published",
      "node.updated",
      "translation.published",
      "node.unpublished",
      "node.archived",
      "node.restored",
      "theme.updated",
      "project.updated",
      "node.deleted",
      "node.restored",
    ];
    await waitFor(() => receiver.on("/content").length >= want.length, { what: "every event" });
    const got = receiver.on("/content");
    expect(types(got)).toEqual(want);
    const payloads = got.map((r) => verify(r, ep.secret) as any);
    for (const [i, r] of got.entries()) {
      expect(r.headers["content-type"]).toBe("application/json");
      expect(r.headers["webhook-id"]).toMatch(/^msg_[0-9a-f]{32}$/);
      expect(Number(r.headers["webhook-timestamp"])).toBeCloseTo(Date.now() / 1000, -2);
      expect(r.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      expect(payloads[i].data.project).toEqual({ id: p.id, slug: p.slug });
      expect(Date.parse(payloads[i].timestamp)).toBeGreaterThan(Date.now() - 60_000);
    }
    expect(new Set(got.map((r) => r.headers["webhook-id"])).size).toBe(want.length);
    expect(payloads[1].data).toMatchObject({ node: { id: node.id, path: "hello", status: "published" }, locale: null, url: "https://www.example.com/hello" });
    // node.published carries the version it published (issue 37).
    expect(payloads[1].data.version).toMatchObject({ title: "Hello", slug: "hello" });
    expect(payloads[3].data).toMatchObject({ node: { id: node.id, path: "hello" }, locale: "fr", url: "https://www.example.com/fr/bonjour" });
    expect(payloads[9].data).toMatchObject({ node: { id: node.id, path: "hello" }, url: "https://www.example.com/hello" });
    expect(payloads[10].data).toMatchObject({ node: { id: node.id, path: "hello", status: "draft", revision: back.json.data.revision }, url: "https://www.example.com/hello" });
    // A tampered body fails verification.
    expect(() => new Webhook(ep.secret).verify(got[0]!.body.replace("node", "nodf"), got[0]!.headers)).toThrow(new WebhookVerificationError("No matching signature found"));
    // The deliveries log: every attempt, newest first.
    const log = await waitFor(async () => {
      const l = await h.request("GET", `/admin/p/${p.slug}/webhooks/${ep.id}/deliveries?per_page=100`);
      return l.json.total === want.length ? l : null;
    });
    expect(log.status).toBe(200);
    expect(log.json.data[0]).toMatchObject({ event_type: "node.restored", status_code: 200, outcome: "succeeded", attempt: 1, error: null, next_attempt_at: null });
    expect(log.json.data[0].duration_ms).toBeGreaterThanOrEqual(0);
    expect(log.json.data[0].event_id).toBe(got.at(-1)!.headers["webhook-id"]);
  });

  test("a translation event's URL is the localised path: each ancestor's published slug in that locale", async () => {
    const p = await seedProject(h, { public_base_url: "https://www.example.com" });
    const ep = await endpoint(p.slug, "/localised", ["translation.published", "translation.updated"]);
    const parent = await seedNode(h, p.slug, { slug: "parent" }, true);
    const child = await seedNode(h, p.slug, { slug: "child", parent_id: parent.id }, true);
    const put = (id: string, meta: Record<string, string>, status: string) => h.request("PUT", `/admin/p/${p.slug}/nodes/${id}/translations/fr`, { body: { meta: { title: "t", ...meta }, status } });
    expect((await put(parent.id, { slug: "parent-fr" }, "published")).status).toBe(200);
    expect((await put(child.id, { slug: "enfant" }, "published")).status).toBe(200);
    // A draft's own slug is not live: a draft working copy of a published translation keeps its published slug's URL,
    expect((await put(child.id, { slug: "brouillon" }, "draft")).status).toBe(200);
    // and a translation never published keeps the base slug below the published parent's.
    const other = await seedNode(h, p.slug, { slug: "other", parent_id: parent.id }, true);
    expect((await put(other.id, { slug: "autre" }, "draft")).status).toBe(200);
    await waitFor(() => receiver.on("/localised").length >= 4);
    const urls = receiver.on("/localised").map((r) => [JSON.parse(r.body).type, (verify(r, ep.secret) as any).data.url]);
    expect(urls).toEqual([
      ["translation.published", "https://www.example.com/fr/parent-fr"],
      ["translation.published", "https://www.example.com/fr/parent-fr/enfant"],
      ["translation.updated", "https://www.example.com/fr/parent-fr/enfant"],
      ["translation.updated", "https://www.example.com/fr/parent-fr/other"],
    ]);
  });

  test("an endpoint gets only the events it subscribes to; model.updated", async () => {
    const p = await seedProject(h);
    const ep = await endpoint(p.slug, "/only-model", ["model.updated"]);
    await seedNode(h, p.slug, { slug: "ignored" }, true);
    const model = await h.request("PUT", `/admin/p/${p.slug}/model`, { body: { strict: false, block_types: [], node_types: [] } });
    expect(model.status).toBe(200);
    // model.updated, the one event it wants, comes after the node's: an endpoint's events go out in
    // order, so a node event sent to it would have arrived first.
    await waitFor(() => types(receiver.on("/only-model")).includes("model.updated"), { what: "model.updated" });
    expect(types(receiver.on("/only-model"))).toEqual(["model.updated"]);
    expect(await outboxOf(ep.id)).toEqual([["delivered", 1]]);
  });

  test("enqueueEvent: another write's event (media), in its transaction, to the endpoints subscribed", async () => {
    const p = await seedProject(h);
    const ep = await endpoint(p.slug, "/media", ["media.created"]);
    const other = await endpoint(p.slug, "/no-media", ["node.created"]);
    const events = async (): Promise<number> => (await h.deps.db.select().from(webhookEvents).where(eq(webhookEvents.projectId, p.id))).length;
    const id = await h.deps.db.transaction((tx) => enqueueEvent(tx, p.id, "media.created", { media: { id: "m1", filename: "a.png" } }));
    expect(id).toMatch(/^msg_/);
    await waitFor(() => receiver.on("/media").length >= 1);
    const got = receiver.on("/media")[0]!;
    expect(got.headers["webhook-id"]).toBe(id!);
    expect(verify(got, ep.secret)).toMatchObject({ type: "media.created", data: { project: { id: p.id, slug: p.slug }, media: { id: "m1", filename: "a.png" } } });
    // The endpoint that does not want it has no row for it (nothing it could ever be sent).
    expect(await outboxOf(other.id)).toEqual([]);
    expect(await outboxOf(ep.id)).toEqual([["delivered", 1]]);
    // No endpoint wants it: nothing is written.
    expect(await events()).toBe(1);
    expect(await h.deps.db.transaction((tx) => enqueueEvent(tx, p.id, "media.deleted", {}))).toBeNull();
    expect(await events()).toBe(1);
  });

  test("a rolled-back write sends nothing and leaves no event row", async () => {
    const p = await seedProject(h);
    const ep = await endpoint(p.slug, "/rollback");
    const node = await seedNode(h, p.slug, { slug: "draft" });
    await waitFor(() => receiver.on("/rollback").length >= 1);
    const project = (await h.request("GET", `/admin/projects/${p.slug}`)).json.data;
    const before = await h.deps.db.select().from(webhookEvents).where(eq(webhookEvents.projectId, p.id));
    // The publish runs to its end (its event written), then the enclosing transaction rolls back.
    await expect(
      h.deps.db.transaction(async (tx) => {
        await transitionNode(tx, systemWrite(), { ...project, id: p.id } as never, node.id, "publish", new Date());
        const inside = await tx.select().from(webhookEvents).where(eq(webhookEvents.projectId, p.id));
        expect(inside.length).toBe(before.length + 1);
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect(await h.deps.db.select().from(webhookEvents).where(eq(webhookEvents.projectId, p.id))).toHaveLength(before.length);
    // A later committed write arrives; the rolled-back one never did.
    expect((await h.request("POST", `/admin/p/${p.slug}/nodes/${node.id}/archive`)).status).toBe(200);
    // The archive is sent after anything before it (an endpoint's events go out in order): had the
    // publish's event survived, it would have arrived first.
    await waitFor(() => types(receiver.on("/rollback")).includes("node.archived"), { what: "node.archived" });
    expect(types(receiver.on("/rollback"))).toEqual(["node.created", "node.archived"]);
    expect(await outboxOf(ep.id)).toEqual([
      ["delivered", 1],
      ["delivered", 1],
    ]);
  });
});

describe("delivery", () => {
  test("retried after 500 (same webhook-id), logged per attempt", async () => {
    const p = await seedProject(h);
    const ep = await endpoint(p.slug, "/retry500");
    receiver.script("/retry500", [{ status: 500 }, { status: 503 }]);
    await seedNode(h, p.slug, { slug: "r" });
    await waitFor(() => receiver.on("/retry500").length >= 3, { what: "three attempts" });
    const got = receiver.on("/retry500");
    expect(new Set(got.map((r) => r.headers["webhook-id"])).size).toBe(1);
    for (const r of got) verify(r, ep.secret);
    expect(got[1]!.at - got[0]!.at).toBeGreaterThanOrEqual(90);
    const log = await waitFor(async () => {
      const l = await h.request("GET", `/admin/p/${p.slug}/webhooks/${ep.id}/deliveries`);
      return l.json.total === 3 ? l : null;
    });
    expect(log.json.data.map((d: any) => [d.attempt, d.status_code, d.outcome])).toEqual([
      [3, 200, "succeeded"],
      [2, 503, "retrying"],
      [1, 500, "retrying"],
    ]);
    expect(log.json.data[2].error).toBe("HTTP 500");
    expect(log.json.data[2].next_attempt_at).toBeString();
    const read = await h.request("GET", `/admin/p/${p.slug}/webhooks/${ep.id}`);
    expect(read.json.data).toMatchObject({ failing_since: null, status: "active", pending: 0 });
  });

  test("retried after 429 no sooner than Retry-After", async () => {
    const p = await seedProject(h);
    const ep = await endpoint(p.slug, "/retry429");
    receiver.script("/retry429", [{ status: 429, headers: { "retry-after": "1" } }]);
    await seedNode(h, p.slug, { slug: "r" });
    await waitFor(() => receiver.on("/retry429").length >= 2, { timeout: 5000, what: "the retry" });
    const [first, second] = receiver.on("/retry429");
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(950);
    expect(second!.headers["webhook-id"]).toBe(first!.headers["webhook-id"]);
    verify(second!, ep.secret);
  });

  test("a delivery failing every attempt ends failed; an endpoint failing for too long is disabled and says so", async () => {
    const p = await seedProject(h);
    const ep = await endpoint(p.slug, "/down");
    receiver.script(
      "/down",
      Array.from({ length: 20 }, () => ({ status: 500 })),
    );
    await seedNode(h, p.slug, { slug: "a" });
    await waitFor(() => receiver.on("/down").length >= 4, { what: "four attempts" });
    expect(await outboxOf(ep.id)).toEqual([["failed", 4]]); // the schedule has four attempts
    let read = await h.request("GET", `/admin/p/${p.slug}/webhooks/${ep.id}`);
    expect(read.json.data.status).toBe("active");
    expect(read.json.data.failing_since).toBeString();
    // Failing for days: the next failure disables it.
    await h.deps.db
      .update(webhookEndpoints)
      .set({ failingSince: new Date(Date.now() - 6 * 86_400_000) })
      .where(eq(webhookEndpoints.id, ep.id));
    await seedNode(h, p.slug, { slug: "b" });
    await waitFor(async () => (await h.request("GET", `/admin/p/${p.slug}/webhooks/${ep.id}`)).json.data.status === "disabled", { what: "disabled" });
    read = await h.request("GET", `/admin/p/${p.slug}/webhooks/${ep.id}`);
    expect(read.json.data.disabled_reason).toContain("every attempt has failed");
    expect(read.json.data.disabled_at).toBeString();
    // b's first attempt disabled it: b is held (its retry waits), a was not tried again.
    expect(read.json.data.pending).toBe(1);
    expect(paths(receiver.on("/down"), ep.secret)).toEqual(["a", "a", "a", "a", "b"]);
    expect(await outboxOf(ep.id)).toEqual([
      ["failed", 4],
      ["pending", 1],
    ]);
    // Disabled: new events are not kept; the held one waits. Resuming sends it.
    await seedNode(h, p.slug, { slug: "c" });
    expect((await h.request("GET", `/admin/p/${p.slug}/webhooks/${ep.id}`)).json.data.pending).toBe(1);
    expect((await h.request("POST", `/admin/p/${p.slug}/webhooks/${ep.id}/test`)).status).toBe(409);
    receiver.script("/down", []);
    const resumed = await h.request("PATCH", `/admin/p/${p.slug}/webhooks/${ep.id}`, { body: { status: "active" } });
    expect(resumed.json.data).toMatchObject({ status: "active", disabled_reason: null, failing_since: null });
    // d, written after the resume, comes after the held b; c, written while disabled, never.
    await seedNode(h, p.slug, { slug: "d" });
    await waitFor(() => paths(receiver.on("/down"), ep.secret).includes("d"), { what: "the held event, then d" });
    expect(paths(receiver.on("/down"), ep.secret)).toEqual(["a", "a", "a", "a", "b", "b", "d"]);
    expect(await outboxOf(ep.id)).toEqual([
      ["failed", 4],
      ["delivered", 2],
      ["delivered", 1],
    ]);
  });

  test("redelivery sends the same event again; the test event", async () => {
    const p = await seedProject(h);
    const ep = await endpoint(p.slug, "/redeliver");
    await seedNode(h, p.slug, { slug: "r" });
    await waitFor(() => receiver.on("/redeliver").length >= 1);
    const log = await waitFor(async () => (await h.request("GET", `/admin/p/${p.slug}/webhooks/${ep.id}/deliveries`)).json.data[0]);
    const again = await h.request("POST", `/admin/p/${p.slug}/webhooks/${ep.id}/deliveries/${log.id}/redeliver`);
    expect(again.status).toBe(201);
    expect(again.json.data).toEqual({ event_id: log.event_id, event_type: "node.created" });
    await waitFor(() => receiver.on("/redeliver").length >= 2);
    const [a, b] = receiver.on("/redeliver");
    expect(b!.headers["webhook-id"]).toBe(a!.headers["webhook-id"]);
    expect(b!.body).toBe(a!.body);
    verify(b!, ep.secret);
    expect((await h.request("POST", `/admin/p/${p.slug}/webhooks/${ep.id}/deliveries/${crypto.randomUUID()}/redeliver`)).status).toBe(404);

    const sent = await h.request("POST", `/admin/p/${p.slug}/webhooks/${ep.id}/test`);
    expect(sent.status).toBe(201);
    expect(sent.json.data.event_type).toBe("webhook.test");
    await waitFor(() => receiver.on("/redeliver").length >= 3);
    const t = verify(receiver.on("/redeliver")[2]!, ep.secret) as any;
    expect(t).toMatchObject({ type: "webhook.test", data: { project: { id: p.id, slug: p.slug }, endpoint: { id: ep.id } } });
    expect(receiver.on("/redeliver")[2]!.headers["webhook-id"]).toBe(sent.json.data.event_id);
  });

  test("pause keeps events; resume sends them in order", async () => {
    const p = await seedProject(h);
    const ep = await endpoint(p.slug, "/pause");
    // An active endpoint wanting the same events: the claim that takes its rows would have taken
    // the paused one's too (one statement takes the head of every ready endpoint).
    const sibling = await endpoint(p.slug, "/pause-sibling");
    const paused = await h.request("PATCH", `/admin/p/${p.slug}/webhooks/${ep.id}`, { body: { status: "paused" } });
    expect(paused.json.data.status).toBe("paused");
    await seedNode(h, p.slug, { slug: "one" });
    await seedNode(h, p.slug, { slug: "two" });
    await waitFor(() => receiver.on("/pause-sibling").length >= 2, { what: "the active endpoint's events" });
    expect(await outboxOf(sibling.id)).toEqual([
      ["delivered", 1],
      ["delivered", 1],
    ]);
    // Never claimed (no attempt counted), never sent.
    expect(await outboxOf(ep.id)).toEqual([
      ["pending", 0],
      ["pending", 0],
    ]);
    expect(receiver.on("/pause")).toHaveLength(0);
    expect((await h.request("GET", `/admin/p/${p.slug}/webhooks/${ep.id}`)).json.data.pending).toBe(2);
    expect((await h.request("PATCH", `/admin/p/${p.slug}/webhooks/${ep.id}`, { body: { status: "active" } })).json.data.status).toBe("active");
    await waitFor(() => receiver.on("/pause").length >= 2);
    expect(paths(receiver.on("/pause"), ep.secret)).toEqual(["one", "two"]);
  });

  test("a batch stops at a failed event: the events behind it wait for its retry, then go in order at their first attempt", async () => {
    const p = await seedProject(h);
    const ep = await endpoint(p.slug, "/batch");
    expect((await h.request("PATCH", `/admin/p/${p.slug}/webhooks/${ep.id}`, { body: { status: "paused" } })).status).toBe(200);
    for (const slug of ["b1", "b2", "b3", "b4"]) await seedNode(h, p.slug, { slug });
    // Resumed, the four are claimed together; the second fails once.
    receiver.script("/batch", [{ status: 200 }, { status: 500 }]);
    expect((await h.request("PATCH", `/admin/p/${p.slug}/webhooks/${ep.id}`, { body: { status: "active" } })).status).toBe(200);
    await waitFor(() => receiver.on("/batch").length >= 5, { what: "four events and one retry" });
    // b5, written after, goes out after them all: a request sent twice would have come before it.
    await seedNode(h, p.slug, { slug: "b5" });
    await waitFor(() => paths(receiver.on("/batch"), ep.secret).includes("b5"), { what: "b5" });
    expect(paths(receiver.on("/batch"), ep.secret)).toEqual(["b1", "b2", "b2", "b3", "b4", "b5"]);
    expect(await outboxOf(ep.id)).toEqual([
      ["delivered", 1],
      ["delivered", 2],
      ["delivered", 1],
      ["delivered", 1],
      ["delivered", 1],
    ]);
    const log = await h.request("GET", `/admin/p/${p.slug}/webhooks/${ep.id}/deliveries?per_page=100`);
    // Oldest first: b1 1 ok, b2 1 retrying, b2 2 ok, b3 and b4 at their first attempt (the claim that stopped at b2 handed them back), b5.
    const attempts = [...log.json.data].reverse().map((d: any) => [d.attempt, d.outcome, d.status_code]);
    expect(attempts).toEqual([
      [1, "succeeded", 200],
      [1, "retrying", 500],
      [2, "succeeded", 200],
      [1, "succeeded", 200],
      [1, "succeeded", 200],
      [1, "succeeded", 200],
    ]);
  });

  test("one attempt in flight per endpoint: a redelivery asked while a batch is being sent waits for it", async () => {
    const p = await seedProject(h);
    const ep = await endpoint(p.slug, "/serial");
    await seedNode(h, p.slug, { slug: "s1" });
    await waitFor(() => receiver.on("/serial").length >= 1);
    const first = await waitFor(async () => (await h.request("GET", `/admin/p/${p.slug}/webhooks/${ep.id}/deliveries`)).json.data[0]);
    // Slow answers: while s2 and s3 are being sent, s1 is redelivered (its row sorts before them).
    receiver.script("/serial", [
      { status: 200, delayMs: 300 },
      { status: 200, delayMs: 300 },
      { status: 200, delayMs: 300 },
    ]);
    await seedNode(h, p.slug, { slug: "s2" });
    await seedNode(h, p.slug, { slug: "s3" });
    await waitFor(() => receiver.on("/serial").length >= 2, { interval: 5 });
    expect((await h.request("POST", `/admin/p/${p.slug}/webhooks/${ep.id}/deliveries/${first.id}/redeliver`)).status).toBe(201);
    await waitFor(() => receiver.on("/serial").length >= 4, { what: "s2, s3 and the redelivery" });
    const got = receiver.on("/serial");
    expect(paths(got, ep.secret).sort()).toEqual(["s1", "s1", "s2", "s3"]);
    // Each request came after the answer to the one before (answers take 300 ms).
    for (let i = 2; i < got.length; i++) expect(got[i]!.at - got[i - 1]!.at).toBeGreaterThanOrEqual(290);
  });

  test("rotation: the old and the new secret both verify during the grace period, then only the new one", async () => {
    const p = await seedProject(h);
    const ep = await endpoint(p.slug, "/rotate");
    const rotated = await h.request("PATCH", `/admin/p/${p.slug}/webhooks/${ep.id}`, { body: { rotate_secret: true } });
    expect(rotated.status).toBe(200);
    const fresh = rotated.json.data.secret as string;
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(ep.secret);
    expect(Date.parse(rotated.json.data.previous_secret_expires_at)).toBeGreaterThan(Date.now() + 3500_000);
    await seedNode(h, p.slug, { slug: "r1" });
    await waitFor(() => receiver.on("/rotate").length >= 1);
    const first = receiver.on("/rotate")[0]!;
    expect(first.headers["webhook-signature"]!.split(" ")).toHaveLength(2);
    verify(first, fresh);
    verify(first, ep.secret);
    // The grace period over: only the new secret signs.
    await h.deps.db
      .update(webhookEndpoints)
      .set({ previousSecretExpiresAt: new Date(Date.now() - 1000) })
      .where(eq(webhookEndpoints.id, ep.id));
    await seedNode(h, p.slug, { slug: "r2" });
    await waitFor(() => receiver.on("/rotate").length >= 2);
    const second = receiver.on("/rotate")[1]!;
    expect(second.headers["webhook-signature"]!.split(" ")).toHaveLength(1);
    verify(second, fresh);
    expect(() => verify(second, ep.secret)).toThrow(new WebhookVerificationError("No matching signature found"));
    expect(h.logs.join("\n")).not.toContain(fresh.slice(6));
    expect(h.logs.join("\n")).not.toContain(ep.secret.slice(6));
  });

  test("redirects are not followed; a timeout is retried", { timeout: 20_000 }, async () => {
    const p = await seedProject(h);
    const ep = await endpoint(p.slug, "/redirect");
    receiver.script("/redirect", [{ status: 307, headers: { location: receiver.url("/elsewhere") } }]);
    const node = await seedNode(h, p.slug, { slug: "r" });
    const log = await waitFor(async () => (await h.request("GET", `/admin/p/${p.slug}/webhooks/${ep.id}/deliveries`)).json.data[0]);
    expect(log).toMatchObject({ status_code: 307, outcome: "failed" });
    expect(receiver.on("/elsewhere")).toHaveLength(0);

    // The receiver answers after the attempt's timeout (2 s): an attempt without a status, retried.
    const ep2 = await endpoint(p.slug, "/slow", ["node.updated"]);
    receiver.script("/slow", [{ status: 200, delayMs: 2500 }]);
    expect((await h.request("PATCH", `/admin/p/${p.slug}/nodes/${node.id}`, { body: { title: "slow" } })).status).toBe(200);
    await waitFor(() => receiver.on("/slow").length >= 2, { timeout: 8000, what: "the retry after the timeout" });
    const attempts = await waitFor(async () => {
      const l = await h.request("GET", `/admin/p/${p.slug}/webhooks/${ep2.id}/deliveries`);
      return l.json.total >= 2 ? l.json.data : null;
    });
    expect(attempts.at(-1)).toMatchObject({ status_code: null, outcome: "retrying", error: "timed out after 2000 ms" });
  });
});

describe("two dispatchers share the outbox", () => {
  test("each event is attempted once, in order per endpoint", { timeout: 30_000 }, async () => {
    // A second app and two more dispatchers in this process, on the same database and sealing keys
    // (SECRET_KEYS); separate processes on one outbox: webhooks-process.test.ts.
    const other = await harness(FAST, { keyRing: h.deps.keyRing });
    const second = startDispatcher(other.deps);
    const third = startDispatcher(h.deps);
    try {
      const p = await seedProject(h);
      const ep = await endpoint(p.slug, "/shared");
      for (let i = 0; i < 20; i++) await seedNode(h, p.slug, { slug: `n${i}` });
      await waitFor(() => receiver.on("/shared").length >= 20, { timeout: 10_000, what: "twenty events" }).catch((e) => {
        console.log(h.logs.filter((l) => /warn|error/.test(l)).join("\n"), other.logs.filter((l) => /warn|error/.test(l)).join("\n"));
        throw e;
      });
      // A last event, sent after all of them (in order per endpoint): any event sent twice came before it.
      await seedNode(h, p.slug, { slug: "last" });
      await waitFor(() => paths(receiver.on("/shared"), ep.secret).includes("last"), { what: "the last event" });
      const got = receiver.on("/shared");
      expect(got).toHaveLength(21);
      expect(new Set(got.map((r) => r.headers["webhook-id"])).size).toBe(21);
      expect(paths(got, ep.secret)).toEqual([...Array.from({ length: 20 }, (_, i) => `n${i}`), "last"]);
      expect(await outboxOf(ep.id)).toEqual(Array.from({ length: 21 }, () => ["delivered", 1]));
      const attempts = await h.deps.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, ep.id));
      expect(attempts).toHaveLength(21);
      expect(attempts.filter((a) => a.attempt !== 1 || a.outcome !== "succeeded")).toEqual([]);
    } finally {
      await second.stop();
      await third.stop();
    }
  });
});
