// A write sent just as the database goes away (a loopback TCP proxy that resets every connection
// and refuses new ones) must settle: 503-able (isDatabaseUnavailable) or committed, never pending.
// postgres.js keeps a connection whose socket has had its 'error' (ECONNRESET) in the pool until
// the 'close'; a transaction's BEGIN handed to it in between was dropped at the close and hung for
// good (db/patch-postgres.mjs, round 2). The pool is the service's own (openDb).
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { openDb } from "../db/client";
import { isDatabaseUnavailable } from "../src/errors";
import { pgProxy } from "./pg-proxy";

const pgUrl = process.env.DATABASE_URL?.startsWith("postgres") ? process.env.DATABASE_URL : null;

describe.if(pgUrl !== null)("writes across a database outage, PostgreSQL behind a proxy (PostgreSQL only: needs DATABASE_URL)", () => {
  test("8 writers in transactions through 4 cuts: every write settles (committed or unavailable) within 2 s of the restore, and writes work at once after", async () => {
    const admin = postgres(pgUrl!, { max: 1, onnotice: () => {} });
    const name = `t_wout_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
    await admin.unsafe(`create database ${name}`);
    const direct = new URL(pgUrl!);
    const proxy = await pgProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    const viaProxy = new URL(pgUrl!);
    viaProxy.hostname = "127.0.0.1";
    viaProxy.port = String(proxy.port);
    viaProxy.pathname = `/${name}`;
    const handle = await openDb({ databaseUrl: viaProxy.toString(), dataDir: "", poolSize: 5 });
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
          await Bun.sleep(2);
        }
      };
      const load = Array.from({ length: 8 }, writer);
      const stuck: { cut: number; ages: number[] }[] = [];
      for (let cut = 0; cut < 4; cut++) {
        await Bun.sleep(400 + Math.random() * 50);
        await proxy.cut();
        await Bun.sleep(1000);
        await proxy.restore();
        await Bun.sleep(2000);
        // The pool reconnects within ~1 s (backoff capped): anything older than 2.5 s is stuck.
        const ages = [...pending.values()].map((at) => Date.now() - at).filter((ms) => ms > 2500);
        if (ages.length) stuck.push({ cut, ages });
      }
      stop = true;
      await Promise.race([Promise.all(load), Bun.sleep(3000)]);
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
      await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
      await admin.end();
    }
  }, 60_000);
});
