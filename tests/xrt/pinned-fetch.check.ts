// The pinned outbound fetch (src/platform/fetch.ts) and the URL guard on whichever runtime runs this
// file: Bun, Node (with tsx) or Deno. tests/pinned-fetch.test.ts runs it under each one and reads the
// one JSON line it prints: every case name with "ok" or what went wrong. Loopback servers only.
// Bun trusts the test CA through NODE_EXTRA_CA_CERTS (set by the runner); Node and Deno add it here.
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import tls from "node:tls";
import { checkOutboundUrl, type UrlPolicy } from "../../src/lib/ssrf";
import { readCappedText } from "../../src/lib/stream";
import { pinnedFetch } from "../../src/platform/fetch";
import { PIN_CERT, PIN_KEY } from "./pin-cert";

const isBun = "Bun" in globalThis;
if (!isBun) tls.setDefaultCACertificates([...tls.getCACertificates("default"), PIN_CERT]);

interface Seen {
  server: string;
  path: string;
  host: string;
  body: string;
  headers: http.IncomingHttpHeaders;
}
const seen: Seen[] = [];

function handler(server: string): http.RequestListener {
  return (req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString();
    });
    req.on("end", () => {
      seen.push({ server, path: req.url ?? "", host: req.headers.host ?? "", body, headers: req.headers });
      if (req.url === "/hang") return; // never answers
      if (req.url === "/redirect") {
        res.writeHead(302, { location: "/landed" }).end();
        return;
      }
      if (req.url === "/big") {
        res.end("x".repeat(1024 * 1024));
        return;
      }
      res.end(`${server} ${req.headers.host}`);
    });
  };
}

async function listen(server: http.Server, host: string, port = 0): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

// L is what "localhost" resolves to; C (same port, 127.0.0.2) stands for the address the guard checked.
const servers = [http.createServer(handler("L")), http.createServer(handler("C")), https.createServer({ cert: PIN_CERT, key: PIN_KEY }, handler("S")), http.createServer(handler("six"))];
const [L, C, S, SIX] = servers as [http.Server, http.Server, https.Server, http.Server];
const port = await listen(L, "127.0.0.1");
await listen(C, "127.0.0.2", port);
const tlsPort = await listen(S, "127.0.0.1");
const v6Port = await listen(SIX, "::1");

const baseCalls: string[] = [];
const base = ((input: string | URL | Request, init?: RequestInit) => {
  baseCalls.push(String(input));
  return fetch(input, init);
}) as typeof fetch;
const pinned = (url: string, address: string | null, init: RequestInit = {}): Promise<Response> =>
  pinnedFetch(new URL(url), address, { redirect: "manual", signal: AbortSignal.timeout(3000), ...init }, base);
const seenAt = (path: string): Seen[] => seen.filter((s) => s.path === path);

function expectEq(actual: unknown, wanted: unknown, what: string): void {
  if (JSON.stringify(actual) !== JSON.stringify(wanted)) throw new Error(`${what}: ${JSON.stringify(actual)} (wanted ${JSON.stringify(wanted)})`);
}
async function rejects(p: Promise<unknown>, what: string): Promise<void> {
  const outcome = await p.then(
    () => "resolved",
    () => "rejected",
  );
  expectEq(outcome, "rejected", what);
}

