// Webhooks (issue 36 §5): one tenant whose receivers stall does not hold the dispatcher. Project A
// has 24 endpoints on a loopback receiver that accepts every connection and never answers (each
// attempt runs to WEBHOOKS_TIMEOUT_MS, its default 15 s); project B's event still arrives at once, and A
// never has more than WEBHOOKS_PROJECT_CONCURRENCY requests open at a time.
import { afterAll, expect, test } from "bun:test";
import { createServer, type Socket } from "node:net";
import { startDispatcher } from "../src/webhooks/dispatcher";
import { harness, seedNode, seedProject, waitFor } from "./helpers";
import { startReceiver } from "./webhooks.helpers";

const TIMEOUT_MS = 15_000;
const ENV = {
  WEBHOOKS_ALLOW_PRIVATE_URLS: "true",
  WEBHOOKS_TIMEOUT_MS: String(TIMEOUT_MS),
  WEBHOOKS_POLL_MS: "200",
  WEBHOOKS_CONCURRENCY: "8",
  WEBHOOKS_PROJECT_CONCURRENCY: "4",
  WEBHOOKS_MAX_ENDPOINTS: "24",
};

/** A receiver that accepts, reads, and never answers: every attempt to it lasts the whole send timeout. */
function startStalled(): { url(path: string): string; open(): number; maxOpen(): number; accepted(): number; stop(): void } {
  const sockets = new Set<Socket>();
  let maxOpen = 0;
  let accepted = 0;
  const server = createServer((socket) => {
    accepted++;
    sockets.add(socket);
    maxOpen = Math.max(maxOpen, sockets.size);
    socket.on("data", () => {});
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
  }).listen(0, "127.0.0.1");
  const port = () => {
    const a = server.address();
    return typeof a === "object" && a ? a.port : 0;
  };
  return {
    url: (path) => `http://127.0.0.1:${port()}${path}`,
    open: () => sockets.size,
    maxOpen: () => maxOpen,
    accepted: () => accepted,
    stop: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

const stalled = startStalled();
const receiver = startReceiver();
const h = await harness(ENV);
const dispatcher = startDispatcher(h.deps);
const projects: string[] = [];
afterAll(async () => {
  // The stalled receiver closes first (the attempts open to it end at once), and the projects'
  // endpoints go: no later dispatcher in this run sends to them.
  stalled.stop();
  for (const slug of projects) {
    const list = await h.request("GET", `/admin/p/${slug}/webhooks`);
    for (const w of list.json?.data ?? []) await h.request("DELETE", `/admin/p/${slug}/webhooks/${w.id}`);
  }
  await dispatcher.stop();
  receiver.stop();
});

test("a project whose 24 receivers stall holds at most its share; another project's event arrives at once", { timeout: 90_000 }, async () => {
  const a = await seedProject(h);
  const b = await seedProject(h);
  projects.push(a.slug, b.slug);
  for (let i = 0; i < 24; i++) {
    const res = await h.request("POST", `/admin/p/${a.slug}/webhooks`, { body: { url: stalled.url(`/a${i}`), events: ["*"] } });
    expect(res.status).toBe(201);
  }
  const hook = await h.request("POST", `/admin/p/${b.slug}/webhooks`, { body: { url: receiver.url("/b"), events: ["node.created"] } });
  expect(hook.status).toBe(201);
  // A's writes: 3 events for each of its 24 endpoints, every attempt held for the whole timeout.
  for (let i = 0; i < 3; i++) await seedNode(h, a.slug, { slug: `a${i}` });
  await waitFor(() => stalled.open() >= 4, { timeout: 5000, what: "A's attempts to be open" });

  const started = Date.now();
  await seedNode(h, b.slug, { slug: "b" });
  const [got] = await waitFor(() => receiver.on("/b").length > 0 && receiver.on("/b"), { timeout: 4 * TIMEOUT_MS, what: "B's event" });
  const lagMs = got!.at - started;
  // Before the fix B's event waited for A's attempts to time out (one timeout or more); now it takes no slot of A's.
  expect({ lag_ms: lagMs, under: lagMs < 3000 }).toMatchObject({ under: true });
  expect(JSON.parse(got!.body)).toMatchObject({ type: "node.created", data: { project: { slug: b.slug } } });
  // A had its share of requests open at once, and never more.
  expect(stalled.maxOpen()).toBe(4);
  expect(stalled.open()).toBeLessThanOrEqual(4);
});
