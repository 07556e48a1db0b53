// Form state keyed by JSON Pointer into one immutable EditorDoc. A set copies the path to the
// changed value and notifies only the subscribers whose value is now a different reference, so
// typing in one field of a 200-block node re-renders that field and nothing else.
import { useCallback, useSyncExternalStore } from "react";
import { getIn, jsonEqual, parsePointer, setIn } from "./pointer";
import type { EditorDoc, Violation } from "./types";

export interface FormStore {
  getDoc(): EditorDoc;
  get(pointer: string): unknown;
  set(pointer: string, value: unknown): void;
  subscribe(pointer: string, listener: () => void): () => void;
  subscribeAll(listener: () => void): () => void;
  isDirty(): boolean;
  reset(doc: EditorDoc): void;
  setViolations(v: Violation[]): void;
  violationAt(pointer: string): string | null;
  subscribeViolations(listener: () => void): () => void;
}

/** Whether a change at `changed` can change the value at `watched`: one is the other's ancestor (or itself). */
const related = (watched: string, changed: string): boolean => watched === changed || watched === "" || changed === "" || changed.startsWith(`${watched}/`) || watched.startsWith(`${changed}/`);

function addListener(map: Map<string, Set<() => void>>, key: string, listener: () => void): () => void {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(listener);
  return () => {
    set.delete(listener);
    if (set.size === 0 && map.get(key) === set) map.delete(key);
  };
}

const violationLists = new WeakMap<FormStore, () => readonly Violation[]>();

/** The violations last set on a store made by createFormStore, in the order the server gave them. */
export const violationsOf = (store: FormStore): readonly Violation[] => violationLists.get(store)?.() ?? [];

export function createFormStore(initial: EditorDoc): FormStore {
  let doc = initial;
  let baseline = initial;
  let dirty: { doc: EditorDoc; value: boolean } | null = null;
  let violations = new Map<string, string>();
  let violationList: readonly Violation[] = [];
  const byPointer = new Map<string, Set<() => void>>();
  const all = new Set<() => void>();
  const violationListeners = new Set<() => void>();

  const notify = (before: EditorDoc, changed: string): void => {
    const due: Array<() => void> = [];
    for (const [pointer, listeners] of byPointer) {
      if (!related(pointer, changed)) continue;
      const tokens = parsePointer(pointer);
      if (getIn(before, tokens) !== getIn(doc, tokens)) due.push(...listeners);
    }
    for (const listener of due) listener();
    for (const listener of [...all]) listener();
  };

  const replace = (next: EditorDoc, changed: string): void => {
    const before = doc;
    doc = next;
    notify(before, changed);
  };

  const store: FormStore = {
    getDoc: () => doc,
    get: (pointer) => getIn(doc, parsePointer(pointer)),
    set(pointer, value) {
      const tokens = parsePointer(pointer);
      if (tokens.length > 0 && Object.is(getIn(doc, tokens), value)) return;
      replace(setIn(doc, tokens, value) as EditorDoc, pointer);
    },
    subscribe: (pointer, listener) => {
      parsePointer(pointer);
      return addListener(byPointer, pointer, listener);
    },
    subscribeAll(listener) {
      all.add(listener);
      return () => all.delete(listener);
    },
    isDirty() {
      if (dirty?.doc !== doc) dirty = { doc, value: !jsonEqual(doc, baseline) };
      return dirty.value;
    },
    reset(next) {
      baseline = next;
      dirty = null;
      const hadViolations = violations.size > 0;
      violations = new Map();
      violationList = [];
      replace(next, "");
      if (hadViolations) for (const listener of [...violationListeners]) listener();
    },
    setViolations(list) {
      const next = new Map<string, string>();
      for (const v of list) next.set(v.pointer, next.has(v.pointer) ? `${next.get(v.pointer)}; ${v.message}` : v.message);
      violations = next;
      violationList = [...list];
      for (const listener of [...violationListeners]) listener();
    },
    violationAt: (pointer) => violations.get(pointer) ?? null,
    subscribeViolations(listener) {
      violationListeners.add(listener);
      return () => violationListeners.delete(listener);
    },
  };
  violationLists.set(store, () => violationList);
  return store;
}

/** The value at `pointer` and a setter; the component re-renders only when that value changes. */
export function useField<T = unknown>(store: FormStore, pointer: string): [T, (v: T) => void] {
  const subscribe = useCallback((listener: () => void) => store.subscribe(pointer, listener), [store, pointer]);
  const value = useSyncExternalStore(subscribe, () => store.get(pointer)) as T;
  const set = useCallback((v: T) => store.set(pointer, v), [store, pointer]);
  return [value, set];
}

/**
 * A derived value of the value at `pointer` (a length, a type name); the component re-renders only
 * when the derived value changes. `select` must answer a primitive or a stable reference.
 */
export function useFieldSelector<S>(store: FormStore, pointer: string, select: (value: unknown) => S): S {
  const subscribe = useCallback((listener: () => void) => store.subscribe(pointer, listener), [store, pointer]);
  return useSyncExternalStore(subscribe, () => select(store.get(pointer)));
}

export function useDirty(store: FormStore): boolean {
  const subscribe = useCallback((listener: () => void) => store.subscribeAll(listener), [store]);
  return useSyncExternalStore(subscribe, () => store.isDirty());
}
