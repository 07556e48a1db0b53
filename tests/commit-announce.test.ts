// Issue 22 §5: a local content write drops the project's cached delivery answers once. It dropped
// them twice: at commit (lib/commits, so the writer reads its write) and again when its own NOTIFY
// came back to the same instance. Another instance's write still drops them, through its NOTIFY.
// A drop is seen as its cost: the next read of a page goes to the database (each instance's
// statements are counted) instead of being answered from the cache.
import { afterAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { DbHandle } from "../db/client";
import { CONTENT_CHANNEL } from "../src/write/unit";
import { countingDb, get, patchNode } from "./delivery.helpers";
import { freshDatabase, harness, seedNode, seedProject, type TestHarness, waitFor } from "./helpers";

describe("content writes: one invalidation per write per instance", async () => {
  // A database of its own: the apps other test files left listening on the shared one would see its
  // NOTIFYs too (and rightly drop their caches), which says nothing about these two.
  const fresh = await freshDatabase();
  afterAll(() => fresh.drop());
  // The writer's NOTIFYs can be held back from it, so that its own read comes between its commit and its notice.
  const held = { on: false, queue: [] as (() => void)[] };
  const holding = (handle: DbHandle): DbHandle => ({
    ...handle,
    listen: (channel, onPayload) => handle.listen(channel, (payload) => void (held.on ? held.queue.push(() => onPayload(payload)) : onPayload(payload))),
  });
  const counted = { h: countingDb(fresh.handle.db), other: countingDb(fresh.handle.db) };
  const h = await harness({ DELIVERY_VERSION_CHECK_MS: "60000" }, { db: counted.h.db, dbHandle: holding(fresh.handle) });
  const other = await harness({ DELIVERY_VERSION_CHECK_MS: "60000" }, { db: counted.other.db, dbHandle: fresh.handle }); // a second app over the same database
  const p = await seedProject(h, { public_base_url: "https://site.example" });
  const node = await seedNode(h, p.slug, { slug: "page", title: "Page" }, true);
  // Two more projects, whose pages mark how far an instance has read its notifications.
  const markers = [await seedProject(h), await seedProject(h)] as const;
  for (const m of markers) await seedNode(h, m.slug, { slug: "marker", title: "Marker" }, true);

  /** A read of `path` on `app`, with the statements it cost (0: answered from the cache). */
  async function read(app: TestHarness, path: string): Promise<{ title: string; statements: number }> {
    const c = app === h ? counted.h : counted.other;
    const before = c.calls();
    const res = await get(app, path);
    expect(res.status).toBe(200);
    return { title: res.json.data.title, statements: c.calls() - before };
  }
  const page = `/api/p/${p.slug}/nodes/by-path/page`;
  const notify = (projectId: string) => fresh.handle.db.execute(sql`select pg_notify(${CONTENT_CHANNEL}, ${projectId})`);
  const dropped = async (app: TestHarness, m: (typeof markers)[number]): Promise<boolean> => (await read(app, `/api/p/${m.slug}/nodes/by-path/marker`)).statements > 0;

  /**
   * Waits until `app` has handled every notification sent before (they arrive in commit order).
   * First its LISTEN is known to work: a marker naming the first marker project is sent again until
   * `app` drops that project (LISTEN starts with an app's first read). Then one marker naming the
   * second: once it is handled, so is everything before it, the first markers included (none is
   * left on its way to disturb a later read).
   */
  async function settled(app: TestHarness): Promise<void> {
    for (const m of markers) await read(app, `/api/p/${m.slug}/nodes/by-path/marker`);
    await waitFor(async () => (await notify(markers[0].id), dropped(app, markers[0])), { timeout: 5000, what: "a marker notification" });
    await notify(markers[1].id);
    await waitFor(() => dropped(app, markers[1]), { timeout: 5000, what: "the last marker notification" });
  }

  test("the writer's instance drops the project once (its own NOTIFY drops nothing); the other instance once, through NOTIFY", async () => {
    for (const app of [h, other]) {
      expect((await read(app, page)).title).toBe("Page");
      await settled(app);
      expect((await read(app, page)).statements).toBe(0);
    }

    held.on = true;
    await patchNode(h, p.slug, node.id, { title: "Changed" });
    // The writer reads its write at once: dropped at commit.
    const mine = await read(h, page);
    expect(mine.title).toBe("Changed");
    expect(mine.statements).toBeGreaterThan(0);
    held.on = false;
    for (const deliver of held.queue.splice(0)) deliver();
    await settled(h);
    // Its own NOTIFY, handled since: the answer it read stays cached.
    expect(await read(h, page)).toEqual({ title: "Changed", statements: 0 });
    // The other instance dropped it once, on the NOTIFY.
    await settled(other);
    const theirs = await read(other, page);
    expect(theirs.title).toBe("Changed");
    expect(theirs.statements).toBeGreaterThan(0);
    expect((await read(other, page)).statements).toBe(0);

    // Another instance's write: h hears of it through NOTIFY (other's own announcement reaches only other).
    await patchNode(other, p.slug, node.id, { title: "From the other" });
    await settled(h);
    const heard = await read(h, page);
    expect(heard.title).toBe("From the other");
    expect(heard.statements).toBeGreaterThan(0);
    expect((await read(other, page)).title).toBe("From the other");
    await settled(other);
    await settled(h);
    for (const app of [h, other]) expect(await read(app, page)).toEqual({ title: "From the other", statements: 0 });
  });
});
