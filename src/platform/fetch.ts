// The pinned outbound fetch: a request to a URL whose host name the outbound guard (lib/ssrf)
// resolved and checked connects to the checked address, never to a second DNS answer (which a
// rebinding name can point anywhere between check and connect), while the Host header, TLS SNI
// and certificate verification keep the name. Redirects, timeouts and size caps are the caller's.
// Each runtime has its own means, chosen once:
// - Bun: its fetch to the address with the name in Host and `tls.serverName`;
// - Node and Deno: undici's own fetch through an Agent whose `connect.lookup` answers the checked
//   address. The runtime's fetch is not used there: Deno's ignores a `dispatcher`, and Node's own
//   undici need not match ours. Deno.createHttpClient cannot pin (no resolver option; its "tcp"
//   proxy transport speaks plain HTTP to an https URL).
import type { LookupAddress, LookupOptions } from "node:dns";
import type { Agent } from "undici";
import { pinnedTarget } from "../lib/ssrf";

type LookupCallback = (err: Error | null, address: string | LookupAddress[], family?: number) => void;

const runtime: "bun" | "undici" = "Bun" in globalThis ? "bun" : "undici";

/**
 * Fetches `url` connected to `address` (one the guard checked; null: as usual, for a literal IP
 * host). `base` is the app's fetch (tests inject theirs): Bun's path
 * and unpinned requests go through it; Node's and Deno's pinned requests use undici's fetch.
 */
export function pinnedFetch(url: URL, address: string | null, init: RequestInit, base: typeof fetch = globalThis.fetch): Promise<Response> {
  if (!address) return base(url, init);
  return runtime === "bun" ? bunPinned(url, address, init, base) : undiciPinned(url, address, init);
}

function bunPinned(url: URL, address: string, init: RequestInit, base: typeof fetch): Promise<Response> {
  const target = pinnedTarget(url.href, address);
  const headers = new Headers(init.headers);
  if (target.host) headers.set("host", target.host);
  // Bun's fetch sends the Host header given and verifies the certificate against tls.serverName.
  const tls = target.serverName ? { tls: { serverName: target.serverName } } : {};
  return base(target.url, { ...init, headers: Object.fromEntries(headers), ...tls } as RequestInit);
}

// One Agent (and connection pool) per checked address, so a connection opened for one address is
// never reused for a request pinned to another; the oldest are closed past the cap.
const MAX_AGENTS = 32;
const agents = new Map<string, Agent>();
let undici: Promise<typeof import("undici")> | null = null;

async function undiciPinned(url: URL, address: string, init: RequestInit): Promise<Response> {
  undici ??= import("undici");
  const { Agent, fetch } = await undici;
  let agent = agents.get(address);
  if (!agent) {
    const family = address.includes(":") ? 6 : 4;
    const lookup = (_host: string, opts: LookupOptions, cb: LookupCallback): void => {
      if (opts.all) cb(null, [{ address, family }]);
      else cb(null, address, family);
    };
    agent = new Agent({ connect: { lookup } });
    agents.set(address, agent);
    for (const [key, old] of agents) {
      if (agents.size <= MAX_AGENTS) break;
      agents.delete(key);
      void old.close().catch(() => {});
    }
  }
  // undici's fetch takes the web RequestInit plus `dispatcher`; its Response is a web Response.
  return (await fetch(url, { ...init, dispatcher: agent } as Parameters<typeof fetch>[1])) as unknown as Response;
}
