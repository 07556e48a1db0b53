// Webhooks across real processes (`bun src/main.ts`), issue 28: events committed before a kill -9
// (one in flight, one never attempted) arrive after the restart, with the same webhook-id; two
// instances sharing one PostgreSQL outbox attempt each event once.
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import postgres from "postgres";
import { Webhook } from "standardwebhooks";
import { migratedDataDir, waitFor } from "./helpers";
import { type Served, serve } from "./service-process";
import { startReceiver } from "./webhooks.helpers";

const pgUrl = process.env.DATABASE_URL?.startsWith("postgres") ? process.env.DATABASE_URL : null;
const ENV = { WEBHOOKS_ALLOW_PRIVATE_URLS: "true", WEBHOOKS_RETRY_SCHEDULE: "0,200ms,200ms", WEBHOOKS_POLL_MS: "200", WEBHOOKS_TIMEOUT_MS: "1000" };
const receiver = startReceiver();
const running: Served[] = [];
const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const s of running) await s.kill().catch(() => {});
  for (const c of cleanup) await c().catch(() => {});
  receiver.stop();
});

/**
 * A database for this file: a new one on the PostgreSQL server, else an embedded one in a DATA_DIR
 * kept across restarts (migrated already: the test is about the restart, not a first start).
 */
async function database(): Promise<{ url: string; dataDir?: string }> {
  if (!pgUrl) {
    const dataDir = await migratedDataDir();
    cleanup.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    return { url: "", dataDir };
  }
  const admin = postgres(pgUrl, { max: 1, onnotice: () => {} });
  const name = `t_wh_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  await admin.unsafe(`create database ${name}`);
  cleanup.push(async () => {
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end();
  });
  const url = new URL(pgUrl);
  url.pathname = `/${name}`;
  return { url: url.toString() };
}

const token = `webhooks-test-root-token-${crypto.randomUUID()}`;
// The sealing key must outlive a restart (and be shared by two instances).
const SECRET_KEYS = `k1:${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64")}`;

async function start(db: { url: string; dataDir?: string }): Promise<Served> {
  const s = await serve(db.url, token, 5, { env: { ...ENV, SECRET_KEYS }, dataDir: db.dataDir, startTimeoutMs: 60_000 });
  running.push(s);
  return s;
}

function client(base: string) {
  return async (method: string, path: string, body?: unknown): Promise<any> => {
    const r = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await r.text();
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${text}`);
    return text ? JSON.parse(text).data : null;
  };
}

describe("webhooks across processes", () => {
  // On the embedded database (the default) and on PostgreSQL: a kill -9 of the one process of an
  // embedded database is its likeliest way to lose what was committed.
  test("kill -9 between commit and delivery: the events arrive after the restart, the interrupted one with the same webhook-id", { timeout: 150_000 }, async () => {
    const db = await database();
    let svc = await start(db);
    let api = client(svc.url);
    const slug = `wh-kill-${Date.now().toString(36)}`;
    await api("POST", "/admin/projects", { slug, name: slug, default_locale: "en", locales: ["en"] });
    const ep = await api("POST", `/admin/p/${slug}/webhooks`, { url: receiver.url("/kill"), events: ["*"] });
    // The first attempt never gets an answer: the process dies with it in flight.
    receiver.script("/kill", [{ status: 200, hang: true }]);
    await api("POST", `/admin/p/${slug}/nodes`, { slug: "first", title: "first" });
    await waitFor(() => receiver.on("/kill").length >= 1, { timeout: 10_000, what: "the first attempt" });
    // Committed, acknowledged, not yet attempted (it waits behind the first, per-endpoint order).
    await api("POST", `/admin/p/${slug}/nodes`, { slug: "second", title: "second" });
    await svc.kill(); // SIGKILL
    running.splice(running.indexOf(svc), 1);
    expect(receiver.on("/kill")).toHaveLength(1);

    svc = await start(db);
    api = client(svc.url);
    await waitFor(() => receiver.on("/kill").length >= 3, { timeout: 20_000, what: "both events after the restart" });
    const got = receiver.on("/kill");
    const ids = got.map((r) => r.headers["webhook-id"]);
    expect(ids[1]).toBe(ids[0]); // the interrupted attempt, sent again: at least once, same id
    expect(ids[2]).not.toBe(ids[0]);
    const paths = got.map((r) => (new Webhook(ep.secret).verify(r.body, r.headers) as any).data.node.path);
    expect(paths).toEqual(["first", "first", "second"]);
    const log = await waitFor(async () => {
      const l = await api("GET", `/admin/p/${slug}/webhooks/${ep.id}/deliveries`);
      return l.length >= 2 ? l : null;
    });
    // Newest first: the second at its first attempt; the first at its second (the killed one was counted, never recorded).
    expect(log.map((d: any) => [d.event_id, d.attempt, d.outcome])).toEqual([
      [ids[2], 1, "succeeded"],
      [ids[0], 2, "succeeded"],
    ]);
    await svc.kill();
    running.splice(running.indexOf(svc), 1);
  });

  test.if(pgUrl !== null)(
    "two instances on one outbox: every event attempted once, in order per endpoint (PostgreSQL only: needs DATABASE_URL; processes cannot share the embedded database)",
    { timeout: 150_000 },
    async () => {
      const db = await database();
      const [a, b] = [await start(db), await start(db)];
      const apiA = client(a.url);
      const apiB = client(b.url);
      const slug = `wh-two-${Date.now().toString(36)}`;
      await apiA("POST", "/admin/projects", { slug, name: slug, default_locale: "en", locales: ["en"] });
      const eps = [
        await apiA("POST", `/admin/p/${slug}/webhooks`, { url: receiver.url("/two-a"), events: ["*"] }),
        await apiB("POST", `/admin/p/${slug}/webhooks`, { url: receiver.url("/two-b"), events: ["node.created"] }),
      ];
      const N = 30;
      // Writes through both instances, a little slow receiver so that both dispatchers compete.
      receiver.script(
        "/two-a",
        Array.from({ length: N }, () => ({ status: 200, delayMs: 20 })),
      );
      for (let i = 0; i < N; i++) await (i % 2 ? apiA : apiB)("POST", `/admin/p/${slug}/nodes`, { slug: `n${i}`, title: `n${i}` });
      await waitFor(() => receiver.on("/two-a").length >= N && receiver.on("/two-b").length >= N, { timeout: 30_000, what: "every event at both endpoints" });
      // One more event, sent after all of them (in order per endpoint): an event sent twice came before it.
      await apiA("POST", `/admin/p/${slug}/nodes`, { slug: "last", title: "last" });
      const last = (path: string) => receiver.on(path).some((r) => JSON.parse(r.body).data.node.path === "last");
      await waitFor(() => last("/two-a") && last("/two-b"), { timeout: 10_000, what: "the last event at both endpoints" });
      for (const [path, ep] of [
        ["/two-a", eps[0]],
        ["/two-b", eps[1]],
      ] as const) {
        const got = receiver.on(path);
        expect(got).toHaveLength(N + 1);
        expect(new Set(got.map((r) => r.headers["webhook-id"])).size).toBe(N + 1);
        expect(got.map((r) => (new Webhook(ep.secret).verify(r.body, r.headers) as any).data.node.path)).toEqual([...Array.from({ length: N }, (_, i) => `n${i}`), "last"]);
        const log = await waitFor(async () => {
          const l = await apiA("GET", `/admin/p/${slug}/webhooks/${ep.id}/deliveries?per_page=100`);
          return l.length >= N + 1 ? l : null;
        });
        expect(log).toHaveLength(N + 1);
        expect(log.every((d: any) => d.attempt === 1 && d.outcome === "succeeded")).toBe(true);
      }
    },
  );
});
