// The webhook delivery rules docs/webhooks.md promises, each against a real receiver on loopback:
// the default retry schedule (immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h) with up to 10 %
// jitter; the address check again at every connection (a name rebound to a forbidden address is
// refused); the receiver's answer read up to WEBHOOKS_MAX_RESPONSE_BYTES only; a retry after a
// network error. A database of its own: no other file's dispatcher claims these events.
import { afterAll, describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { webhookEndpoints, webhookOutbox } from "../db/schema";
import { type Dispatcher, startDispatcher } from "../src/webhooks/dispatcher";
import { freshDatabase, harness, seedNode, seedProject, type TestHarness, waitFor } from "./helpers";

const fresh = await freshDatabase();
afterAll(() => fresh.drop());
const own = { db: fresh.handle.db, dbHandle: fresh.handle };

interface Hit {
  path: string;
  host: string;
  id: string;
  at: number;
}

/** A receiver on loopback: records each request; `answer` decides the response by path (default 200). */
function receiver(answer: (path: string) => Response | null = () => null) {
  const hits: Hit[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      await req.text();
      hits.push({ path, host: req.headers.get("host") ?? "", id: req.headers.get("webhook-id") ?? "", at: Date.now() });
      return answer(path) ?? new Response("ok");
    },
  });
  return { port: server.port!, hits, on: (path: string) => hits.filter((x) => x.path === path), stop: () => server.stop(true) };
}

async function endpoint(h: TestHarness, ref: string, url: string): Promise<string> {
  const res = await h.request("POST", `/admin/p/${ref}/webhooks`, { body: { url, events: ["*"] } });
  if (res.status !== 201) throw new Error(`endpoint: ${res.status} ${res.text}`);
  return res.json.data.id;
}

interface Delivery {
  attempt: number;
  attempted_at: string;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  outcome: string;
  next_attempt_at: string | null;
  event_id: string;
}

/** The endpoint's deliveries log, oldest first, once it holds `n` attempts. */
async function deliveries(h: TestHarness, ref: string, id: string, n: number, timeout = 10_000): Promise<Delivery[]> {
  const log = await waitFor(
    async () => {
      const res = await h.request("GET", `/admin/p/${ref}/webhooks/${id}/deliveries?per_page=100`);
      return res.json.data.length >= n ? (res.json.data as Delivery[]) : null;
    },
    { timeout, what: `${n} attempts in the deliveries log` },
  );
  return [...log].reverse();
}

/** Stops the test's dispatcher and removes its endpoints (with their events), so that the next test's dispatcher finds nothing of them. */
async function stop(h: TestHarness, dispatcher: Dispatcher): Promise<void> {
  await dispatcher.stop();
  await h.deps.db.delete(webhookEndpoints);
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

describe("the default retry schedule", () => {
  test("an event failing every attempt: eight attempts, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h apart (each up to 10 % later), then failed", async () => {
    const rx = receiver((path) => (path === "/down" ? new Response("no", { status: 500 }) : null));
    // No WEBHOOKS_RETRY_SCHEDULE: the default is what is tested.
    const h = await harness({ WEBHOOKS_ALLOW_PRIVATE_URLS: "true" }, own);
    const dispatcher = startDispatcher(h.deps);
    try {
      const p = await seedProject(h);
      const id = await endpoint(h, p.slug, `http://127.0.0.1:${rx.port}/down`);
      await seedNode(h, p.slug, { slug: "r" });
      const expected = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR];
      const delays: number[] = [];
      for (let attempt = 1; attempt <= expected.length + 1; attempt++) {
        const log = await deliveries(h, p.slug, id, attempt);
        const d = log.at(-1)!;
        expect([d.attempt, d.status_code, d.error]).toEqual([attempt, 500, "HTTP 500"]);
        if (attempt > expected.length) {
          expect([d.outcome, d.next_attempt_at]).toEqual(["failed", null]);
          break;
        }
        expect(d.outcome).toBe("retrying");
        // The delay is counted from the attempt's end (attempted_at is its start).
        delays.push(Date.parse(d.next_attempt_at!) - Date.parse(d.attempted_at) - d.duration_ms);
        // Time passes: the retry falls due now, instead of in minutes or hours.
        await h.deps.db.update(webhookOutbox).set({ nextAttemptAt: sql`now()` }).where(eq(webhookOutbox.endpointId, id));
        dispatcher.wake();
      }
      expect(delays).toHaveLength(expected.length);
      delays.forEach((ms, i) => {
        const base = expected[i]!;
        expect([i, ms >= base - 5 && ms <= base * 1.1 + 50]).toEqual([i, true]);
      });
      // Jitter: spread over the 10 % (each delay is uniform over it; two or more above 0.5 % fail by chance about once in 10^7).
      expect(delays.filter((ms, i) => ms - expected[i]! > expected[i]! * 0.005).length).toBeGreaterThanOrEqual(2);
      const [row] = await h.deps.db.select().from(webhookOutbox).where(eq(webhookOutbox.endpointId, id));
      expect([row!.status, row!.attempts]).toEqual(["failed", 8]);
      expect(rx.on("/down")).toHaveLength(8);
      expect(new Set(rx.on("/down").map((x) => x.id)).size).toBe(1);
    } finally {
      await stop(h, dispatcher);
      rx.stop();
    }
  });
});

