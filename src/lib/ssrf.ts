// Outbound URL guard for administrator-supplied addresses (AI provider base_url).
// Hosts are parsed (ipaddr.js), never pattern-matched: every IPv4 spelling inet_aton accepts
// (decimal, octal, hex, 1-4 parts) and every IPv6 form that embeds an IPv4 address is reduced to bytes
// before classification, so 0x7f.1, 2130706433, [::ffff:7f00:1] and [2002:7f00:1::] all read
// as loopback. Names are resolved and every address must pass.
import { lookup } from "node:dns/promises";
import ipaddr from "ipaddr.js";
import { withTimeout } from "./timeout";

export type AddressClass = "public" | "private" | "forbidden";
export type Resolver = (host: string) => Promise<string[]>;

export interface UrlPolicy {
  /** http and private/loopback addresses allowed (self-hosted models). Metadata never is. */
  readonly allowPrivate: boolean;
  readonly resolve: Resolver;
  /** A name that does not resolve: refuse (call time) or accept (create time, checked again later). */
  readonly unresolvable: "refuse" | "accept";
  readonly timeoutMs?: number;
  /** The setting that allows private addresses, named in refusals (AI_ALLOW_PRIVATE_URLS by default). */
  readonly setting?: string;
}

export type UrlCheck = { ok: true; url: URL; addresses: string[] } | { ok: false; reason: string };

// Link-local (which holds every cloud's instance metadata service) and known metadata
// addresses are refused whatever AI_ALLOW_PRIVATE_URLS says.
const FORBIDDEN = cidrs(
  "0.0.0.0/8 ::/128", // "this network", unspecified
  "169.254.0.0/16 fe80::/10", // link-local
  "224.0.0.0/4 255.255.255.255/32 ff00::/8", // multicast, broadcast
  "100.100.100.200/32 168.63.129.16/32 192.0.0.192/32", // metadata: Alibaba Cloud, Azure wireserver, Oracle Cloud (classic)
  "fd00:ec2::/32 fd20:ce::254/128 fd00:42::42/128", // metadata: AWS IMDS/DNS/NTP (fd00:ec2::254 …), GCP, Scaleway
);

const PRIVATE = cidrs(
  "10.0.0.0/8 172.16.0.0/12 192.168.0.0/16 fc00::/7 fec0::/10", // RFC 1918, unique local, site-local
  "127.0.0.0/8 ::1/128", // loopback
  "100.64.0.0/10", // shared address space (carrier-grade NAT)
  "192.0.2.0/24 198.51.100.0/24 203.0.113.0/24 2001:db8::/32", // documentation
  "198.18.0.0/15 2001:2::/48", // benchmarking
  "192.0.0.0/24 192.88.99.0/24 240.0.0.0/4 100::/64 2001:10::/28 64:ff9b:1::/48", // protocol assignments, 6to4 relay, reserved, discard-only, ORCHID, local-use NAT64
);

const FORBIDDEN_NAMES = new Set(["metadata", "metadata.google.internal", "metadata.goog", "instance-data", "instance-data.ec2.internal"]);

const RANK: Record<AddressClass, number> = { public: 0, private: 1, forbidden: 2 };
const worst = (a: AddressClass, b: AddressClass): AddressClass => (RANK[a] >= RANK[b] ? a : b);

/** Ranges in CIDR notation, several to a string (separated by spaces). */
function cidrs(...groups: string[]): [ipaddr.IPv4 | ipaddr.IPv6, number][] {
  return groups.flatMap((g) => g.split(" ")).map((c) => ipaddr.parseCIDR(c));
}

const within = (addr: ipaddr.IPv4 | ipaddr.IPv6, ranges: readonly [ipaddr.IPv4 | ipaddr.IPv6, number][]): boolean => ranges.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net, bits));

/** inet_aton / WHATWG IPv4 spellings: 1-4 parts, each decimal, 0-prefixed octal or 0x hex; one trailing dot. */
export function parseIPv4(host: string): Uint8Array | null {
  const h = host.replace(/\.$/, "");
  return ipaddr.IPv4.isValid(h) ? Uint8Array.from(ipaddr.IPv4.parse(h).toByteArray()) : null;
}

