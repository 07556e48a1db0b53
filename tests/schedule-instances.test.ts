// Issue 29: two real service processes on one PostgreSQL database race for the same scheduled
// nodes: each is published exactly once (one revision), within 2 s, and both instances deliver it;
// a schedule that falls due while every instance is down (killed with SIGKILL) fires at the next start.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq, inArray } from "drizzle-orm";
import { nodes, revisions } from "../db/schema";
import { freshDatabase, pgUrl, sendJson, waitFor } from "./helpers";
import { type Served, serve } from "./service-process";

// Several processes cannot share an embedded PGlite database: the PostgreSQL pass runs this (the
// PGlite pass races in-process contenders in tests/schedule.test.ts). The database is made in
// beforeAll: a skipped describe's body runs, its hooks do not.
describe.if(pgUrl !== null)("scheduled publishing across two service processes (PostgreSQL only: needs DATABASE_URL, processes cannot share the embedded database)", () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  const token = `schedule-test-root-token-${crypto.randomUUID()}`;
  const env = { SCHEDULER_INTERVAL_MS: "200", DELIVERY_VERSION_CHECK_MS: "5000" };
  const running: Served[] = [];
  const start = async (): Promise<Served> => {
    const s = await serve(db.url ?? "", token, 3, { env });
    running.push(s);
    return s;
  };
  // Registered only when the tests run: bun lists a skipped describe's hooks as "(unnamed)" skipped tests.
  if (pgUrl !== null) {
    beforeAll(async () => {
      db = await freshDatabase();
    });
    afterAll(async () => {
      for (const s of running) await s.kill().catch(() => {});
      await db.drop();
    });
  }
  const call = async (base: string, method: string, path: string, body?: unknown): Promise<any> => {
    const res = await sendJson(base + path, token, method, { body });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return JSON.parse(text).data;
  };
  const status = async (base: string, path: string): Promise<number> => (await fetch(base + path)).status;

  test("ten nodes due at once, two instances looking every 200 ms: one publish and one revision each, within 2 s, delivered by both", async () => {
    const a = await start();
    const b = await start();
    await call(a.url, "POST", "/admin/projects", { slug: "race", name: "Race", default_locale: "en", locales: ["en"] });
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await call(a.url, "POST", `/admin/p/race/nodes`, { slug: `n${i}`, title: `N${i}` })).id);
    const at = new Date(Date.now() + 2000).toISOString();
    for (const id of ids) await call(i2(ids, id) ? b.url : a.url, "PATCH", `/admin/p/race/nodes/${id}`, { publish_at: at });
    // Both instances have answered (and cached) the 404 before the time.
    for (const s of [a, b]) expect(await status(s.url, "/api/p/race/nodes/by-path/n0")).toBe(404);
    const shownBy = (s: Served): Promise<number[]> => Promise.all(ids.map((_, i) => status(s.url, `/api/p/race/nodes/by-path/n${i}`)));
    await waitFor(async () => [...(await shownBy(a)), ...(await shownBy(b))].every((s) => s === 200), {
      timeout: Date.parse(at) + 4000 - Date.now(),
      interval: 50,
      what: "every node delivered by both instances",
    });
    const rows = await db.handle.db.select().from(nodes).where(inArray(nodes.id, ids));
    for (const row of rows) {
      expect(row.status).toBe("published");
      expect(row.publishAt).toBeNull();
      const late = (row.publishedAt?.getTime() ?? 0) - Date.parse(at);
      expect(late).toBeGreaterThanOrEqual(0);
      expect(late).toBeLessThan(2000);
    }
    const published = await db.handle.db.select().from(revisions).where(inArray(revisions.nodeId, ids));
    const fired = published.filter((r) => r.operation === "publish_node");
    expect(fired).toHaveLength(10);
    expect(new Set(fired.map((r) => r.nodeId)).size).toBe(10);
    for (const r of fired) expect(r.actor).toMatchObject({ kind: "scheduler", scheduled_by: { kind: "admin_key" } });
    expect(a.alive() && b.alive()).toBe(true);
  }, 60_000);

  test("a schedule due while every instance is down fires at the next start", async () => {
    const [a] = running;
    const id = (await call(a!.url, "POST", `/admin/p/race/nodes`, { slug: "while-down", title: "While down" })).id;
    const at = new Date(Date.now() + 1500).toISOString();
    await call(a!.url, "PATCH", `/admin/p/race/nodes/${id}`, { publish_at: at });
    for (const s of running.splice(0)) await s.kill(); // SIGKILL
    // Real processes read the real clock: the schedule's time has to pass while none runs.
    await Bun.sleep(Math.max(0, Date.parse(at) - Date.now()) + 500); // fixed wait: the schedule's time passing while no process runs
    const [before] = await db.handle.db.select().from(nodes).where(eq(nodes.id, id));
    expect(before?.status).toBe("draft");
    const c = await start();
    await waitFor(async () => (await status(c.url, "/api/p/race/nodes/by-path/while-down")) === 200, { interval: 50, what: "the missed schedule to fire at start" });
    const revs = await db.handle.db.select().from(revisions).where(eq(revisions.nodeId, id));
    expect(revs.filter((r) => r.operation === "publish_node")).toHaveLength(1);
  }, 60_000);
});

/** Half the schedules are set through the other instance. */
const i2 = (ids: string[], id: string): boolean => ids.indexOf(id) % 2 === 1;
