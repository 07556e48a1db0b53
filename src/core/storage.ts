// The media storage interface: objects keyed by content hash, each original with its
// rendered variants beside it under one prefix (`<hash>/`), so removing an item's bytes is one
// prefix removal. Two drivers: the local disk (DATA_DIR/media) and S3-compatible object storage.

export interface MediaStorage {
  readonly driver: "disk" | "s3";
  /** Stores the object unless it is there already (same key, same bytes: content-addressed). */
  put(key: string, bytes: Uint8Array, type: string): Promise<void>;
  /** The object's bytes, whole in memory; null when absent. For small objects and the renderer's input only: delivery streams with open. */
  get(key: string): Promise<Uint8Array | null>;
  /** The object's size and a reader of its byte ranges; null when absent. */
  open(key: string): Promise<StoredObject | null>;
  has(key: string): Promise<boolean>;
  /** Removes every object whose key starts with `prefix`. */
  removePrefix(prefix: string): Promise<void>;
}

export interface StoredObject {
  readonly size: number;
  /** Bytes start…end (inclusive), read as the consumer pulls (a stalled reader holds a chunk, not the object). */
  read(start: number, end: number): ReadableStream<Uint8Array>;
}

const HASH_RE = /^[0-9a-f]{64}$/;

/** The key of an item's original bytes. */
export const originalKey = (hash: string): string => `${hashPrefix(hash)}original`;
/** The key of a variant of the original (its parameters, e.g. `w800-inside-q75-c0.5,0.5.webp`). */
export const variantKey = (hash: string, variant: string): string => `${hashPrefix(hash)}v/${variant}`;
/** Everything stored for one content hash. */
export function hashPrefix(hash: string): string {
  if (!HASH_RE.test(hash)) throw new Error("not a SHA-256 hex digest");
  return `${hash.slice(0, 2)}/${hash}/`;
}