/** A dotted-quad tail as RFC 4291 writes it: four decimal octets, no leading zeros (ipaddr.js also reads `0177` there, as 177). */
const DOTTED_TAIL = /:(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/** RFC 4291 text forms including `::` and a trailing dotted quad, bracketed or not; zone ids are refused (null). */
export function parseIPv6(host: string): Uint8Array | null {
  const h = host.replace(/^\[(.*)\]$/, "$1");
  if (!/^[0-9a-f:.]+$/i.test(h) || (h.includes(".") && !DOTTED_TAIL.test(h))) return null;
  return ipaddr.IPv6.isValid(h) ? Uint8Array.from(ipaddr.IPv6.parse(h).toByteArray()) : null;
}

/** IPv4 addresses carried inside an IPv6 address (mapped, compatible, translated, NAT64, 6to4, Teredo, ISATAP). */
export function embeddedIPv4(b: Uint8Array): Uint8Array[] {
  const zero = (from: number, to: number): boolean => b.slice(from, to).every((x) => x === 0);
  const last4 = b.slice(12, 16);
  const out: Uint8Array[] = [];
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff)
    out.push(last4); // ::ffff:a.b.c.d
  else if (zero(0, 12) && !(zero(12, 15) && (b[15] ?? 0) <= 1)) out.push(last4); // ::a.b.c.d (compatible), not :: or ::1
  if (zero(0, 8) && b[8] === 0xff && b[9] === 0xff && b[10] === 0 && b[11] === 0) out.push(last4); // ::ffff:0:a.b.c.d
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && (zero(4, 12) || (b[4] === 0 && b[5] === 1))) out.push(last4); // NAT64
  if (b[0] === 0x20 && b[1] === 0x02) out.push(b.slice(2, 6)); // 6to4
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0 && b[3] === 0) {
    out.push(b.slice(4, 8)); // Teredo server
    out.push(last4.map((x) => x ^ 0xff)); // Teredo client (obfuscated)
  }
  if ((b[8] === 0x00 || b[8] === 0x02) && b[9] === 0x00 && b[10] === 0x5e && b[11] === 0xfe) out.push(last4); // ISATAP
  return out;
}

export function classifyAddress(bytes: Uint8Array): AddressClass {
  const addr = ipaddr.fromByteArray(Array.from(bytes));
  const own = within(addr, FORBIDDEN) ? "forbidden" : within(addr, PRIVATE) ? "private" : "public";
  return bytes.length === 4 ? own : embeddedIPv4(bytes).map(classifyAddress).reduce(worst, own);
}

/** Class of a host without DNS: literals and reserved names; null when the name must be resolved. */
export function classifyHost(host: string): AddressClass | "invalid" | null {
  const h = host.toLowerCase().replace(/\.$/, "");
  if (h.startsWith("[") || h.includes(":")) {
    const b = parseIPv6(h);
    return b ? classifyAddress(b) : "invalid";
  }
  const v4 = parseIPv4(h);
  if (v4) return classifyAddress(v4);
  // Looks numeric but is not a valid address: never hand it to a resolver.
  if (/^[0-9.]+$/.test(h) || /^(0x[0-9a-f]*\.?){1,4}$/i.test(h)) return "invalid";
  if (FORBIDDEN_NAMES.has(h)) return "forbidden";
  if (h === "localhost" || h.endsWith(".localhost")) return "private";
  return null;
}

export async function checkOutboundUrl(raw: string, policy: UrlPolicy): Promise<UrlCheck> {
  const url = URL.parse(raw);
  if (!url) return { ok: false, reason: "is not an absolute URL" };
  const setting = policy.setting ?? "AI_ALLOW_PRIVATE_URLS";
  if (url.protocol !== "https:" && !(url.protocol === "http:" && policy.allowPrivate)) {
    return { ok: false, reason: policy.allowPrivate ? "must use http or https" : `must use https (http needs ${setting}=true)` };
  }
  if (url.username || url.password) return { ok: false, reason: "must not carry credentials" };
  const verdict = (cls: AddressClass): UrlCheck | null => {
    if (cls === "forbidden") return { ok: false, reason: "points to a link-local or cloud metadata address, which is never allowed" };
    if (cls === "private" && !policy.allowPrivate) return { ok: false, reason: `points to a private or loopback address (allowed only with ${setting}=true)` };
    return null;
  };
  const literal = classifyHost(url.hostname);
  if (literal === "invalid") return { ok: false, reason: "has an invalid host" };
  if (literal !== null) return verdict(literal) ?? { ok: true, url, addresses: [] };
  const addresses = await withTimeout(() => policy.resolve(url.hostname.replace(/\.$/, "")), policy.timeoutMs ?? 5000).catch((): string[] => []);
  if (addresses.length === 0) {
    return policy.unresolvable === "accept" ? { ok: true, url, addresses } : { ok: false, reason: "host name could not be resolved" };
  }
  const parsed = addresses.map((a) => parseIPv6(a) ?? parseIPv4(a));
  return verdict(parsed.reduce<AddressClass>((cls, b) => worst(cls, b ? classifyAddress(b) : "forbidden"), "public")) ?? { ok: true, url, addresses };
}

/**
 * Pins a request to one of the addresses the guard checked. Fetching the name instead would
 * resolve it again, and an answer that changed since the check (DNS rebinding, TTL 0) would
 * reach an address the guard never saw. The certificate is still verified against the name.
 * Answers the URL with its host replaced by the address (unchanged when there is none), the
 * original authority for the Host header (null when unchanged) and the original name for TLS
 * SNI and certificate verification (https only). Bun's fetch takes these as they are; the other
 * runtimes pin by a lookup instead (src/platform/fetch.ts chooses).
 */
export function pinnedTarget(raw: string, address: string | null | undefined): { url: string; host: string | null; serverName: string | null } {
  if (!address) return { url: raw, host: null, serverName: null };
  const u = new URL(raw);
  const host = u.host;
  const name = u.hostname.replace(/\.$/, "");
  u.hostname = address.includes(":") ? `[${address}]` : address;
  return { url: u.toString(), host, serverName: u.protocol === "https:" ? name : null };
}

export const systemResolver: Resolver = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
