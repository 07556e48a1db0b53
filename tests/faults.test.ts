import { describe, expect, test } from "bun:test";
import postgres from "postgres";
import { openDb } from "../db/client";
import { createApp } from "../src/app";
import { freshDatabase, harness, seedNode, seedProject } from "./helpers";

const pgUrl = process.env.DATABASE_URL?.startsWith("postgres") ? process.env.DATABASE_URL : null;

// These faults need a PostgreSQL server to take away; CI's PostgreSQL pass runs them.
describe.if(pgUrl !== null)("database faults (PostgreSQL)", () => {
  test("terminated backends give clean errors, never 500, and the service recovers by itself", async () => {
    // A database of its own: terminating backends must not disturb the pool the other tests share.
    const fresh = await freshDatabase();
    const h = await harness({}, { db: fresh.handle.db, dbHandle: fresh.handle });
    const p = await seedProject(h);
    await seedNode(h, p.slug, { slug: "before" });
    const killer = postgres(fresh.url!, { max: 1, onnotice: () => {} });
    try {
      await killer`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`;
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) {
        const r = await h.request("GET", `/admin/p/${p.slug}/nodes`);
        statuses.push(r.status);
        if (r.status !== 200) {
          expect(r.status).toBe(503);
          expect(r.json.error.code).toBe("service_unavailable");
          expect(r.headers.get("retry-after")).toBe("1");
        }
      }
      expect(statuses.at(-1)).toBe(200);
      expect((await h.request("GET", "/readyz", { key: null })).status).toBe(200);
    } finally {
      await killer.end();
      await fresh.drop();
    }
  });

  test("an unreachable database: /readyz 503 and requests 503, not 500", async () => {
    const url = new URL(pgUrl!);
    url.port = "1"; // nothing listens there
    const handle = await openDb({ databaseUrl: url.toString(), dataDir: "", poolSize: 1 });
    try {
      const good = await harness();
      const app = createApp({ ...good.deps, db: handle.db, dbHandle: handle });
      const ready = await app.handle(new Request("http://localhost/readyz"));
      expect(ready.status).toBe(503);
      const r = await app.handle(new Request("http://localhost/admin/projects", { headers: { authorization: `Bearer ${good.rootKey}` } }));
      expect(r.status).toBe(503);
      expect((await r.json()).error.code).toBe("service_unavailable");
    } finally {
      await handle.close();
    }
  });
});
