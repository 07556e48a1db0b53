// Issue 29: scheduled publishing. Setting a schedule (PATCH, schedule_node over REST and MCP), the
// scheduler carrying it out once as a write of its own, contenders in this process racing for it
// (separate processes: schedule-instances.test.ts), a schedule missed while nothing ran.
import { afterAll, describe, expect, test } from "bun:test";
import { and, eq, sql } from "drizzle-orm";
import { activity, nodes, revisions, webhookEvents } from "../db/schema";
import { type Scheduler, startScheduler } from "../src/schedule/scheduler";
import { dueSchedules, fireSchedule } from "../src/schedule/service";
import { get, translate } from "./delivery.helpers";
import { keyWith, seedNode, seedProject, waitFor } from "./helpers";
import { call, callError, mcpHarness } from "./mcp-harness";

const m = await mcpHarness({ WEBHOOKS_ALLOW_PRIVATE_URLS: "true" });
const h = m.h;
const schedulers: Scheduler[] = [];
afterAll(() => {
  for (const s of schedulers) s.stop();
  m.stop();
});
const start = (deps = h.deps, intervalMs = 100): Scheduler => {
  const s = startScheduler(deps, intervalMs);
  schedulers.push(s);
  return s;
};
const inMs = (ms: number): string => new Date(Date.now() + ms).toISOString();
const revisionsOf = (nodeId: string) => h.deps.db.select().from(revisions).where(eq(revisions.nodeId, nodeId)).orderBy(revisions.number);

