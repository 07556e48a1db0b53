// UUID v7 (RFC 9562): 48-bit millisecond timestamp, then random bits; time-ordered ids.
let lastMs = 0;
let seq = 0;

// Byte → two hex digits; a table lookup (request ids are minted on every request).
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

// Random bytes are drawn 4 KiB at a time (one getRandomValues call per 256 ids).
const POOL = new Uint8Array(4096);
let poolAt = POOL.length;

export function uuidv7(now: number = Date.now()): string {
  if (poolAt + 16 > POOL.length) {
    crypto.getRandomValues(POOL);
    poolAt = 0;
  }
  const r = poolAt; // this id's 16 random bytes: POOL[r .. r + 15]
  poolAt += 16;
  // Keep ids monotonic within one millisecond via a 12-bit counter in rand_a.
  if (now <= lastMs) {
    seq = (seq + 1) & 0xfff;
    if (seq === 0) lastMs += 1;
    now = lastMs;
  } else {
    lastMs = now;
    seq = ((POOL[r + 6]! & 0x0f) << 8) | POOL[r + 7]!;
    seq &= 0x7ff;
  }
  const t0 = Math.floor(now / 2 ** 32);
  return (
    HEX[(t0 >>> 8) & 0xff]! + HEX[t0 & 0xff]! + HEX[(now >>> 24) & 0xff]! + HEX[(now >>> 16) & 0xff]! + "-" +
    HEX[(now >>> 8) & 0xff]! + HEX[now & 0xff]! + "-" +
    HEX[0x70 | ((seq >>> 8) & 0x0f)]! + HEX[seq & 0xff]! + "-" +
    HEX[(POOL[r + 8]! & 0x3f) | 0x80]! + HEX[POOL[r + 9]!]! + "-" +
    HEX[POOL[r + 10]!]! + HEX[POOL[r + 11]!]! + HEX[POOL[r + 12]!]! + HEX[POOL[r + 13]!]! + HEX[POOL[r + 14]!]! + HEX[POOL[r + 15]!]!
  );
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string): boolean => UUID_RE.test(s);

export const SLUG_RE = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
export const isSlug = (s: string): boolean => SLUG_RE.test(s);
