// Issue 22 §5: a streamed answer (the delivery node list, the XML sitemap and its shards) whose
// database fails after the first page has gone out must not end as a complete-looking 200: the
// connection is dropped without chunked encoding's last chunk, so a client (and a CDN) sees an
// error, and the bytes received are not a document a JSON or XML parser accepts. The database
// really goes away between the pages (the PostgreSQL proxy cut, or the embedded database closed).
import { describe, expect, test } from "bun:test";
import net from "node:net";
import { nodes } from "../db/schema";
import { uuidv7 } from "../src/lib/ids";
import { listen } from "../src/server/serve-bun";
import { type OutageDb, outageDatabase, xmlProblem } from "./delivery.helpers";
import { harness, mirrorPublished, seedProject, type TestHarness, waitFor } from "./helpers";

const BASE = "https://site.example";
// Two pages of the node list (500 rows) and of the sitemap (1000 URLs).
const ROWS = 1200;

/** The raw bytes of a GET as the socket delivered them, and whether the server closed the connection. */
function rawGet(port: number, path: string, headers: Record<string, string> = {}): Promise<{ head: string; body: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => {
      const lines = Object.entries({ host: "site.example", ...headers }).map(([k, v]) => `${k}: ${v}\r\n`);
      socket.write(`GET ${path} HTTP/1.1\r\n${lines.join("")}\r\n`);
    });
    let buf = "";
    const done = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      const at = buf.indexOf("\r\n\r\n");
      resolve({ head: buf.slice(0, at), body: buf.slice(at + 4), closed });
    };
    // A kept-alive connection whose answer ended cleanly stays open: that is the cut 200 this test forbids.
    const timer = setTimeout(() => done(false), 5000);
    socket.on("data", (d) => {
      buf += d.toString("utf8");
    });
    socket.on("close", () => done(true));
    // Reset by the server (an aborted answer): as closed, with what had arrived.
    socket.on("error", (err: NodeJS.ErrnoException) => (err.code === "ECONNRESET" ? done(true) : reject(err)));
  });
}

/** The chunked body decoded, and whether it ended with the zero-length last chunk (a complete message). */
function dechunk(body: string): { text: string; complete: boolean } {
  let text = "";
  let rest = body;
  for (;;) {
    const eol = rest.indexOf("\r\n");
    if (eol < 0) return { text, complete: false };
    const size = Number.parseInt(rest.slice(0, eol), 16);
    if (size === 0) return { text, complete: true };
    text += rest.slice(eol + 2, eol + 2 + size);
    rest = rest.slice(eol + 2 + size + 2);
  }
}

/**
 * An app on a database of its own that really goes away (delivery.helpers' outageDatabase: the
 * PostgreSQL proxy cut, or the embedded database closed), holding ROWS published pages, served on
 * loopback.
 */
async function servedOverOutage(): Promise<{ h: TestHarness; outage: OutageDb; slug: string; port: number; stop(): Promise<void> }> {
  const outage = await outageDatabase();
  const h = await harness({ DELIVERY_VERSION_CHECK_MS: "60000" }, { db: outage.db, dbHandle: outage.handle });
  const p = await seedProject(h, { public_base_url: BASE });
  const now = new Date();
  const rows = Array.from({ length: ROWS }, (_, i) => {
    const slug = `page-${String(i).padStart(5, "0")}`;
    return { id: uuidv7(), projectId: p.id, slug, path: slug, type: "page", title: slug, status: "published" as const, publishedAt: now };
  });
  for (let i = 0; i < rows.length; i += 400) await outage.handle.db.insert(nodes).values(rows.slice(i, i + 400));
  await mirrorPublished(outage.handle.db, p.id);
  const app = listen(h, { port: 0, hostname: "127.0.0.1" });
  return {
    h,
    outage,
    slug: p.slug,
    port: app.server?.port ?? 0,
    async stop() {
      await app.server?.stop(true);
      await outage.drop();
    },
  };
}

describe("a streamed answer whose database goes away after its first page", () => {
  const cases = ["/nodes", "/sitemap.xml"].flatMap((path) => [
    [path, "a raw socket"],
    [path, "fetch"],
  ]);
  test.each(cases)("%s, read by %s: the connection is dropped without the last chunk; the body does not parse; the next read is whole", async (path, client) => {
    const s = await servedOverOutage();
    const { h, outage, port } = s;
    try {
      const url = `/api/p/${s.slug}${path}`;
      // Nothing read whole before the cut: a whole answer is cached, and a cached answer needs no database.
      // A 304 runs the planning queries and reads no page: their count, then one page allowed.
      expect((await fetch(`http://127.0.0.1:${port}${url}`, { headers: { "if-none-match": "*" } })).status).toBe(304);
      const c0 = outage.calls();
      expect((await fetch(`http://127.0.0.1:${port}${url}`, { headers: { "if-none-match": "*" } })).status).toBe(304);
      // The node list reads the hidden prefixes, then its first page; the sitemap's urlset its first page.
      outage.cutAfter(outage.calls() - c0 + (path === "/nodes" ? 2 : 1));
      if (client === "a raw socket") {
        const cut = await rawGet(port, url, { "accept-encoding": "identity" });
        expect(cut.head).toStartWith("HTTP/1.1 200");
        const { text: received, complete } = dechunk(cut.body);
        expect(received.length).toBeGreaterThan(1000); // the first page went out
        expect([complete, cut.closed]).toEqual([false, true]);
        if (path === "/nodes") expect(() => JSON.parse(received)).toThrow(SyntaxError);
        else expect(xmlProblem(received)).not.toBeNull();
      } else {
        // As a client would (gzip accepted, a browser's Origin): the body read fails rather than ending.
        const res = await fetch(`http://127.0.0.1:${port}${url}`, { headers: { origin: "https://www.example" } });
        expect(res.status).toBe(200);
        expect(
          await res.text().then(
            () => "ended",
            (e: unknown) => `failed: ${String(e)}`,
          ),
        ).toStartWith("failed");
      }
      expect(h.logs.some((l) => l.includes("delivery: stream failed"))).toBe(true);
      // Recovery: PostgreSQL's connections come back (a closed embedded database does not).
      if (!outage.restore) return;
      await outage.restore();
      const text = await waitFor(
        async () => {
          const r = await fetch(`http://127.0.0.1:${port}${url}`);
          return r.status === 200 ? r.text() : null;
        },
        { timeout: 10_000, what: "the database back" },
      );
      if (path === "/nodes") expect(JSON.parse(text).data).toHaveLength(ROWS);
      else expect([xmlProblem(text), text.split("<loc>").length - 1]).toEqual([null, ROWS]);
    } finally {
      await s.stop();
    }
  });
});