describe("setting a schedule", async () => {
  const p = await seedProject(h);
  const draft = await seedNode(h, p.slug, { slug: "launch", title: "Launch" });
  const live = await seedNode(h, p.slug, { slug: "live", title: "Live" }, true);
  const patch = (id: string, body: Record<string, unknown>) => h.request("PATCH", `/admin/p/${p.slug}/nodes/${id}`, { body });

  test("PATCH takes ISO 8601 with an offset, stores UTC, and the node read shows it", async () => {
    const at = new Date(Date.now() + 86_400_000);
    at.setUTCMilliseconds(0);
    const local = `${new Date(at.getTime() + 2 * 3_600_000).toISOString().slice(0, 19)}+02:00`;
    const res = await patch(draft.id, { publish_at: local });
    expect(res.status).toBe(200);
    expect(res.json.data.publish_at).toBe(at.toISOString());
    expect(res.json.data.unpublish_at).toBeNull();
    const read = await h.request("GET", `/admin/p/${p.slug}/nodes/${draft.id}`);
    expect(read.json.data.publish_at).toBe(at.toISOString());
    const [row] = await h.deps.db.select().from(nodes).where(eq(nodes.id, draft.id));
    expect(row?.publishAt?.getTime()).toBe(at.getTime());
    expect(row?.scheduledBy?.kind).toBe("admin_key");
    // null clears it.
    expect((await patch(draft.id, { publish_at: null })).json.data.publish_at).toBeNull();
    const [cleared] = await h.deps.db.select().from(nodes).where(eq(nodes.id, draft.id));
    expect(cleared?.scheduledBy).toBeNull();
  });

  test("scheduling is publishing: a key with content:write alone gets 403 naming content:publish, and nothing is scheduled", async () => {
    const writer = await keyWith(h, ["content:read", "content:write"]);
    const viaPatch = await h.request("PATCH", `/admin/p/${p.slug}/nodes/${draft.id}`, { key: writer, body: { publish_at: inMs(3_600_000) } });
    expect(viaPatch.status).toBe(403);
    expect(viaPatch.json.error.code).toBe("insufficient_scope");
    expect(viaPatch.text).toContain("content:publish");
    const viaRoute = await h.request("POST", `/admin/p/${p.slug}/nodes/${draft.id}/schedule`, { key: writer, body: { publish_at: inMs(3_600_000) } });
    expect(viaRoute.status).toBe(403);
    expect(viaRoute.text).toContain("content:publish");
    const [row] = await h.deps.db.select().from(nodes).where(eq(nodes.id, draft.id));
    expect(row?.publishAt).toBeNull();
    // The same key still edits the draft.
    expect((await h.request("PATCH", `/admin/p/${p.slug}/nodes/${draft.id}`, { key: writer, body: { title: "Launch" } })).status).toBe(200);
  });

  test("a time in the past, without an offset, or an unpublication before the publication: 400; publish_at on a published node: 409", async () => {
    const past = await patch(draft.id, { publish_at: new Date(Date.now() - 60_000).toISOString() });
    expect(past.status).toBe(400);
    expect(past.json.error.code).toBe("invalid_request");
    expect(past.json.error.details.field).toBe("publish_at");
    expect((await patch(draft.id, { publish_at: "2099-01-01T09:00:00" })).status).toBe(400);
    expect((await patch(draft.id, { publish_at: "tomorrow" })).status).toBe(400);
    const crossed = await patch(draft.id, { publish_at: inMs(7_200_000), unpublish_at: inMs(3_600_000) });
    expect(crossed.status).toBe(400);
    expect(crossed.json.error.details.field).toBe("unpublish_at");
    const published = await patch(live.id, { publish_at: inMs(3_600_000) });
    expect(published.status).toBe(409);
    expect(published.json.error.code).toBe("conflict");
    // Nothing was written by the refused requests.
    const [row] = await h.deps.db.select().from(nodes).where(eq(nodes.id, draft.id));
    expect(row?.publishAt).toBeNull();
    expect(row?.unpublishAt).toBeNull();
    // An unpublication of a published node is fine.
    expect((await patch(live.id, { unpublish_at: inMs(3_600_000) })).status).toBe(200);
  });

  test("schedule_node (REST and MCP) and update_node (MCP) set schedules; publishing by hand drops publish_at", async () => {
    const rest = await h.request("POST", `/admin/p/${p.slug}/nodes/${draft.id}/schedule`, { body: { publish_at: inMs(3_600_000) } });
    expect(rest.status).toBe(200);
    expect(rest.json.data).toMatchObject({ node_id: draft.id, locale: null, status: "draft" });
    expect(rest.json.data.scheduled_by.kind).toBe("admin_key");
    const { token } = await m.token(p.slug);
    const client = await m.connect(token);
    const at = inMs(7_200_000);
    const viaTool = await call(client, "schedule_node", { node_id: draft.id, unpublish_at: at });
    expect(viaTool.schedule.unpublish_at).toBe(at);
    expect(viaTool.schedule.scheduled_by.kind).toBe("mcp_token");
    expect(await callError(client, "schedule_node", { node_id: draft.id, publish_at: "2001-01-01T00:00:00Z" })).toContain("publish_at must be in the future");
    const updated = await call(client, "update_node", { node_id: draft.id, publish_at: null });
    expect(updated.node.publish_at).toBeNull();
    expect(updated.node.unpublish_at).toBe(at);
    const read = await call(client, "get_node", { id: draft.id });
    expect(read.node.unpublish_at).toBe(at);
    // Publishing by hand settles a pending publish_at.
    await h.request("POST", `/admin/p/${p.slug}/nodes/${draft.id}/schedule`, { body: { publish_at: inMs(3_600_000) } });
    const pub = await h.request("POST", `/admin/p/${p.slug}/nodes/${draft.id}/publish`);
    expect(pub.json.data.publish_at).toBeNull();
    expect(pub.json.data.unpublish_at).toBe(at);
  });
});

