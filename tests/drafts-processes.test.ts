// Issue 37 across real processes: two service processes on one PostgreSQL database. A working-copy
// write on one leaves both serving the published version (a third process started after it reads
// the database and agrees); a publish on one reaches the other's cache through NOTIFY, and a process
// killed -9 right after the publish's answer loses nothing of it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { freshDatabase, pgUrl, sendJson, waitFor } from "./helpers";
import { type Served, serve } from "./service-process";

// Several processes cannot share an embedded PGlite database: the PostgreSQL pass runs this (the
// PGlite pass checks two apps in one process, tests/drafts.test.ts). The database is made in
// beforeAll: a skipped describe's body runs, its hooks do not.
describe.if(pgUrl !== null)("drafts of published pages across service processes (PostgreSQL only: needs DATABASE_URL, processes cannot share the embedded database)", () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  const token = `drafts-test-root-token-${crypto.randomUUID()}`;
  // A long version check: only NOTIFY can tell the other process of a write in time.
  const env = { DELIVERY_VERSION_CHECK_MS: "30000" };
  const running: Served[] = [];
  const start = async (): Promise<Served> => {
    const s = await serve(db.url ?? "", token, 3, { env });
    running.push(s);
    return s;
  };
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
    return text === "" ? null : JSON.parse(text).data;
  };
  const page = async (base: string, path: string): Promise<{ status: number; title: string | null }> => {
    const res = await fetch(`${base}/api/p/site${path}`);
    const body = (await res.json()) as { data?: { title?: string } };
    return { status: res.status, title: body.data?.title ?? null };
  };

  test("a working-copy write leaves every process serving the published version; a publish reaches the other by NOTIFY; a kill -9 after the answer keeps it", async () => {
    const [a, b] = [await start(), await start()];
    await call(a.url, "POST", "/admin/projects", { slug: "site", name: "Site", default_locale: "en", locales: ["en"] });
    const node = await call(a.url, "POST", "/admin/p/site/nodes", { slug: "about", title: "About v1" });
    await call(a.url, "POST", `/admin/p/site/nodes/${node.id}/publish`);
    expect(await page(b.url, "/nodes/by-path/about")).toEqual({ status: 200, title: "About v1" });

    await call(a.url, "PATCH", `/admin/p/site/nodes/${node.id}`, { title: "About v2", slug: "about-us" });
    // A process started after the write reads the database: the published version, at its old path.
    const c = await start();
    expect(await page(c.url, "/nodes/by-path/about")).toEqual({ status: 200, title: "About v1" });
    expect((await page(c.url, "/nodes/by-path/about-us")).status).toBe(404);
    expect(await page(b.url, "/nodes/by-path/about")).toEqual({ status: 200, title: "About v1" });

    // Published on A, which is killed -9 as soon as it answers: B (by NOTIFY) and C serve the new version.
    await call(a.url, "POST", `/admin/p/site/nodes/${node.id}/publish`);
    await a.kill();
    for (const s of [b, c]) {
      await waitFor(async () => (await page(s.url, "/nodes/by-path/about-us")).title === "About v2", { timeout: 3000, interval: 50, what: "the published version on another process" });
      expect((await page(s.url, "/nodes/by-path/about")).status).toBe(404);
    }
    const working = await call(b.url, "GET", `/admin/p/site/nodes/${node.id}`);
    expect(working).toMatchObject({ title: "About v2", path: "about-us", status: "published", state: "published" });
  });
});
