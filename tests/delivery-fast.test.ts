// Hot reads answered before routing (the app's onRequest) must be the same answers the routes give.
import { expect, test } from "bun:test";
import { createDelivery } from "../src/delivery/routes";
import { listen } from "../src/server/serve-bun";
import { patchNode } from "./delivery.helpers";
import { harness, seedNode, seedProject, waitFor } from "./helpers";

test("a hot read answered before routing equals the routed answer, with the request id, 304s and its access-log line", async () => {
  const h = await harness();
  const p = await seedProject(h, { public_base_url: "https://x.example" });
  const col = await seedNode(h, p.slug, { slug: "blog", type: "collection" }, true);
  const post = await seedNode(h, p.slug, { slug: "post", parent_id: col.id, blocks: [{ type: "text", data: { text: "hi" } }] }, true);
  const urls = [`/api/p/${p.slug}/nodes/by-path/blog/post`, `/api/p/${p.id}/nodes/${post.id}?locale=fr`, `/api/p/${p.slug}/entries?collection=blog&sort=title`];
  const pick = (r: { status: number; headers: Headers; text: string }) => ({
    status: r.status,
    body: r.text,
    etag: r.headers.get("etag"),
    type: r.headers.get("content-type"),
    cache: r.headers.get("cache-control"),
    cors: r.headers.get("access-control-allow-origin"),
    vary: r.headers.get("vary"),
  });
  for (const url of urls) {
    const routed = await h.request("GET", url, { key: null, headers: { "x-request-id": "first" } });
    const hot = await h.request("GET", url, { key: null, headers: { "x-request-id": "second" } });
    expect(routed.status).toBe(200);
    expect(pick(hot)).toEqual(pick(routed));
    expect(hot.headers.get("x-request-id")).toBe("second");
    const notModified = await h.request("GET", url, { key: null, headers: { "if-none-match": hot.headers.get("etag")!, "x-request-id": "third" } });
    expect(notModified.status).toBe(304);
    expect(notModified.text).toBe("");
    expect(notModified.headers.get("x-request-id")).toBe("third");
    // Hot reads are access-logged like routed ones (after the response).
    const requestLines = () => h.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === "request");
    const logged = (id: string) => requestLines().some((l) => l.request_id === id);
    const lines = await waitFor(() => logged("second") && logged("third") && requestLines(), { what: "the log lines of the hot read and the 304" });
    expect(lines.find((l) => l.request_id === "second")?.status).toBe(200);
    expect(lines.find((l) => l.request_id === "third")?.status).toBe(304);
    h.logs.length = 0;
    const head = await h.app.handle(new Request(`http://localhost${url}`, { method: "HEAD" }));
    expect(head.status).toBe(200);
  }
  // A write (an edit, published) makes the next read take the routed way again and see the change.
  await patchNode(h, p.slug, post.id, { title: "Changed" });
  const fresh = await h.request("GET", urls[0]!, { key: null });
  expect(fresh.json.data.title).toBe("Changed");
});

test("the pre-routing path really answers hot reads, and declines misses, HEAD and encoded paths", async () => {
  const h = await harness();
  const p = await seedProject(h);
  await seedNode(h, p.slug, { slug: "page", blocks: [{ type: "text", data: { text: "words ".repeat(400) } }] }, true);
  const delivery = createDelivery(h.deps);
  const url = `http://localhost/api/p/${p.slug}/nodes/by-path/page`;
  expect(delivery.fastRead(new Request(url), "r0")).toBeNull(); // a miss takes the routed way
  const routed = await delivery.routes.handle(new Request(url));
  expect(routed.status).toBe(200);
  // Until this engine's LISTEN is up (PostgreSQL) a project's version is re-checked on read, which
  // is the routed way; once it is, the cached answer is served before routing.
  const fast = await waitFor(
    async () => {
      await delivery.routes.handle(new Request(url));
      return delivery.fastRead(new Request(url), "r1");
    },
    { timeout: 2000, interval: 20, what: "a hot read answered before routing" },
  );
  expect(await fast!.text()).toBe(await routed.text());
  expect(fast!.headers.get("x-request-id")).toBe("r1");
  expect(delivery.fastRead(new Request(url, { method: "HEAD" }), "r2")).toBeNull();
  // A client taking gzip (browsers, fetch): the first hit makes the gzip bytes; every later hit is
  // answered before routing too, the same bytes, validator and 304.
  const gzip = { "accept-encoding": "gzip, deflate, br" };
  const first = await delivery.routes.handle(new Request(url, { headers: gzip }));
  expect(first.headers.get("content-encoding")).toBe("gzip");
  const again = delivery.fastRead(new Request(url, { headers: gzip }), "r4");
  expect(again).not.toBeNull();
  expect(again!.headers.get("content-encoding")).toBe("gzip");
  expect(again!.headers.get("etag")).toBe(first.headers.get("etag"));
  expect(new Uint8Array(await again!.arrayBuffer())).toEqual(new Uint8Array(await first.arrayBuffer()));
  const revalidated = delivery.fastRead(new Request(url, { headers: { ...gzip, "if-none-match": first.headers.get("etag")! } }), "r5");
  expect(revalidated?.status).toBe(304);
  expect(delivery.fastRead(new Request(`http://localhost/api/p/${p.slug}/nodes/by-path/pa%67e`), "r3")).toBeNull();
});