const cases: Record<string, () => Promise<unknown>> = {
  // Which means the module chose: Bun's fetch (through the app's fetch) or undici's.
  path: async () => {
    baseCalls.length = 0;
    await (await pinned(`http://vendor.pin.test:${port}/path`, "127.0.0.1")).text();
    return baseCalls.length === 1 && baseCalls[0] === `http://127.0.0.1:${port}/path` ? "bun-fetch" : baseCalls.length === 0 ? "undici" : `unexpected: ${baseCalls}`;
  },
  "a name the guard resolved to a public address, resolving to loopback at connect time, is not reached on loopback": async () => {
    const policy: UrlPolicy = { allowPrivate: false, unresolvable: "refuse", resolve: async () => ["93.184.216.34"] };
    const check = await checkOutboundUrl("https://rebind.pin.test/v1", policy);
    if (!check.ok) throw new Error(`guard refused the public answer: ${check.reason}`);
    expectEq(check.addresses, ["93.184.216.34"], "checked addresses");
    // localhost is what a rebinding name answers at connect time; the plain fetch goes there.
    expectEq(await (await fetch(`http://localhost:${port}/control`)).text(), `L localhost:${port}`, "unpinned control");
    await rejects(pinned(`http://localhost:${port}/rebind`, check.addresses[0] ?? null, { signal: AbortSignal.timeout(1500) }), "pinned to the public address");
    expectEq(seenAt("/rebind").length, 0, "requests that reached loopback");
  },
  "the connection goes to the checked address, not the name's own": async () => {
    const res = await pinned(`http://localhost:${port}/pin`, "127.0.0.2");
    expectEq(await res.text(), `C localhost:${port}`, "answer");
    expectEq(
      seenAt("/pin").map((s) => s.server),
      ["C"],
      "servers reached",
    );
  },
  "a name no DNS knows is reached through its checked address, Host kept": async () => {
    expectEq(await (await pinned(`http://vendor.pin.test:${port}/nodns`, "127.0.0.1")).text(), `L vendor.pin.test:${port}`, "answer");
  },
  "IPv6 checked address": async () => {
    expectEq(await (await pinned(`http://v6.pin.test:${v6Port}/v6`, "::1")).text(), `six v6.pin.test:${v6Port}`, "answer");
  },
  "no address (a literal IP host): connects as written, through the app's fetch": async () => {
    baseCalls.length = 0;
    expectEq(await (await pinned(`http://127.0.0.1:${port}/literal`, null)).text(), `L 127.0.0.1:${port}`, "answer");
    expectEq(baseCalls, [`http://127.0.0.1:${port}/literal`], "base fetch calls");
  },
  "https: the certificate is verified against the name": async () => {
    const res = await pinned(`https://vendor.pin.test:${tlsPort}/tls`, "127.0.0.1");
    expectEq([res.status, await res.text()], [200, `S vendor.pin.test:${tlsPort}`], "answer");
  },
  "https: a certificate for another name is refused": async () => {
    await rejects(pinned(`https://other.pin.test:${tlsPort}/wrong`, "127.0.0.1"), "other.pin.test");
    expectEq(seenAt("/wrong").length, 0, "requests that reached the server");
  },
  "POST: method, headers and body arrive": async () => {
    const res = await pinned(`http://vendor.pin.test:${port}/post`, "127.0.0.1", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer sk-xrt" },
      body: JSON.stringify({ q: "Hello" }),
    });
    expectEq(res.status, 200, "status");
    const [s] = seenAt("/post");
    expectEq([s?.body, s?.headers["content-type"], s?.headers.authorization, s?.host], ['{"q":"Hello"}', "application/json", "Bearer sk-xrt", `vendor.pin.test:${port}`], "request seen");
  },
  "redirects are not followed": async () => {
    const res = await pinned(`http://vendor.pin.test:${port}/redirect`, "127.0.0.1");
    expectEq([res.status, res.headers.get("location")], [302, "/landed"], "answer");
    await res.body?.cancel();
    expectEq(seenAt("/landed").length, 0, "redirect target requests");
  },
  "the caller's signal bounds the time": async () => {
    const started = performance.now();
    await rejects(pinned(`http://vendor.pin.test:${port}/hang`, "127.0.0.1", { signal: AbortSignal.timeout(300) }), "hanging request");
    const ms = performance.now() - started;
    if (ms > 2000) throw new Error(`aborted after ${Math.round(ms)} ms`);
  },
  "the caller's size cap reads the body stream": async () => {
    expectEq(await readCappedText((await pinned(`http://vendor.pin.test:${port}/big`, "127.0.0.1")).body, 64 * 1024), null, "capped read");
  },
  "the guard refuses private, loopback, link-local, mapped and encoded addresses and names resolving to them": async () => {
    const dns: Record<string, string[]> = {
      "loop.pin.test": ["127.0.0.1"],
      "ten.pin.test": ["10.0.0.5"],
      "meta.pin.test": ["169.254.169.254"],
      "mapped.pin.test": ["::ffff:127.0.0.1"],
      "v6loop.pin.test": ["::1"],
      "mixed.pin.test": ["93.184.216.34", "192.168.1.1"],
    };
    const policy = (allowPrivate: boolean): UrlPolicy => ({ allowPrivate, unresolvable: "refuse", resolve: async (h) => dns[h] ?? [] });
    const refusedByDefault = [
      "https://127.0.0.1/",
      "https://10.0.0.8/",
      "https://192.168.1.1/",
      "https://169.254.169.254/latest",
      "https://[::1]/",
      "https://[::ffff:127.0.0.1]/",
      "https://[::ffff:7f00:1]/",
      "https://[fe80::1]/",
      "https://[2002:7f00:1::]/",
      "https://2130706433/",
      "https://0x7f.0.0.1/",
      "https://0177.0.0.1/",
      "https://127.1/",
      "https://localhost/",
      "https://metadata.google.internal/",
      ...Object.keys(dns).map((h) => `https://${h}/`),
      "http://93.184.216.34/",
    ];
    for (const url of refusedByDefault) {
      if ((await checkOutboundUrl(url, policy(false))).ok) throw new Error(`${url} was allowed`);
    }
    // AI_ALLOW_PRIVATE_URLS never opens link-local and metadata addresses.
    for (const url of ["http://169.254.169.254/", "http://[::ffff:a9fe:a9fe]/", "http://0xa9fea9fe/", "http://meta.pin.test/", "http://[fd00:ec2::254]/"]) {
      if ((await checkOutboundUrl(url, policy(true))).ok) throw new Error(`${url} was allowed with allowPrivate`);
    }
  },
};

const results: Record<string, unknown> = {};
for (const [name, run] of Object.entries(cases)) {
  results[name] = await run().then(
    (v) => v ?? "ok",
    (err: unknown) => `failed: ${err instanceof Error ? err.message : String(err)}`,
  );
}
console.log(JSON.stringify(results));
for (const s of servers) s.closeAllConnections?.();
process.exit(0);
