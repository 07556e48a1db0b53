// Which rendered control shows each violation: the one at its pointer, else the nearest rendered
// ancestor (a violation at /blocks/0/data/extra, where no control exists, shows on the block).
import { useCallback, useLayoutEffect, useSyncExternalStore } from "react";
import { parentPointer } from "./pointer";
import { type FormStore, violationsOf } from "./store";

export interface ViolationOwners {
  /** A control at `pointer` is rendered; the answer unregisters it. */
  register(pointer: string): () => void;
  messageFor(pointer: string): string | null;
  subscribe(listener: () => void): () => void;
  /** Follows the store's violations until the answer is called. */
  connect(): () => void;
}

export function createViolationOwners(store: FormStore): ViolationOwners {
  const rendered = new Map<string, number>();
  const listeners = new Set<() => void>();
  let owned = new Map<string, string>();
  let scheduled = false;

  const recompute = (): void => {
    scheduled = false;
    const next = new Map<string, string>();
    for (const { pointer, message } of violationsOf(store)) {
      let at: string | null = pointer;
      while (at !== null && !rendered.has(at)) at = parentPointer(at);
      if (at === null) continue;
      next.set(at, next.has(at) ? `${next.get(at)}; ${message}` : message);
    }
    owned = next;
    for (const listener of [...listeners]) listener();
  };
  // Many controls mount in one commit; the owners are worked out once after it.
  const schedule = (): void => {
    if (scheduled) return;
    scheduled = true;
    queueMicrotask(recompute);
  };

  return {
    register(pointer) {
      rendered.set(pointer, (rendered.get(pointer) ?? 0) + 1);
      schedule();
      return () => {
        const n = (rendered.get(pointer) ?? 1) - 1;
        if (n === 0) rendered.delete(pointer);
        else rendered.set(pointer, n);
        schedule();
      };
    },
    messageFor: (pointer) => owned.get(pointer) ?? null,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    connect() {
      const off = store.subscribeViolations(recompute);
      recompute();
      return off;
    },
  };
}

/** Registers a rendered control at `pointer` and answers the violation text it shows, or null (and nothing for null). */
export function useOwnedViolation(owners: ViolationOwners, pointer: string | null): string | null {
  useLayoutEffect(() => (pointer === null ? undefined : owners.register(pointer)), [owners, pointer]);
  const subscribe = useCallback((listener: () => void) => owners.subscribe(listener), [owners]);
  return useSyncExternalStore(subscribe, () => (pointer === null ? null : owners.messageFor(pointer)));
}
