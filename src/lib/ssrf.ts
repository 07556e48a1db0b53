// Outbound URL guard for administrator-supplied addresses (AI provider base_url).
// Hosts are parsed, never pattern-matched: every IPv4 spelling inet_aton accepts (decimal,
// octal, hex, 1-4 parts) and every IPv6 form that embeds an IPv4 address is reduced to bytes
// before classification, so 0x7f.1, 2130706433, [::ffff:7f00:1] and [2002:7f00:1::] all read
// as loopback. Names are resolved and every address must pass.
import { lookup } from "node:dns/promises";

export type AddressClass = "public" | "private" | "forbidden";
export type Resolver = (host: string) => Promise<string[]>;

export interface UrlPolicy {
  /** http and private/loopback addresses allowed (self-hosted models). Metadata never is. */
  readonly allowPrivate: boolean;
  readonly resolve: Resolver;
  /** A name that does not resolve: refuse (call time) or accept (create time, checked again later). */
  readonly unresolvable: "refuse" | "accept";
  readonly timeoutMs?: number;
}

export type UrlCheck = { ok: true; url: URL; addresses: string[] } | { ok: false; reason: string };

type Range = readonly [prefix: readonly number[], bits: number, cls: Exclude<AddressClass, "public">];

// Link-local (which holds every cloud's instance metadata service) and known metadata
// addresses are refused whatever AI_ALLOW_PRIVATE_URLS says.
const V4_RANGES: readonly Range[] = [
  [[0], 8, "forbidden"],
  [[169, 254], 16, "forbidden"],
  [[100, 100, 100, 200], 32, "forbidden"], // Alibaba Cloud metadata
  [[168, 63, 129, 16], 32, "forbidden"], // Azure wireserver
  [[192, 0, 0, 192], 32, "forbidden"], // Oracle Cloud (classic) metadata
  [[224], 4, "forbidden"],
  [[255, 255, 255, 255], 32, "forbidden"],
  [[10], 8, "private"],
  [[100, 64], 10, "private"],
  [[127], 8, "private"],
  [[172, 16], 12, "private"],
  [[192, 0, 0], 24, "private"],
  [[192, 0, 2], 24, "private"],
  [[192, 88, 99], 24, "private"],
  [[192, 168], 16, "private"],
  [[198, 18], 15, "private"],
  [[198, 51, 100], 24, "private"],
  [[203, 0, 113], 24, "private"],
  [[240], 4, "private"],
];

const V6_RANGES: readonly Range[] = [
  [[], 128, "forbidden"], // :: (all zero)
  [[0xfd, 0x00, 0x0e, 0xc2], 32, "forbidden"], // AWS IMDS/DNS/NTP (fd00:ec2::254 …)
  [[0xfd, 0x20, 0x00, 0xce, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54], 128, "forbidden"], // GCP metadata (fd20:ce::254)
  [[0xfd, 0x00, 0x00, 0x42, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x42], 128, "forbidden"], // Scaleway metadata (fd00:42::42)
  [[0xfe, 0x80], 10, "forbidden"],
  [[0xff], 8, "forbidden"],
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], 128, "private"],
  [[0xfc], 7, "private"],
  [[0xfe, 0xc0], 10, "private"],
  [[0x20, 0x01, 0x0d, 0xb8], 32, "private"],
  [[0x01, 0x00, 0, 0, 0, 0, 0, 0], 64, "private"],
  [[0x20, 0x01, 0x00, 0x02, 0x00, 0x00], 48, "private"],
  [[0x20, 0x01, 0x00, 0x10], 28, "private"],
  [[0x00, 0x64, 0xff, 0x9b, 0x00, 0x01], 48, "private"],
];

const FORBIDDEN_NAMES = new Set(["metadata", "metadata.google.internal", "metadata.goog", "instance-data", "instance-data.ec2.internal"]);

const RANK: Record<AddressClass, number> = { public: 0, private: 1, forbidden: 2 };
const worst = (a: AddressClass, b: AddressClass): AddressClass => (RANK[a] >= RANK[b] ? a : b);

/** inet_aton / WHATWG IPv4 parsing: 1-4 parts, each decimal, 0-prefixed octal or 0x hex. */
export function parseIPv4(host: string): Uint8Array | null {
  let h = host;
  if (h.endsWith(".")) h = h.slice(0, -1);
  const parts = h.split(".");
  if (parts.length < 1 || parts.length > 4) return null;
  const nums: number[] = [];
  for (const p of parts) {
    let n: number;
    if (/^0x[0-9a-f]*$/i.test(p)) n = p.length === 2 ? 0 : parseInt(p.slice(2), 16);
    else if (/^0[0-7]+$/.test(p)) n = parseInt(p.slice(1), 8);
    else if (/^(0|[1-9][0-9]*)$/.test(p)) n = Number(p);
    else return null;
    if (!Number.isSafeInteger(n)) return null;
    nums.push(n);
  }
  const last = nums[nums.length - 1];
  if (last === undefined || nums.slice(0, -1).some((n) => n > 255) || last >= 256 ** (5 - nums.length)) return null;
  let value = last;
  for (const [i, n] of nums.slice(0, -1).entries()) value += n * 256 ** (3 - i);
  return new Uint8Array([(value / 2 ** 24) & 255, (value >>> 16) & 255, (value >>> 8) & 255, value & 255]);
}

