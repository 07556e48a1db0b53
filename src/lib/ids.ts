// UUID v7 (RFC 9562): 48-bit millisecond timestamp, then random bits; time-ordered ids.
let lastMs = 0;
let seq = 0;

// Byte → two hex digits; a table lookup (request ids are minted on every request).
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

// Random bytes are drawn 4 KiB at a time (one getRandomValues call per 256 ids).
const POOL = new Uint8Array(4096);
let poolAt = POOL.length;

/** Two hex digits of byte `i` of the id (noUncheckedIndexedAccess: the table covers every byte). */
const hex = (byte: number): string => HEX[byte] ?? "00";
const rand = (i: number): number => POOL[i] ?? 0;

export function uuidv7(now: number = Date.now()): string {
  if (poolAt + 16 > POOL.length) {
    crypto.getRandomValues(POOL);
    poolAt = 0;
  }
  const r = poolAt; // this id's 16 random bytes: POOL[r .. r + 15], no per-id allocation
  poolAt += 16;
  // Keep ids monotonic within one millisecond via a 12-bit counter in rand_a.
  if (now <= lastMs) {
    seq = (seq + 1) & 0xfff;
    if (seq === 0) lastMs += 1;
    now = lastMs;
  } else {
    lastMs = now;
    seq = ((rand(r + 6) & 0x0f) << 8) | rand(r + 7);
    seq &= 0x7ff;
  }
  return `${timePrefix(now)}${hex(0x70 | ((seq >>> 8) & 0x0f))}${hex(seq & 0xff)}-${hex((rand(r + 8) & 0x3f) | 0x80)}${hex(rand(r + 9))}-${hex(rand(r + 10))}${hex(rand(r + 11))}${hex(
    rand(r + 12),
  )}${hex(rand(r + 13))}${hex(rand(r + 14))}${hex(rand(r + 15))}`;
}

// The timestamp's 12 hex digits and dashes, made once per millisecond (ids are minted per request).
let prefixMs = -1;
let prefix = "";
function timePrefix(now: number): string {
  if (now !== prefixMs) {
    const high = Math.floor(now / 2 ** 32);
    prefix = `${hex((high >>> 8) & 0xff)}${hex(high & 0xff)}${hex((now >>> 24) & 0xff)}${hex((now >>> 16) & 0xff)}-${hex((now >>> 8) & 0xff)}${hex(now & 0xff)}-`;
    prefixMs = now;
  }
  return prefix;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string): boolean => UUID_RE.test(s);

export const SLUG_RE = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
export const isSlug = (s: string): boolean => SLUG_RE.test(s);
