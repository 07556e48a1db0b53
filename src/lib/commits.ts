// In-process news of committed content writes. A write announces itself on the Db it went through,
// once its transaction has committed; the delivery engine of the app that owns that Db forgets the
// project's cached answers at once, so the writer's next read sees its write. Other instances learn
// the write from the NOTIFY sent inside the transaction, or from their version check. The NOTIFY
// names the app that wrote, and that app's listeners skip it: they heard of the write at commit,
// and a second invalidation would only throw away answers cached since.
import type { Db, DbHandle } from "../../db/client";

/**
 * Which pages a write may have taken away or brought (a delete, an unpublish, a move, a publish, a
 * translation change), as base path prefixes ("a/b": the node and everything under it; "" means
 * the whole project). Delivery keeps the last good answers to serve while the database is down:
 * it drops those of `gone` pages (which then answer 404 from memory) and forgets that a page of
 * `added` was gone.
 */
export interface PathChanges {
  readonly gone: readonly string[];
  readonly added: readonly string[];
  /**
   * The content version the write committed, when known: an instance that reads a version before
   * its announcement arrives (the read raced the NOTIFY or the commit's own announcement) can
   * tell that version from one whose announcement was lost.
   */
  readonly version?: number;
}
export const NO_PATH_CHANGES: PathChanges = { gone: [], added: [] };
type Listener = (projectId: string, changes: PathChanges) => void;

const listeners = new WeakMap<object, Set<Listener>>();
/** Each app's own Db (ownDb) and the tag its NOTIFYs carry. */
const tags = new WeakMap<object, string>();

/** Calls `fn` with the project of every content write committed through `db`; returns the unsubscribe function. */
export function onContentCommitted(db: Db, fn: Listener): () => void {
  let set = listeners.get(db);
  if (!set) listeners.set(db, (set = new Set()));
  set.add(fn);
  return () => set.delete(fn);
}

/**
 * Announces a committed content write of `projectId`. Given a transaction (a write nested in
 * another one) it reaches nobody: the outer write announces once it has committed.
 */
export function contentCommitted(db: Db, projectId: string, changes: PathChanges = NO_PATH_CHANGES): void {
  const set = listeners.get(db);
  if (set) for (const fn of set) fn(projectId, changes);
}

/**
 * The same database under an identity of its own: writes made through it are announced to this
 * app's listeners only (several apps built over one Db in a process stay separate instances).
 */
export function ownDb(db: Db): Db {
  const own = new Proxy(db, {});
  tags.set(own, crypto.randomUUID());
  return own;
}

/**
 * The NOTIFY payload of a content write of `projectId` made through `db`: the project id, then the
 * tag of the app that owns `db` (none for a Db of no app: scripts and tests' direct writes), then
 * the write's PathChanges as JSON when it took pages away or brought some or names its version.
 * Parts are separated by a space (ids, tags and the JSON of slug paths hold none).
 */
export function commitNotice(db: Db, projectId: string, changes: PathChanges = NO_PATH_CHANGES): string {
  const tag = tags.get(db);
  const json = changes.gone.length + changes.added.length > 0 || changes.version !== undefined ? JSON.stringify(changes) : undefined;
  // PostgreSQL refuses a NOTIFY payload of 8000 bytes or more (a restore of a large subtree names
  // every node it brings back): past the limit the notice says "anything may have gone or come",
  // which the other instances read as they read a notice they cannot explain (their last good
  // answers of the project are dropped, none is taken for removed).
  const fits = json === undefined || utf8Length(json) <= NOTIFY_JSON_LIMIT;
  const sent = fits ? json : JSON.stringify({ gone: changes.gone.length > 0 ? [""] : [], added: [""], version: changes.version });
  return [projectId, tag, sent].filter((part) => part !== undefined).join(" ");
}

const NOTIFY_JSON_LIMIT = 7000; // leaves room for the project id and the tag under 8000 bytes
const utf8Length = (s: string): number => new TextEncoder().encode(s).length;

/**
 * The handle the app over `db` listens through: a notice it sent itself is dropped (it announced
 * that write in-process at commit); any other reaches the listener as the project id, then its
 * PathChanges JSON when it has some.
 */
export function ownHandle(handle: DbHandle, db: Db): DbHandle {
  const tag = tags.get(db);
  return {
    ...handle,
    listen: (channel, onPayload) =>
      handle.listen(channel, (payload) => {
        const [projectId = payload, ...rest] = payload.split(" ");
        const from = rest[0]?.startsWith("{") ? undefined : rest.shift();
        if (from !== undefined && from === tag) return;
        onPayload(rest.length > 0 ? `${projectId} ${rest.join(" ")}` : projectId);
      }),
  };
}
