// In-process news of committed content writes. A write announces itself on the Db it went through,
// once its transaction has committed; the delivery engine of the app that owns that Db forgets the
// project's cached answers at once, so the writer's next read sees its write. Other instances learn
// the write from the NOTIFY sent inside the transaction, or from their version check.
import type { Db } from "../../db/client";

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
}
export const NO_PATH_CHANGES: PathChanges = { gone: [], added: [] };
type Listener = (projectId: string, changes: PathChanges) => void;

const listeners = new WeakMap<object, Set<Listener>>();

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
  return new Proxy(db, {});
}
