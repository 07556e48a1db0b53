// Reversible secrets (provider API keys) sealed with AES-256-GCM through Web Crypto.
// Wire form: v1:<key id>:<nonce b64url>:<ciphertext+tag b64url>. The additional data binds a
// ciphertext to the row it belongs to, so a value copied into another row fails to open.

import { chmodSync, existsSync, linkSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { decodeBase64urlIgnorePadding, encodeBase64, encodeBase64urlNoPadding } from "@oslojs/encoding";

const KEY_ID_RE = /^[A-Za-z0-9_-]{1,32}$/;
const enc = new TextEncoder();
const dec = new TextDecoder("utf-8", { fatal: true });

export interface KeyRing {
  /** Id of the key new values are sealed under (the first entry). */
  readonly currentId: string;
  seal(plaintext: string, aad: string): Promise<string>;
  /** Throws SealError when the value is malformed, its key is unknown, or it does not authenticate. */
  open(sealed: string, aad: string): Promise<string>;
}

export class SealError extends Error {
  constructor(readonly reason: "malformed" | "unknown_key" | "not_authentic") {
    super(`sealed value cannot be opened: ${reason}`);
    this.name = "SealError";
  }
}

type KeyEntry = { readonly id: string; readonly raw: Uint8Array };

/** Parses `id:base64key` entries (standard or url-safe base64 of exactly 32 bytes). */
export function parseKeyEntries(specs: readonly string[]): KeyEntry[] {
  const out: KeyEntry[] = [];
  for (const spec of specs) {
    const i = spec.indexOf(":");
    const id = i > 0 ? spec.slice(0, i) : "";
    if (!KEY_ID_RE.test(id)) throw new Error("secret key entries must be id:base64key with an id of [A-Za-z0-9_-]{1,32}");
    const raw = fromB64(spec.slice(i + 1).trim());
    if (raw?.length !== 32) throw new Error(`secret key ${id} must be base64 of 32 bytes`);
    if (out.some((e) => e.id === id)) throw new Error(`secret key id ${id} appears twice`);
    out.push({ id, raw });
  }
  if (out.length === 0) throw new Error("the key ring is empty");
  return out;
}

export async function createKeyRing(entries: readonly KeyEntry[]): Promise<KeyRing> {
  const [first] = entries;
  if (!first) throw new Error("the key ring is empty");
  const keys = new Map<string, CryptoKey>();
  for (const e of entries) keys.set(e.id, await crypto.subtle.importKey("raw", e.raw as BufferSource, { name: "AES-GCM" }, false, ["encrypt", "decrypt"]));
  const currentId = first.id;
  const currentKey = keys.get(currentId);
  if (!currentKey) throw new Error("the key ring lost its current key");
  return {
    currentId,
    async seal(plaintext, aad) {
      const nonce = crypto.getRandomValues(new Uint8Array(12));
      const ct = await crypto.subtle.encrypt({ name: "AES-GCM", iv: nonce, additionalData: enc.encode(aad), tagLength: 128 }, currentKey, enc.encode(plaintext));
      return `v1:${currentId}:${encodeBase64urlNoPadding(nonce)}:${encodeBase64urlNoPadding(new Uint8Array(ct))}`;
    },
    async open(sealed, aad) {
      const parts = sealed.split(":");
      if (parts.length !== 4 || parts[0] !== "v1") throw new SealError("malformed");
      const [, keyId = "", nonceText = "", ctText = ""] = parts;
      const key = keys.get(keyId);
      if (!key) throw new SealError("unknown_key");
      const nonce = fromB64(nonceText);
      const ct = fromB64(ctText);
      if (nonce?.length !== 12 || !ct || ct.length < 16) throw new SealError("malformed");
      const pt = await crypto.subtle.decrypt({ name: "AES-GCM", iv: nonce as BufferSource, additionalData: enc.encode(aad), tagLength: 128 }, key, ct as BufferSource).catch(() => {
        throw new SealError("not_authentic");
      });
      try {
        return dec.decode(pt);
      } catch {
        throw new SealError("malformed");
      }
    },
  };
}

/** The key id a sealed value names, or null when it is not in the v1 form. */
export function sealedKeyId(sealed: string): string | null {
  const parts = sealed.split(":");
  return parts.length === 4 && parts[0] === "v1" ? (parts[1] ?? null) : null;
}

/** A fresh `id:base64key` entry; the id carries the creation date so rotations sort and read well. */
export function generateKeyEntry(now: Date = new Date()): string {
  const raw = crypto.getRandomValues(new Uint8Array(32));
  const id = `k${now.toISOString().slice(0, 10).replace(/-/g, "")}${encodeBase64urlNoPadding(crypto.getRandomValues(new Uint8Array(3)))}`;
  return `${id}:${encodeBase64(raw)}`;
}

/**
 * Reads the key file (one `id:base64key` per line, first = current), creating it with one fresh
 * key and mode 0600 when absent. `prependNew` adds a fresh current key (rotation).
 */
export function loadKeyFile(path: string, opts: { prependNew?: boolean } = {}): { entries: string[]; created: boolean } {
  let created = false;
  if (!existsSync(path)) {
    mkdirSync(dirname(path), { recursive: true });
    // Published complete or not at all: a second process starting at once either wins the
    // link (and its key is the one) or reads the whole file, never an empty one.
    created = publishKeyFile(path, `${generateKeyEntry()}\n`, "create");
  }
  let entries = readFileSync(path, "utf8")
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
  if (opts.prependNew) {
    entries = [generateKeyEntry(), ...entries];
    // Rename over the old file: a crash mid-write must not leave a truncated key file, which
    // would make every sealed provider key unreadable.
    publishKeyFile(path, `${entries.join("\n")}\n`, "replace");
  }
  chmodSync(path, 0o600);
  return { entries, created };
}

/**
 * Writes a key file next to its final path (mode 0600, synced), then links it into place
 * ("create": false when the file already exists) or renames it over the old one ("replace").
 */
function publishKeyFile(path: string, content: string, mode: "create" | "replace"): boolean {
  const tmp = `${path}.${process.pid}.${encodeBase64urlNoPadding(crypto.getRandomValues(new Uint8Array(6)))}.tmp`;
  writeFileSync(tmp, content, { mode: 0o600, flag: "wx", flush: true });
  try {
    if (mode === "replace") renameSync(tmp, path);
    else {
      try {
        linkSync(tmp, path);
      } catch (err) {
        // File systems without hard links: exclusive create, the small window accepted.
        if (!["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS"].includes(errorCode(err))) throw err;
        writeFileSync(path, content, { mode: 0o600, flag: "wx" });
      }
    }
    return true;
  } catch (err) {
    if (mode === "create" && errorCode(err) === "EEXIST") return false;
    throw err;
  } finally {
    rmSync(tmp, { force: true });
  }
}

const errorCode = (err: unknown): string => String((err as { code?: string }).code);

/** Standard or url-safe base64, padded or not (key entries are written either way). */
function fromB64(s: string): Uint8Array | null {
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(s)) return null;
  try {
    return decodeBase64urlIgnorePadding(s.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, ""));
  } catch {
    return null;
  }
}