test("the server's front answers hot reads before Elysia, identically, once logged; everything else reaches the app", async () => {
  const h = await harness();
  const p = await seedProject(h, { public_base_url: "https://x.example" });
  const col = await seedNode(h, p.slug, { slug: "blog", type: "collection" }, true);
  await seedNode(h, p.slug, { slug: "post", parent_id: col.id, blocks: [{ type: "text", data: { text: "hi" } }] }, true);
  const app = listen(h, { port: 0, hostname: "127.0.0.1" });
  const base = `http://127.0.0.1:${app.server!.port}`;
  try {
    const front = h.front;
    const path = `/api/p/${p.slug}/nodes/by-path/blog/post`;
    const miss = await fetch(base + path, { headers: { "x-request-id": "net-1" } });
    expect(miss.status).toBe(200);
    const routedBody = await miss.text();
    // Until the engine's LISTEN is up (PostgreSQL) a read re-checks the version: poll until the
    // front answers by itself (direct call, as Bun.serve calls it).
    const answersAlone = async (): Promise<Response | null> => {
      await fetch(base + path).then((r) => r.arrayBuffer());
      return front.answer(new Request(base + path, { headers: { "x-request-id": "direct" } }));
    };
    const direct = await waitFor(answersAlone, { timeout: 5000, interval: 20 }).catch(() => null); // judged just below
    expect(direct).not.toBeNull();
    expect(await direct!.text()).toBe(routedBody);
    expect(direct!.headers.get("x-request-id")).toBe("direct");
    h.logs.length = 0;
    const hot = await fetch(base + path, { headers: { "x-request-id": "net-2" } });
    expect(hot.status).toBe(200);
    expect(await hot.text()).toBe(routedBody);
    for (const k of ["etag", "content-type", "cache-control", "access-control-allow-origin", "access-control-expose-headers", "vary"]) expect(hot.headers.get(k)).toBe(miss.headers.get(k));
    expect(hot.headers.get("x-request-id")).toBe("net-2");
    const generated = await fetch(base + path);
    expect(generated.headers.get("x-request-id")).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const notModified = await fetch(base + path, { headers: { "if-none-match": hot.headers.get("etag")!, "x-request-id": "net-3" } });
    expect(notModified.status).toBe(304);
    expect(notModified.headers.get("x-request-id")).toBe("net-3");
    // Declined by the front (HEAD, other routes, a miss): the app answers, with one access line each.
    const head = await fetch(base + path, { method: "HEAD", headers: { "x-request-id": "net-4" } });
    expect(head.status).toBe(200);
    const health = await fetch(`${base}/healthz`, { headers: { "x-request-id": "net-5" } });
    expect(await health.json()).toEqual({ status: "ok" });
    const missing = await fetch(`${base}/api/p/${p.slug}/nodes/by-path/nothing`, { headers: { "x-request-id": "net-6" } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("x-request-id")).toBe("net-6");
    // A short Host (a compose service name): Elysia must still find the path.
    for (const host of ["x", "cms"]) {
      expect((await fetch(`${base}/healthz`, { headers: { host } })).status).toBe(200);
      expect(await (await fetch(base + path, { headers: { host, "accept-encoding": "gzip" } })).text()).toBe(routedBody);
    }
    const requests = () => h.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === "request");
    const ids = ["net-2", "net-3", "net-4", "net-5", "net-6"];
    const lines = await waitFor(() => ids.every((id) => requests().some((l) => l.request_id === id)) && requests(), { what: "the access lines of net-2…net-6" });
    for (const [id, status, logged] of [
      ["net-2", 200, path],
      ["net-3", 304, path],
      ["net-4", 200, path],
      ["net-5", 200, "/healthz"],
      ["net-6", 404, `/api/p/${p.slug}/nodes/by-path/nothing`],
    ] as const) {
      const mine = lines.filter((l) => l.request_id === id);
      expect(mine).toHaveLength(1);
      expect(mine[0]).toMatchObject({ level: "info", method: id === "net-4" ? "HEAD" : "GET", path: logged, status });
      expect(typeof mine[0].ms).toBe("number");
      expect(typeof mine[0].time).toBe("string");
    }
  } finally {
    await app.stop(true);
  }
});
