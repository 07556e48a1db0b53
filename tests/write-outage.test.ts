// A write sent just as the database goes away (a loopback TCP proxy that resets every connection
// and refuses new ones) must settle: 503-able (isDatabaseUnavailable) or committed, never pending.
// postgres.js keeps a connection whose socket has had its 'error' (ECONNRESET) in the pool until
// the 'close'; a transaction's BEGIN handed to it in between was dropped at the close and hung for
// good (db/patch-postgres.mjs, round 2). The pool is the service's own (openDb).
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { openDb } from "../db/client";
import { isDatabaseUnavailable } from "../src/errors";
import { emptyPgDatabase, pgUrl, waitFor } from "./helpers";
import { pgProxyFor } from "./pg-proxy";

describe.if(pgUrl !== null)("writes across a database outage, PostgreSQL behind a proxy (PostgreSQL only: needs DATABASE_URL)", () => {
  test("8 writers in transactions through 4 cuts: every write settles (committed or unavailable) within 2 s of the restore, and writes work at once after", async () => {
    const { name, drop } = await emptyPgDatabase("t_wout");
    const proxy = await pgProxyFor(pgUrl!, { database: name });
    const handle = await openDb({ databaseUrl: proxy.url, dataDir: "", poolSize: 5 });
    try {
      await handle.db.execute(sql`create table counter (id int primary key, n int not null)`);
      await handle.db.execute(sql`insert into counter values (1, 0)`);
      // Each write as contentWrite's: a transaction that first takes a row lock, then notifies.
      const pending = new Map<number, number>();
      const outcome = { committed: 0, unavailable: 0, other: [] as string[] };
      let stop = false;
      let seq = 0;
      const writer = async (): Promise<void> => {
        while (!stop) {
          const id = seq++;
          pending.set(id, Date.now());
          try {
            await handle.db.transaction(async (tx) => {
              await tx.execute(sql`update counter set n = n + 1 where id = 1`);
              await tx.execute(sql`select pg_notify('write_outage', 'x')`);
            });
            outcome.committed++;
          } catch (err) {
            if (isDatabaseUnavailable(err)) outcome.unavailable++;
            else outcome.other.push(String((err as Error).message).slice(0, 100));
          }
          pending.delete(id);
          await Bun.sleep(2); // fixed wait: the writers' pace (the load), not a wait for an outcome
        }
      };
      const load = Array.from({ length: 8 }, writer);
      const stuck: { cut: number; ages: number[] }[] = [];
      for (let cut = 0; cut < 4; cut++) {
        // fixed wait: the fault schedule (writes for ~400 ms, then an outage of 1 s), not a wait for an outcome.
        await Bun.sleep(400 + Math.random() * 50);
        await proxy.cut();
        await Bun.sleep(1000); // fixed wait: the outage lasts 1 s
        await proxy.restore();
        // The pool reconnects within ~1 s (backoff capped): every write pending at the restore
        // settles within 2 s of it; one still pending then and older than 2.5 s is stuck.
        const atRestore = [...pending.keys()];
        await waitFor(() => atRestore.every((id) => !pending.has(id)), { timeout: 2000, interval: 20 }).catch(() => {}); // judged just below
        const ages = [...pending.values()].map((at) => Date.now() - at).filter((ms) => ms > 2500);
        if (ages.length) stuck.push({ cut, ages });
      }
      stop = true;
      await Promise.race([Promise.all(load), Bun.sleep(3000)]); // fixed wait: a deadline (a stuck writer is reported below)
      expect(stuck).toEqual([]);
      expect(outcome.other).toEqual([]);
      expect(outcome.unavailable).toBeGreaterThan(0);
      expect(outcome.committed).toBeGreaterThan(100);
      // After: every committed write is counted, and a write answers at once.
      const t0 = performance.now();
      const [row] = (await handle.db.execute(sql`update counter set n = n + 1 where id = 1 returning n`)) as unknown as { n: number }[];
      expect(performance.now() - t0).toBeLessThan(1000);
      expect(row!.n).toBeGreaterThanOrEqual(outcome.committed + 1);
    } finally {
      await handle.close().catch(() => {});
      await proxy.close();
      await drop().catch(() => {});
    }
  }, 60_000);
});
