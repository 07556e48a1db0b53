// Connection deadlines on the real process (`bun src/main.ts`, HTTP_IDLE_TIMEOUT=2): a client that
// trickles its headers or its body one byte at a time is closed within a bound, while a normal
// request on another connection succeeds, and handlers that work longer than the idle deadline
// (an AI call, over REST and over MCP) still answer. The tests spend their time waiting on deadlines,
// not working, so they run side by side (test.concurrent): the file lasts as long as its longest wait.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import postgres from "postgres";
import { openDb } from "../db/client";
import { createAdminKey } from "../src/keys/service";
import { ADMIN_SCOPES } from "../src/lib/scopes";
import { type FakeVendors, startFakeVendors } from "./fake-vendors";
import { freePort, migratedDataDir, waitFor } from "./helpers";

const IDLE = 2; // seconds
// Past the point where Bun resets a connection whose handler is still working (~8 s at a 2 s deadline,
// measured) unless the deadline is lifted for it.
const VENDOR_DELAY_MS = (IDLE + 8) * 1000;
const token = `deadline-test-root-token-${crypto.randomUUID()}`;
const SLOW_SLUG = "slow";
let proc: ReturnType<typeof Bun.spawn>;
let base = "";
let port = 0;
let vendors: FakeVendors;
let slowVendor: ReturnType<typeof Bun.serve>;
let output = "";
let dataDir = "";

beforeAll(async () => {
  vendors = await startFakeVendors();
  // An OpenAI-compatible vendor that answers correctly, but only after the idle deadline has passed.
  slowVendor = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      await Bun.sleep(VENDOR_DELAY_MS);
      const url = new URL(req.url);
      const headers: Record<string, string> = { "content-type": "application/json", authorization: req.headers.get("authorization") ?? "" };
      return fetch(`${vendors.origin}${url.pathname}`, { method: req.method, headers, body: await req.text() });
    },
  });
  dataDir = await migratedDataDir(); // the embedded database, whatever the suite runs on
  port = freePort();
  base = `http://127.0.0.1:${port}`;
  proc = Bun.spawn([process.execPath, "src/main.ts"], {
    cwd: join(import.meta.dir, ".."),
    env: {
      ...process.env,
      DATABASE_URL: "",
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: "127.0.0.1",
      ADMIN_TOKEN: token,
      SEED_DEMO: "false",
      AI_ALLOW_PRIVATE_URLS: "true",
      LOG_LEVEL: "warn",
      HTTP_IDLE_TIMEOUT: String(IDLE),
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  void (async () => {
    for await (const c of proc.stderr as ReadableStream<Uint8Array>) output += new TextDecoder().decode(c);
  })();
  const deadline = Date.now() + 30_000;
  while (
    !(await fetch(`${base}/readyz`)
      .then((r) => r.ok)
      .catch(() => false))
  ) {
    if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`service did not start:\n${output}`);
    await Bun.sleep(100);
  }
});

afterAll(async () => {
  proc?.kill("SIGKILL");
  await proc?.exited;
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  slowVendor?.stop(true);
  await vendors?.stop();
});

/** Opens a socket, writes `prefix`, then one byte every `everyMs`; resolves with when it was closed (or null). */
function trickle(prefix: string, everyMs: number, giveUpMs: number): { closedAfterMs: Promise<number | null>; received: () => string } {
  let received = "";
  const started = Date.now();
  const closedAfterMs = new Promise<number | null>((resolve) => {
    const s: Socket = connect(port, "127.0.0.1", () => {
      s.write(prefix);
    });
    const tick = setInterval(() => {
      if (!s.destroyed) s.write("x");
    }, everyMs);
    const giveUp = setTimeout(() => {
      clearInterval(tick);
      s.destroy();
      resolve(null);
    }, giveUpMs);
    s.on("data", (d) => (received += d.toString()));
    s.on("error", () => {});
    s.on("close", () => {
      clearInterval(tick);
      clearTimeout(giveUp);
      resolve(Date.now() - started);
    });
  });
  return { closedAfterMs, received: () => received };
}

