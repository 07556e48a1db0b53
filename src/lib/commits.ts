// In-process news of committed content writes. A write announces itself on the Db it went through,
// once its transaction has committed; the delivery engine of the app that owns that Db forgets the
// project's cached answers at once, so the writer's next read sees its write. Other instances learn
// the write from the NOTIFY sent inside the transaction, or from their version check. The NOTIFY
// names the app that wrote, and that app's listeners skip it: they heard of the write at commit,
// and a second invalidation would only throw away answers cached since (issue 22 §5).
import type { Db, DbHandle } from "../../db/client";

type Listener = (projectId: string) => void;

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
export function contentCommitted(db: Db, projectId: string): void {
  const set = listeners.get(db);
  if (set) for (const fn of set) fn(projectId);
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
 * tag of the app that owns `db` (none for a Db of no app: scripts and tests' direct writes).
 */
export function commitNotice(db: Db, projectId: string): string {
  const tag = tags.get(db);
  return tag === undefined ? projectId : `${projectId} ${tag}`;
}

/**
 * The handle the app over `db` listens through: a notice it sent itself is dropped (it announced
 * that write in-process at commit); any other reaches the listener as the project id alone.
 */
export function ownHandle(handle: DbHandle, db: Db): DbHandle {
  const tag = tags.get(db);
  return {
    ...handle,
    listen: (channel, onPayload) =>
      handle.listen(channel, (payload) => {
        const [projectId = payload, from] = payload.split(" ");
        if (from === undefined || from !== tag) onPayload(projectId);
      }),
  };
}