describe("the address is checked again at every connection", () => {
  test("a name rebound to a metadata address after the endpoint was created is refused, with nothing sent; back on its address it is delivered", async () => {
    const rx = receiver();
    const dns: Record<string, string[]> = { "hooks.rebind.test": ["127.0.0.1"] };
    const h = await harness({ WEBHOOKS_ALLOW_PRIVATE_URLS: "true", WEBHOOKS_RETRY_SCHEDULE: "0,100ms,100ms,100ms,100ms,100ms" }, { ...own, resolveHost: async (name) => dns[name] ?? [] });
    const dispatcher = startDispatcher(h.deps);
    try {
      const p = await seedProject(h);
      const url = `http://hooks.rebind.test:${rx.port}/rebind`;
      const id = await endpoint(h, p.slug, url);
      await seedNode(h, p.slug, { slug: "first" });
      // Delivered through the address the check resolved (this machine's DNS knows no such name).
      await waitFor(() => rx.on("/rebind").length === 1, { what: "the first event" });
      expect(rx.on("/rebind")[0]!.host).toBe(`hooks.rebind.test:${rx.port}`);

      dns["hooks.rebind.test"] = ["169.254.169.254"];
      await seedNode(h, p.slug, { slug: "second" });
      const refused = (await deliveries(h, p.slug, id, 2)).at(-1)!;
      expect([refused.status_code, refused.error, refused.outcome]).toEqual([null, "url points to a link-local or cloud metadata address, which is never allowed", "retrying"]);
      expect(rx.on("/rebind")).toHaveLength(1);

      dns["hooks.rebind.test"] = ["127.0.0.1"];
      await waitFor(() => rx.on("/rebind").length === 2, { what: "the retry once the name is back" });
      const log = await deliveries(h, p.slug, id, 3);
      expect(log.at(-1)).toMatchObject({ event_id: refused.event_id, status_code: 200, outcome: "succeeded" });
    } finally {
      await stop(h, dispatcher);
      rx.stop();
    }
  });

  test("without WEBHOOKS_ALLOW_PRIVATE_URLS, a public name rebound to loopback is refused at the connection", async () => {
    const dns: Record<string, string[]> = { "hooks.public.test": ["93.184.216.34"] };
    const h = await harness({ WEBHOOKS_RETRY_SCHEDULE: "0,1h" }, { ...own, resolveHost: async (name) => dns[name] ?? [] });
    const dispatcher = startDispatcher(h.deps);
    try {
      const p = await seedProject(h);
      const id = await endpoint(h, p.slug, "https://hooks.public.test/in");
      dns["hooks.public.test"] = ["127.0.0.1"];
      await seedNode(h, p.slug, { slug: "n" });
      const [d] = await deliveries(h, p.slug, id, 1);
      expect([d!.status_code, d!.error, d!.outcome]).toEqual([null, "url points to a private or loopback address (allowed only with WEBHOOKS_ALLOW_PRIVATE_URLS=true)", "retrying"]);
    } finally {
      await stop(h, dispatcher);
    }
  });
});

