// Webhooks (issue 28): a batch never outlives its lease. A claim leases an endpoint's next events
// for 2 × WEBHOOKS_TIMEOUT_MS + 5 s; a batch whose sends would run past that starts no attempt
// late enough to outlast it and hands the rest back, so another claim (here a second dispatcher)
// never takes rows still being sent: each event once, in order, one request at a time.
import { afterAll, expect, test } from "bun:test";
import { and, eq, ne } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { webhookDeliveries, webhookOutbox } from "../db/schema";
import { startDispatcher } from "../src/webhooks/dispatcher";
import { harness, seedNode, seedProject, waitFor } from "./helpers";
import { startReceiver } from "./webhooks.helpers";

// Lease 7 s; a batch starts no attempt later than 3 s after its lease was taken. The timeout leaves
// an answer of 300 ms room on a busy machine (at 500 ms a late answer was retried: sent twice).
const ENV = { WEBHOOKS_ALLOW_PRIVATE_URLS: "true", WEBHOOKS_TIMEOUT_MS: "1000", WEBHOOKS_POLL_MS: "100", WEBHOOKS_RETRY_SCHEDULE: "0,100ms" };
const receiver = startReceiver();
const h = await harness(ENV);
const other = await harness(ENV, { keyRing: h.deps.keyRing });
const dispatchers = [startDispatcher(h.deps), startDispatcher(other.deps)];
afterAll(async () => {
  await Promise.all(dispatchers.map((d) => d.stop()));
  receiver.stop();
});

test("a backlog sent slower than its lease: each event once, in order, never two requests at once", { timeout: 40_000 }, async () => {
  const p = await seedProject(h);
  const created = await h.request("POST", `/admin/p/${p.slug}/webhooks`, { body: { url: receiver.url("/slow"), events: ["node.created"] } });
  expect(created.status).toBe(201);
  const ep = created.json.data;
  expect((await h.request("PATCH", `/admin/p/${p.slug}/webhooks/${ep.id}`, { body: { status: "paused" } })).status).toBe(200);
  const N = 25;
  for (let i = 0; i < N; i++) await seedNode(h, p.slug, { slug: `e${String(i).padStart(2, "0")}` });
  // Each answer takes 300 ms: the whole backlog, 7.5 s, outlasts one lease (7 s).
  receiver.script(
    "/slow",
    Array.from({ length: 3 * N }, () => ({ status: 200, delayMs: 300 })),
  );
  expect((await h.request("PATCH", `/admin/p/${p.slug}/webhooks/${ep.id}`, { body: { status: "active" } })).status).toBe(200);
  await waitFor(() => receiver.on("/slow").length >= N, { timeout: 20_000, what: "every event" });
  // No fixed window for "nothing more arrives": once every row is delivered, both dispatchers stop
  // and wait for their attempts in flight, so what the receiver holds afterwards is final.
  const unsettled = () =>
    h.deps.db
      .select({ id: webhookOutbox.id })
      .from(webhookOutbox)
      .where(and(eq(webhookOutbox.endpointId, ep.id), ne(webhookOutbox.status, "delivered")));
  // A row never delivered (or sent twice) is judged below, with what the receiver got.
  await waitFor(async () => (await unsettled()).length === 0, { timeout: 15_000 }).catch(() => {});
  await Promise.all(dispatchers.map((d) => d.stop()));
  const got = receiver.on("/slow");
  expect(got.map((r) => (new Webhook(ep.secret).verify(r.body, r.headers) as any).data.node.path)).toEqual(Array.from({ length: N }, (_, i) => `e${String(i).padStart(2, "0")}`));
  expect(new Set(got.map((r) => r.headers["webhook-id"])).size).toBe(N);
  for (let i = 1; i < got.length; i++) expect(got[i]!.at - got[i - 1]!.at).toBeGreaterThanOrEqual(290);
  const log = await h.deps.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, ep.id));
  expect(log).toHaveLength(N);
  expect(log.filter((d) => d.attempt !== 1 || d.outcome !== "succeeded")).toEqual([]);
  expect(await unsettled()).toEqual([]);
});