describe("the scheduler", async () => {
  test("publishes at the time (within 2 s), once, as a revision of the scheduler naming who scheduled it; delivery, entries and sitemap show it only then", async () => {
    const p = await seedProject(h, { public_base_url: "https://site.example" });
    const col = await seedNode(h, p.slug, { slug: "news", title: "News", type: "collection" }, true);
    const entry = await seedNode(h, p.slug, { slug: "offer", title: "Offer", parent_id: col.id, type: "entry" });
    // An endpoint for node.published (nothing sends here: the event row written by the scheduler's write is what is checked).
    expect((await h.request("POST", `/admin/p/${p.slug}/webhooks`, { body: { url: "http://127.0.0.1:9/hook", events: ["node.published"] } })).status).toBe(201);
    const at = inMs(1500);
    expect((await h.request("POST", `/admin/p/${p.slug}/nodes/${entry.id}/schedule`, { body: { publish_at: at } })).status).toBe(200);
    start();
    // Before its time: nowhere (the answers are cached now, and must be refreshed by the scheduler's write).
    const entries = `/api/p/${p.slug}/entries?collection=news`;
    expect((await get(h, entries)).json.total).toBe(0);
    expect((await get(h, `/api/p/${p.slug}/sitemap.xml`)).text).not.toContain("/news/offer");
    expect((await get(h, `/api/p/${p.slug}/nodes/by-path/news/offer`)).status).toBe(404);
    const shown = await waitFor(async () => ((await get(h, entries)).json.total === 1 ? Date.now() : 0), { timeout: 6000, interval: 50, what: "the scheduled entry in the entries list" });
    expect(shown).toBeGreaterThanOrEqual(Date.parse(at));
    const [row] = await h.deps.db.select().from(nodes).where(eq(nodes.id, entry.id));
    expect(row?.status).toBe("published");
    expect(row?.publishAt).toBeNull();
    expect(row?.scheduledBy).toBeNull();
    const late = (row?.publishedAt?.getTime() ?? 0) - Date.parse(at);
    expect(late).toBeGreaterThanOrEqual(0);
    expect(late).toBeLessThan(2000);
    expect((await get(h, `/api/p/${p.slug}/nodes/by-path/news/offer`)).status).toBe(200);
    expect((await get(h, `/api/p/${p.slug}/sitemap.xml`)).text).toContain("https://site.example/news/offer");
    const revs = await revisionsOf(entry.id);
    const fired = revs.filter((r) => r.operation === "publish_node");
    expect(fired).toHaveLength(1);
    expect(fired[0]?.actor).toMatchObject({ kind: "scheduler", name: "scheduler", scheduled_by: { kind: "admin_key" } });
    expect(fired[0]?.snapshot.status).toBe("published");
    // The activity log names the scheduler and who scheduled it.
    const log = await h.request("GET", `/admin/p/${p.slug}/activity?node_id=${entry.id}`);
    const entryLog = log.json.data.find((a: any) => a.operation === "publish_node");
    expect(entryLog.actor).toMatchObject({ kind: "scheduler", name: "scheduler", scheduled_by: { kind: "admin_key" } });
    const bySchedulers = (await h.request("GET", `/admin/p/${p.slug}/activity?actor_kind=scheduler`)).json.data;
    expect(bySchedulers.map((a: any) => [a.operation, a.node_id, a.actor.kind])).toEqual([["publish_node", entry.id, "scheduler"]]);
    // The scheduler's write sends its webhook event like any publish.
    const events = await h.deps.db.select().from(webhookEvents).where(eq(webhookEvents.projectId, p.id));
    expect(events.map((e) => [e.type, JSON.parse(e.payload).data.node.id, JSON.parse(e.payload).data.url])).toEqual([["node.published", entry.id, "https://site.example/news/offer"]]);
  });

  test("unpublishes a node and publishes a translation scheduled the same way", async () => {
    const p = await seedProject(h, { locales: ["en", "fr"] });
    const page = await seedNode(h, p.slug, { slug: "sale", title: "Sale" }, true);
    await translate(h, p.slug, page.id, "fr", { meta: { title: "Soldes" }, status: "draft" });
    const fr = `/api/p/${p.slug}/translations/nodes/${page.id}?locale=fr`;
    expect((await get(h, fr)).status).toBe(404);
    const tr = await h.request("POST", `/admin/p/${p.slug}/nodes/${page.id}/schedule`, { body: { locale: "fr", publish_at: inMs(600) } });
    expect(tr.status).toBe(200);
    expect(tr.json.data.locale).toBe("fr");
    const read = await h.request("GET", `/admin/p/${p.slug}/nodes/${page.id}/translations/fr`);
    expect(read.json.data.publish_at).toBe(tr.json.data.publish_at);
    start();
    await waitFor(async () => (await get(h, fr)).status === 200, { timeout: 5000, interval: 50, what: "the scheduled translation" });
    expect((await get(h, fr)).json.data.title).toBe("Soldes");
    expect((await h.request("POST", `/admin/p/${p.slug}/nodes/${page.id}/schedule`, { body: { unpublish_at: inMs(600) } })).status).toBe(200);
    await waitFor(async () => (await get(h, `/api/p/${p.slug}/nodes/by-path/sale`)).status === 404, { timeout: 5000, interval: 50, what: "the node to be unpublished" });
    const ops = (await revisionsOf(page.id)).map((r) => r.operation);
    expect(ops.filter((o) => o === "publish_translation")).toHaveLength(1);
    expect(ops.filter((o) => o === "unpublish_node")).toHaveLength(1);
    const [row] = await h.deps.db.select().from(nodes).where(eq(nodes.id, page.id));
    expect(row?.status).toBe("draft");
    expect(row?.unpublishAt).toBeNull();
  });

  test("two schedulers and four more contenders per schedule, in one process, racing for the same due schedules: exactly one publish, one revision, one activity entry each", async () => {
    for (const s of schedulers.splice(0)) s.stop();
    const p = await seedProject(h);
    const due = [];
    for (let i = 0; i < 5; i++) due.push(await seedNode(h, p.slug, { slug: `race-${i}`, title: `Race ${i}` }));
    for (const n of due) expect((await h.request("PATCH", `/admin/p/${p.slug}/nodes/${n.id}`, { body: { publish_at: inMs(300) } })).status).toBe(200);
    // Due by the database's clock, which the schedulers read.
    const mine = await waitFor(async () => {
      const found = await dueSchedules(h.deps.db);
      return found.filter((d) => d.projectId === p.id).length === 5 && found;
    });
    // Nothing else is due anywhere: the schedulers' counts below are of these five alone.
    expect(mine.map((d) => d.projectId)).toEqual(Array(5).fill(p.id));
    // Two schedulers (their first look is at start) and, for each schedule, four more contenders at once.
    const a = start(h.deps, 60_000);
    const b = start(h.deps, 60_000);
    const [byA, byB, ...byHand] = await Promise.all([
      a.tick(),
      b.tick(),
      ...mine.flatMap((d) => [fireSchedule(h.deps.db, d), fireSchedule(h.deps.db, d), fireSchedule(h.deps.db, d), fireSchedule(h.deps.db, d)]),
    ]);
    // Each schedule has one winner, who says so; every other contender finds it fired.
    expect(Number(byA) + Number(byB) + byHand.filter((won) => won === true).length).toBe(5);
    for (const n of due) {
      const revs = await revisionsOf(n.id);
      expect(revs.filter((r) => r.operation === "publish_node")).toHaveLength(1);
      const acts = await h.deps.db
        .select()
        .from(activity)
        .where(and(eq(activity.nodeId, n.id), eq(activity.operation, "publish_node")));
      expect(acts).toHaveLength(1);
      const [row] = await h.deps.db.select().from(nodes).where(eq(nodes.id, n.id));
      expect(row?.status).toBe("published");
    }
    expect((await dueSchedules(h.deps.db)).filter((d) => d.projectId === p.id)).toEqual([]);
  });

  test("a schedule missed while no instance ran fires at the next start", async () => {
    const p = await seedProject(h);
    const n = await seedNode(h, p.slug, { slug: "missed", title: "Missed" });
    // As if the time had come and gone with every instance down.
    await h.deps.db.update(nodes).set({ publishAt: sql`now() - interval '1 hour'` }).where(eq(nodes.id, n.id));
    const s = startScheduler(h.deps, 60_000); // its first look is at start
    schedulers.push(s);
    await waitFor(async () => (await get(h, `/api/p/${p.slug}/nodes/by-path/missed`)).status === 200, { timeout: 5000, interval: 50, what: "the missed schedule" });
    expect((await revisionsOf(n.id)).filter((r) => r.operation === "publish_node")).toHaveLength(1);
  });
});