describe("the receiver's answer", () => {
  test("is read up to WEBHOOKS_MAX_RESPONSE_BYTES: an endless 200 is a success at once, an endless 500 a retry by its status", async () => {
    const streams = { cancelled: 0 };
    const endless = (status: number): Response => {
      const chunk = new Uint8Array(16 * 1024).fill(120);
      const body = new ReadableStream<Uint8Array>({
        pull(ctrl) {
          ctrl.enqueue(chunk);
        },
        cancel() {
          streams.cancelled += 1;
        },
      });
      return new Response(body, { status, headers: { "content-type": "text/plain" } });
    };
    const rx = receiver((path) => (path === "/endless-200" ? endless(200) : path === "/endless-500" ? endless(500) : null));
    const h = await harness({ WEBHOOKS_ALLOW_PRIVATE_URLS: "true", WEBHOOKS_MAX_RESPONSE_BYTES: "65536", WEBHOOKS_TIMEOUT_MS: "4000", WEBHOOKS_RETRY_SCHEDULE: "0,1h" }, own);
    const dispatcher = startDispatcher(h.deps);
    try {
      const p = await seedProject(h);
      const ok = await endpoint(h, p.slug, `http://127.0.0.1:${rx.port}/endless-200`);
      const bad = await endpoint(h, p.slug, `http://127.0.0.1:${rx.port}/endless-500`);
      await seedNode(h, p.slug, { slug: "n" });
      const [a] = await deliveries(h, p.slug, ok, 1);
      expect([a!.status_code, a!.error, a!.outcome]).toEqual([200, null, "succeeded"]);
      expect(a!.duration_ms).toBeLessThan(4000);
      const [b] = await deliveries(h, p.slug, bad, 1);
      expect([b!.status_code, b!.error, b!.outcome]).toEqual([500, "HTTP 500", "retrying"]);
      // The reading stopped: both answers were cut off.
      await waitFor(() => streams.cancelled === 2, { what: "both answers cut off" });
    } finally {
      await stop(h, dispatcher);
      rx.stop();
    }
  });
});

describe("network errors", () => {
  test("a receiver that closes the connection without answering gets the event again later (same webhook-id)", async () => {
    // A raw TCP receiver: the first connection is closed once the request is in, the next ones answered 200.
    const seen: { id: string; at: number }[] = [];
    const listener = Bun.listen<{ buf: string }>({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        open(s) {
          s.data = { buf: "" };
        },
        data(s, chunk) {
          s.data.buf += new TextDecoder().decode(chunk);
          const end = s.data.buf.indexOf("\r\n\r\n");
          const length = Number(/content-length: *(\d+)/i.exec(s.data.buf)?.[1] ?? 0);
          if (end < 0 || s.data.buf.length < end + 4 + length) return;
          seen.push({ id: /webhook-id: *(\S+)/i.exec(s.data.buf)?.[1] ?? "", at: Date.now() });
          if (seen.length > 1) s.write("HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
          s.end();
        },
      },
    });
    const h = await harness({ WEBHOOKS_ALLOW_PRIVATE_URLS: "true", WEBHOOKS_RETRY_SCHEDULE: "0,300ms" }, own);
    const dispatcher = startDispatcher(h.deps);
    try {
      const p = await seedProject(h);
      const id = await endpoint(h, p.slug, `http://127.0.0.1:${listener.port}/raw`);
      await seedNode(h, p.slug, { slug: "n" });
      const [first, second] = await deliveries(h, p.slug, id, 2);
      expect([first!.status_code, first!.outcome]).toEqual([null, "retrying"]);
      expect(first!.error).toStartWith("connection failed");
      expect(Date.parse(first!.next_attempt_at!) - Date.parse(first!.attempted_at)).toBeGreaterThanOrEqual(300);
      expect([second!.status_code, second!.outcome, second!.event_id]).toEqual([200, "succeeded", first!.event_id]);
      expect(seen).toHaveLength(2);
      expect(seen[1]!.id).toBe(seen[0]!.id);
      expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(300);
    } finally {
      await stop(h, dispatcher);
      listener.stop(true);
    }
  });
});
