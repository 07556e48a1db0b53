// Issue 22 §5: a local content write drops the project's cached delivery answers once. It dropped
// them twice: at commit (lib/commits, so the writer reads its write) and again when its own NOTIFY
// came back to the same instance. Another instance's write still drops them, through its NOTIFY.
import { afterAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { DeliveryCache } from "../src/delivery/cache";
import { CONTENT_CHANNEL } from "../src/write/unit";
import { get, patchNode } from "./delivery.helpers";
import { freshDatabase, harness, seedNode, seedProject, waitFor } from "./helpers";

/** Every invalidation of every delivery cache of the process, by cache. */
const seen = new Map<object, string[]>();
const original = DeliveryCache.prototype.invalidate;
DeliveryCache.prototype.invalidate = function (this: DeliveryCache, projectId: string) {
  seen.set(this, [...(seen.get(this) ?? []), projectId]);
  return original.call(this, projectId);
};
afterAll(() => {
  DeliveryCache.prototype.invalidate = original;
});

/** How many times each cache dropped `projectId`, for the caches that did. */
const dropsOf = (projectId: string): number[] => [...seen.values()].map((ids) => ids.filter((id) => id === projectId).length).filter((n) => n > 0);

describe("content writes: one invalidation per write per instance", async () => {
  // A database of its own: the apps other test files left listening on the shared one would see its
  // NOTIFYs too (and rightly drop their caches), which says nothing about these two.
  const fresh = await freshDatabase();
  afterAll(() => fresh.drop());
  const own = { db: fresh.handle.db, dbHandle: fresh.handle };
  const h = await harness({ DELIVERY_VERSION_CHECK_MS: "60000" }, own);
  const other = await harness({ DELIVERY_VERSION_CHECK_MS: "60000" }, own); // a second instance over the same database
  const p = await seedProject(h, { public_base_url: "https://site.example" });
  const node = await seedNode(h, p.slug, { slug: "page", title: "Page" }, true);

  /**
   * Notifications sent after everything before: once `h` has seen one, it has seen every earlier one
   * (delivered in commit order). Sent again while none arrives: h's LISTEN starts with its first read.
   */
  async function settled(): Promise<void> {
    const markers: string[] = [];
    await waitFor(
      async () => {
        const marker = crypto.randomUUID();
        markers.push(marker);
        await h.deps.db.execute(sql`select pg_notify(${CONTENT_CHANNEL}, ${marker})`);
        await Bun.sleep(20);
        return markers.some((m) => dropsOf(m).length > 0);
      },
      { timeout: 5000, what: "a marker notification" },
    );
  }

  test("the writer's instance drops the project once; the other instance once, through NOTIFY", async () => {
    expect((await get(h, `/api/p/${p.slug}/nodes/by-path/page`)).status).toBe(200); // h listens from its first read
    await settled();
    seen.clear();
    await patchNode(h, p.slug, node.id, { title: "Changed" });
    await settled();
    expect(dropsOf(p.id)).toEqual([1]);
    // The writer reads its write at once.
    expect((await get(h, `/api/p/${p.slug}/nodes/by-path/page`)).json.data.title).toBe("Changed");

    // Another instance's write: h hears of it through NOTIFY (its own announcement reaches only itself).
    seen.clear();
    await patchNode(other, p.slug, node.id, { title: "From the other" });
    await settled();
    expect(dropsOf(p.id)).toEqual([1, 1]);
    expect((await get(h, `/api/p/${p.slug}/nodes/by-path/page`)).json.data.title).toBe("From the other");
  });
});