test.concurrent("trickled headers and trickled bodies are closed within the bound; a normal request meanwhile succeeds", async () => {
  const headers = trickle("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ", 500, 25_000);
  const jsonBody = trickle(`POST /admin/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"slug":"`, 500, 25_000);
  const mcpBody = trickle(
    "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer nothing\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{",
    500,
    25_000,
  );
  const keepAliveIdle = trickle("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 60_000, 25_000);

  // Normal traffic is unaffected while the slow clients hang on.
  await Bun.sleep(500);
  const ok = await fetch(`${base}/admin/projects`, { headers: { authorization: `Bearer ${token}` } });
  expect(ok.status).toBe(200);

  const [h, b, m, k] = await Promise.all([headers.closedAfterMs, jsonBody.closedAfterMs, mcpBody.closedAfterMs, keepAliveIdle.closedAfterMs]);
  // Headers: Bun's fixed header deadline (about 10 s, checked on a 4 s tick), not reset by the trickle.
  expect(h).not.toBeNull();
  expect(h!).toBeLessThan(16_000);
  // Bodies (admin JSON route and /mcp): the idle deadline, not reset by the trickle.
  expect(b).not.toBeNull();
  expect(b!).toBeLessThan((IDLE + 3) * 1000);
  expect(m).not.toBeNull();
  expect(m!).toBeLessThan((IDLE + 3) * 1000 + 1000);
  // A silent keep-alive connection after a complete answer: closed at the idle deadline.
  expect(keepAliveIdle.received()).toContain("HTTP/1.1 200");
  expect(k).not.toBeNull();
  expect(k!).toBeLessThan((IDLE + 3) * 1000);
  // The trickled write never happened (the slow-handler test beside this one makes "slow").
  const list = await (await fetch(`${base}/admin/projects`, { headers: { authorization: `Bearer ${token}` } })).json();
  expect(list.data.filter((p: { slug: string }) => p.slug !== SLOW_SLUG)).toEqual([]);
}, 40_000);

test.concurrent("a handler that works longer than the idle deadline still answers (AI call over REST and over MCP)", async () => {
  const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  expect((await fetch(`${base}/admin/projects`, { method: "POST", headers: auth, body: JSON.stringify({ slug: SLOW_SLUG, name: "slow" }) })).status).toBe(201);
  const prov = await fetch(`${base}/admin/p/slow/ai/providers`, {
    method: "POST",
    headers: auth,
    body: JSON.stringify({ name: "slow", kind: "openai", api_key: "sk-slow-1234", base_url: `http://127.0.0.1:${slowVendor.port}/s/ok` }),
  });
  expect(prov.status).toBe(201);

  const tok = await fetch(`${base}/admin/p/slow/ai/mcp/tokens`, { method: "POST", headers: auth, body: JSON.stringify({ name: "t", scopes: ["ai:read"] }) });
  expect(tok.status).toBe(201);
  const mcpToken = (await tok.json()).data.token;

  // Both calls at once, each on its own connection: each waits the vendor's delay on its own.
  const timed = async (send: () => Promise<Response>): Promise<{ res: Response; ms: number }> => {
    const t0 = Date.now();
    const res = await send();
    return { res, ms: Date.now() - t0 };
  };
  const [rest, mcp] = await Promise.all([
    timed(() => fetch(`${base}/admin/p/slow/ai/translate`, { method: "POST", headers: auth, body: JSON.stringify({ from: "en", to: "fr", text: "Hello" }) })),
    timed(() =>
      fetch(`${base}/mcp`, {
        method: "POST",
        headers: { authorization: `Bearer ${mcpToken}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "translate_text", arguments: { text: "Hello", to: "fr", from: "en" } } }),
      }),
    ),
  ]);
  expect(rest.ms).toBeGreaterThanOrEqual(VENDOR_DELAY_MS);
  expect(rest.res.status).toBe(200);
  expect((await rest.res.json()).data.translation).toContain("Hello");
  expect(mcp.ms).toBeGreaterThanOrEqual(VENDOR_DELAY_MS);
  expect(mcp.res.status).toBe(200);
  const rpc = await mcp.res.json();
  expect(rpc.result.isError).toBeFalsy();
  expect(rpc.result.structuredContent.translation).toContain("Hello");
}, 40_000);

// A GET has no body to read, so Bun's idle timer runs while its handler waits: without the lift a
// read that waits on PostgreSQL (a table lock here; a pool at its connect timeout in real life)
// is reset instead of answered. PostgreSQL only: PGlite offers no second session to hold a lock.
const pgUrl = process.env.DATABASE_URL?.startsWith("postgres") ? process.env.DATABASE_URL : null;
test.skipIf(!pgUrl).concurrent(
  "a GET whose handler waits on the database longer than the idle deadline still answers (PostgreSQL only: needs DATABASE_URL; the embedded database has no second session to hold a lock)",
  async () => {
    const handle = await openDb({ databaseUrl: pgUrl!, dataDir: "", poolSize: 1 });
    const { plaintext } = await createAdminKey(handle.db, { name: "deadline", scopes: [...ADMIN_SCOPES] }, null, new Date());
    await handle.close();
    const p = freePort();
    const svc = Bun.spawn([process.execPath, "src/main.ts"], {
      cwd: join(import.meta.dir, ".."),
      env: { ...process.env, DATABASE_URL: pgUrl!, PORT: String(p), HOST: "127.0.0.1", SEED_DEMO: "false", LOG_LEVEL: "warn", HTTP_IDLE_TIMEOUT: String(IDLE) },
      stdout: "ignore",
      stderr: "ignore",
    });
    const sql = postgres(pgUrl!, { max: 2, onnotice: () => {} });
    try {
      const url = `http://127.0.0.1:${p}`;
      const deadline = Date.now() + 30_000;
      while (
        !(await fetch(`${url}/readyz`)
          .then((r) => r.ok)
          .catch(() => false))
      ) {
        if (Date.now() > deadline || svc.exitCode !== null) throw new Error("service did not start");
        await Bun.sleep(100);
      }
      const auth = { authorization: `Bearer ${plaintext}`, "content-type": "application/json" };
      const slug = `deadline-${crypto.randomUUID().slice(0, 8)}`;
      expect((await fetch(`${url}/admin/projects`, { method: "POST", headers: auth, body: JSON.stringify({ slug, name: slug }) })).status).toBe(201);
      let release = (): void => {};
      const locked = new Promise<void>((resolve) => {
        void sql.begin(async (tx) => {
          await tx`lock table nodes in access exclusive mode`;
          resolve();
          await new Promise<void>((r) => (release = r));
        });
      });
      await locked;
      const read = fetch(`${url}/admin/p/${slug}/nodes`, { headers: auth });
      const answeredAt = read.then(() => Date.now());
      // The GET's query really waits on the lock (a quick answer would prove nothing).
      const waiting = () => sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.then((r) => r[0]?.n > 0);
      await waitFor(waiting, { timeout: 5000, interval: 50, what: "the GET's query waiting on the lock" });
      await Bun.sleep(VENDOR_DELAY_MS); // past the idle deadline and the point where Bun would reset it
      const releasedAt = Date.now();
      release();
      const res = await read;
      expect(await answeredAt).toBeGreaterThanOrEqual(releasedAt);
      expect(res.status).toBe(200);
      expect((await res.json()).data).toEqual([]);
    } finally {
      svc.kill("SIGKILL");
      await sql.end({ timeout: 5 });
    }
  },
  60_000,
);