/** RFC 4291 text forms including `::` and a trailing dotted quad; zone ids are refused (null). */
export function parseIPv6(host: string): Uint8Array | null {
  let h = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  if (h.includes("%") || !/^[0-9a-f:.]+$/i.test(h) || !h.includes(":")) return null;
  let tail: number[] = [];
  const dot = h.lastIndexOf(":");
  if (h.slice(dot + 1).includes(".")) {
    const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(h.slice(dot + 1));
    if (!m) return null;
    const q = m.slice(1).map(Number);
    if (q.some((n) => n > 255)) return null;
    const [q0 = 0, q1 = 0, q2 = 0, q3 = 0] = q; // the pattern has four groups
    tail = [(q0 << 8) | q1, (q2 << 8) | q3];
    h = `${h.slice(0, dot + 1)}0:0`;
  }
  const halves = h.split("::");
  if (halves.length > 2) return null;
  const parse = (s: string): number[] | null => {
    if (s === "") return [];
    const groups = s.split(":");
    const out: number[] = [];
    for (const g of groups) {
      if (!/^[0-9a-f]{1,4}$/i.test(g)) return null;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const head = parse(halves[0] ?? "");
  const rest = halves.length === 2 ? parse(halves[1] ?? "") : [];
  if (!head || !rest) return null;
  let groups: number[];
  if (halves.length === 2) {
    const fill = 8 - head.length - rest.length;
    if (fill < 1) return null;
    groups = [...head, ...new Array(fill).fill(0), ...rest];
  } else groups = head;
  if (groups.length !== 8) return null;
  if (tail.length === 2) groups.splice(6, 2, ...tail);
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    bytes[i * 2] = g >> 8;
    bytes[i * 2 + 1] = g & 255;
  });
  return bytes;
}

function inRange(bytes: Uint8Array, prefix: readonly number[], bits: number): boolean {
  if (bits === 128 && prefix.length === 0) return bytes.every((b) => b === 0);
  const full = new Uint8Array(bytes.length);
  full.set(prefix.slice(0, bytes.length));
  for (let i = 0; i < bits; i++) {
    const byte = i >> 3;
    const mask = 0x80 >> (i & 7);
    if (((bytes[byte] ?? 0) & mask) !== ((full[byte] ?? 0) & mask)) return false;
  }
  return true;
}

function classifyV4(b: Uint8Array): AddressClass {
  let cls: AddressClass = "public";
  for (const [prefix, bits, c] of V4_RANGES) if (inRange(b, prefix, bits)) cls = worst(cls, c);
  return cls;
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
  if (bytes.length === 4) return classifyV4(bytes);
  let cls: AddressClass = "public";
  for (const [prefix, bits, c] of V6_RANGES) if (inRange(bytes, prefix, bits)) cls = worst(cls, c);
  for (const v4 of embeddedIPv4(bytes)) cls = worst(cls, classifyV4(v4));
  return cls;
}

/** Bytes of an IP literal host (any spelling), or null for a name. */
function parseIpLiteral(host: string): Uint8Array | null {
  return parseIPv6(host) ?? parseIPv4(host);
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
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: "is not an absolute URL" };
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && policy.allowPrivate)) {
    return { ok: false, reason: policy.allowPrivate ? "must use http or https" : "must use https (http needs AI_ALLOW_PRIVATE_URLS=true)" };
  }
  if (url.username || url.password) return { ok: false, reason: "must not carry credentials" };
  const verdict = (cls: AddressClass): UrlCheck | null => {
    if (cls === "forbidden") return { ok: false, reason: "points to a link-local or cloud metadata address, which is never allowed" };
    if (cls === "private" && !policy.allowPrivate) return { ok: false, reason: "points to a private or loopback address (allowed only with AI_ALLOW_PRIVATE_URLS=true)" };
    return null;
  };
  const literal = classifyHost(url.hostname);
  if (literal === "invalid") return { ok: false, reason: "has an invalid host" };
  if (literal !== null) return verdict(literal) ?? { ok: true, url, addresses: [] };
  let addresses: string[];
  try {
    addresses = await withTimeout(policy.resolve(url.hostname.replace(/\.$/, "")), policy.timeoutMs ?? 5000);
  } catch {
    addresses = [];
  }
  if (addresses.length === 0) {
    return policy.unresolvable === "accept" ? { ok: true, url, addresses } : { ok: false, reason: "host name could not be resolved" };
  }
  let cls: AddressClass = "public";
  for (const a of addresses) {
    const b = parseIpLiteral(a);
    cls = worst(cls, b ? classifyAddress(b) : "forbidden");
  }
  return verdict(cls) ?? { ok: true, url, addresses };
}

/** Where a guarded request connects once its host passed the check. */
export interface PinnedTarget {
  /** The URL with its host replaced by the checked address (unchanged when there is none). */
  readonly url: string;
  /** The original authority, for the Host header; null when the URL is unchanged. */
  readonly host: string | null;
  /** The original name for TLS SNI and certificate verification (https only). */
  readonly serverName: string | null;
}

/**
 * Pins a request to one of the addresses the guard checked. Fetching the name instead would
 * resolve it again, and an answer that changed since the check (DNS rebinding, TTL 0) would
 * reach an address the guard never saw. The certificate is still verified against the name.
 */
export function pinnedTarget(raw: string, address: string | null | undefined): PinnedTarget {
  if (!address) return { url: raw, host: null, serverName: null };
  const u = new URL(raw);
  const host = u.host;
  const name = u.hostname.replace(/\.$/, "");
  u.hostname = address.includes(":") ? `[${address}]` : address;
  return { url: u.toString(), host, serverName: u.protocol === "https:" ? name : null };
}

export const systemResolver: Resolver = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("timeout")), ms);
    p.then(
      (v) => (clearTimeout(timer), resolve(v)),
      (e) => (clearTimeout(timer), reject(e)),
    );
  });
}
