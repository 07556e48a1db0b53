// A dry run writes nothing, webhooks included (docs/editorial.md, Dry runs): with an endpoint
// subscribed to every event and the dispatcher running, dry runs of node, translation, model and
// media writes (REST and MCP) leave no webhook event and no outbox row, and the receiver gets
// nothing; a real write afterwards is the one event that arrives (so the endpoint did listen).
import { afterAll, describe, expect, test } from "bun:test";
import { count, eq } from "drizzle-orm";
import { webhookEndpoints, webhookEvents, webhookOutbox } from "../db/schema";
import { startDispatcher } from "../src/webhooks/dispatcher";
import { seedNode, seedProject, waitFor } from "./helpers";
import { call, mcpHarness } from "./mcp-harness";
import { twoColourPng } from "./media.helpers";

describe("dry runs and webhooks", async () => {
  const received: { type: string; id: string }[] = [];
  const receiver = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      received.push({ type: JSON.parse(await req.text()).type, id: req.headers.get("webhook-id") ?? "" });
      return new Response("ok");
    },
  });
  const m = await mcpHarness({ WEBHOOKS_ALLOW_PRIVATE_URLS: "true", WEBHOOKS_POLL_MS: "100" });
  const { h } = m;
  const dispatcher = startDispatcher(h.deps);
  afterAll(async () => {
    await dispatcher.stop();
    m.stop();
    receiver.stop(true);
  });

  test("dry runs over REST and MCP leave no webhook event and no outbox row; the next real write is the only event sent", async () => {
    const p = await seedProject(h);
    const P = `/admin/p/${p.slug}`;
    const node = await seedNode(h, p.slug, { slug: "about", title: "About" });
    const media = await h.request("POST", `${P}/media`, { raw: form(await twoColourPng(64, 32), "a.png") });
    expect(media.status).toBe(201);
    // Subscribed only now: nothing above is an event for it.
    const ep = await h.request("POST", `${P}/webhooks`, { body: { url: `http://127.0.0.1:${receiver.port}/hook`, events: ["*"] } });
    expect(ep.status).toBe(201);
    const endpointId: string = ep.json.data.id;
    const rows = async (): Promise<{ events: number; outbox: number }> => ({
      events: Number((await h.deps.db.select({ n: count() }).from(webhookEvents).where(eq(webhookEvents.projectId, p.id)))[0]!.n),
      outbox: Number((await h.deps.db.select({ n: count() }).from(webhookOutbox).where(eq(webhookOutbox.endpointId, endpointId)))[0]!.n),
    });
    expect(await rows()).toEqual({ events: 0, outbox: 0 });

    const dry: [string, string, unknown?][] = [
      ["PATCH", `${P}/nodes/${node.id}?dry_run=true`, { title: "About us" }],
      ["POST", `${P}/nodes?dry_run=true`, { slug: "new-page", title: "New" }],
      ["POST", `${P}/nodes/${node.id}/publish?dry_run=true`],
      ["PUT", `${P}/nodes/${node.id}/translations/fr?dry_run=true`, { meta: { title: "À propos" } }],
      ["PUT", `${P}/model?dry_run=true`, { strict: false, block_types: [], node_types: [{ name: "page", description: "a page" }] }],
      ["PATCH", `${P}/media/${media.json.data.id}?dry_run=true`, { alt: { en: "Red and blue" } }],
      ["DELETE", `${P}/nodes/${node.id}?dry_run=true`],
    ];
    for (const [method, path, body] of dry) {
      const res = await h.request(method, path, body === undefined ? {} : { body });
      // The model's dry run is its own (it reports applied: false); every other write's is the unit's (dry_run: true).
      const dryAnswer = path.includes("/model?") ? res.json?.applied === false : res.json?.dry_run === true;
      expect([method, path, res.status, dryAnswer]).toEqual([method, path, 200, true]);
    }
    const upload = await h.request("POST", `${P}/media?dry_run=true`, { raw: form(await twoColourPng(48, 32), "b.png") });
    expect([upload.status, upload.json.dry_run]).toEqual([200, true]);
    expect(await rows()).toEqual({ events: 0, outbox: 0 });
    const { token } = await m.token(p.slug, { name: "agent", scopes: ["content:read", "content:write", "content:publish"] });
    const client = await m.connect(token);
    expect(await call(client, "update_node", { node_id: node.id, title: "From MCP", dry_run: true })).toMatchObject({ dry_run: true });
    expect(await call(client, "publish_node", { node_id: node.id, dry_run: true })).toMatchObject({ dry_run: true });
    expect(await rows()).toEqual({ events: 0, outbox: 0 });

    // The sentinel: a real write, whose event arrives, and alone.
    expect((await h.request("PATCH", `${P}/nodes/${node.id}`, { body: { title: "Real" } })).status).toBe(200);
    await waitFor(() => received.length > 0, { what: "the real write's event" });
    const [sent] = await h.deps.db.select().from(webhookOutbox).where(eq(webhookOutbox.endpointId, endpointId));
    await waitFor(async () => (await h.deps.db.select({ s: webhookOutbox.status }).from(webhookOutbox).where(eq(webhookOutbox.id, sent!.id)))[0]?.s === "delivered", {
      what: "the event recorded as delivered",
    });
    expect(received.map((r) => r.type)).toEqual(["node.updated"]);
    expect(await rows()).toEqual({ events: 1, outbox: 1 });
    expect((await h.deps.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, endpointId)))[0]!.status).toBe("active");
  });
});

function form(bytes: Uint8Array, name: string): FormData {
  const f = new FormData();
  f.set("file", new File([bytes as Uint8Array<ArrayBuffer>], name, { type: "image/png" }));
  return f;
}
