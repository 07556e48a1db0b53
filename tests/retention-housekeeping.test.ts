// The retention settings reach the housekeeping of a running service (docs/editorial.md, Retention):
// a database with revision history is prepared through the admin API, then the service
// (`bun src/main.ts`) starts on it with REVISIONS_PER_NODE, REVISIONS_MAX_AGE_DAYS and
// TRASH_RETENTION_DAYS set; its housekeeping (at start, then hourly) prunes what the settings say
// and keeps the rest. On the embedded database (a DATA_DIR) or, with DATABASE_URL, on PostgreSQL.
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { asc, eq, sql } from "drizzle-orm";
import { type DbHandle, openDb } from "../db/client";
import { runMigrations } from "../db/migrate";
import { revisions } from "../db/schema";
import { freshDatabase, harness, seedNode, seedProject, type TestHarness, waitFor } from "./helpers";
import { serve } from "./service-process";

/** A database the service can start on: a migrated DATA_DIR, or a fresh PostgreSQL database; `open` opens it (again). */
async function serviceDatabase(): Promise<{ url: string; dataDir?: string; open(): Promise<DbHandle>; drop(): Promise<void> }> {
  if (process.env.DATABASE_URL?.startsWith("postgres")) {
    const fresh = await freshDatabase();
    return { url: fresh.url!, open: async () => fresh.handle, drop: () => fresh.drop() };
  }
  const dataDir = mkdtempSync(join(tmpdir(), "cms-retention-"));
  const open = () => openDb({ databaseUrl: null, dataDir });
  const first = await open();
  await runMigrations(first);
  await first.close();
  return { url: "", dataDir, open, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
}

const numbersOf = async (handle: DbHandle, nodeId: string): Promise<number[]> =>
  (await handle.db.select({ n: revisions.number }).from(revisions).where(eq(revisions.nodeId, nodeId)).orderBy(asc(revisions.number))).map((r) => r.n);

const patch = async (h: TestHarness, ref: string, id: string, title: string): Promise<void> => {
  expect((await h.request("PATCH", `/admin/p/${ref}/nodes/${id}`, { body: { title } })).status).toBe(200);
};

test("a service started with retention settings prunes old and surplus revisions and expired trash at its housekeeping, and keeps the rest", { timeout: 120_000 }, async () => {
  const database = await serviceDatabase();
  try {
    // The history, written through the admin API as any other.
    let handle = await database.open();
    const h = await harness({}, { db: handle.db, dbHandle: handle });
    const p = await seedProject(h);
    const busy = await seedNode(h, p.slug, { slug: "busy" });
    for (let i = 2; i <= 6; i++) await patch(h, p.slug, busy.id, `Busy ${i}`);
    const aged = await seedNode(h, p.slug, { slug: "aged" });
    for (let i = 2; i <= 3; i++) await patch(h, p.slug, aged.id, `Aged ${i}`);
    const recent = await seedNode(h, p.slug, { slug: "recent" });
    await patch(h, p.slug, recent.id, "Recent 2");
    const trashedLongAgo = await seedNode(h, p.slug, { slug: "trashed-long-ago" });
    const trashedNow = await seedNode(h, p.slug, { slug: "trashed-now" });
    for (const n of [trashedLongAgo, trashedNow]) expect((await h.request("DELETE", `/admin/p/${p.slug}/nodes/${n.id}`)).status).toBe(204);
    // Time passes for some of it: the aged node's history 40 days, one deletion 10 days.
    await handle.db.execute(sql`update revisions set created_at = created_at - interval '40 days' where node_id = ${aged.id}`);
    await handle.db.execute(sql`update revisions set created_at = created_at - interval '10 days' where node_id = ${trashedLongAgo.id}`);
    const before = {
      busy: await numbersOf(handle, busy.id),
      aged: await numbersOf(handle, aged.id),
      recent: await numbersOf(handle, recent.id),
      trashedLongAgo: await numbersOf(handle, trashedLongAgo.id),
      trashedNow: await numbersOf(handle, trashedNow.id),
    };
    expect(before).toEqual({ busy: [1, 2, 3, 4, 5, 6], aged: [1, 2, 3], recent: [1, 2], trashedLongAgo: [1, 2], trashedNow: [1, 2] });
    if (database.dataDir) await handle.close(); // the service takes the embedded database's directory

    const token = `retention-root-token-${crypto.randomUUID()}`;
    const svc = await serve(database.url, token, 3, {
      dataDir: database.dataDir,
      env: { LOG_LEVEL: "info", REVISIONS_PER_NODE: "3", REVISIONS_MAX_AGE_DAYS: "30", TRASH_RETENTION_DAYS: "7", SCHEDULER_INTERVAL_MS: "0", WEBHOOKS_DISPATCH: "false" },
    });
    let purged: Record<string, unknown>;
    try {
      const line = await waitFor(
        () =>
          svc
            .output()
            .split("\n")
            .find((l) => l.includes('"msg":"purged expired rows"')),
        { timeout: 30_000, what: "the housekeeping's run" },
      );
      purged = JSON.parse(line);
      // The trash, as an operator sees it: only the recent deletion is restorable.
      const trash = await fetch(`${svc.url}/admin/p/${p.slug}/trash`, { headers: { authorization: `Bearer ${token}` } });
      expect(((await trash.json()) as { data: { node_id: string }[] }).data.map((t) => t.node_id)).toEqual([trashedNow.id]);
    } finally {
      await svc.kill();
    }
    expect(purged).toMatchObject({ revisions: 3 + 2, trashed: 2 });

    if (database.dataDir) handle = await database.open();
    try {
      expect({
        // Beyond the newest 3; older than 30 days but the newest; untouched; a deletion older than 7 days; a recent one.
        busy: await numbersOf(handle, busy.id),
        aged: await numbersOf(handle, aged.id),
        recent: await numbersOf(handle, recent.id),
        trashedLongAgo: await numbersOf(handle, trashedLongAgo.id),
        trashedNow: await numbersOf(handle, trashedNow.id),
      }).toEqual({ busy: [4, 5, 6], aged: [3], recent: [1, 2], trashedLongAgo: [], trashedNow: [1, 2] });
    } finally {
      if (database.dataDir) await handle.close();
    }
  } finally {
    await database.drop();
  }
});
