// The grid's rows for one search: a slot for every item the search matches (the total the first
// page answers), each the item once its page is read, a placeholder until then. A page is read when
// one of its placeholders is drawn, and only drawn tiles are (the grid is virtualised), so End,
// PageDown, the wheel or the scrollbar reach item 10,000 by reading the pages in view and no other.
// Slots are keyed by position and keep their identity while their item does (React Aria rebuilds a
// row only for a new object): focus stays on a slot when its placeholder turns into its item.
import { useQueries } from "@tanstack/react-query";
import { useCallback, useRef, useState } from "react";
import { listMedia, type MediaItem, mediaKeys, PER_PAGE } from "./api";

export interface Slot {
  /** The position in the search's order, from 0: the grid row's key. */
  id: number;
  item: MediaItem | null;
}

/** Pages held besides the first (which answers the total): the ones most recently in view. */
const PAGES_HELD = 8;

export interface MediaSlots {
  slots: Slot[];
  total: number;
  isPending: boolean;
  error: Error | null;
  /** Asks for the page holding the slot at `index` (a placeholder drawn in view). */
  need: (index: number) => void;
}

export function useMediaSlots(slug: string, q: string, type: string): MediaSlots {
  const search = `${q}\n${type}`;
  const [wanted, setWanted] = useState<{ search: string; pages: number[] }>({ search, pages: [1] });
  const pages = wanted.search === search ? wanted.pages : [1];
  const results = useQueries({
    queries: pages.map((page) => ({
      queryKey: mediaKeys.page(slug, q, type, page),
      queryFn: ({ signal }: { signal: AbortSignal }) => listMedia(slug, q, type, page, signal),
      staleTime: 5_000,
    })),
  });
  const first = results[0];
  const total = first?.data?.total ?? 0;

  const need = useCallback(
    (index: number) => {
      const page = Math.floor(index / PER_PAGE) + 1;
      setWanted((w) => {
        const held = w.search === search ? w.pages : [1];
        if (held.includes(page)) return w.search === search ? w : { search, pages: held };
        const others = held.filter((p) => p !== 1).slice(-(PAGES_HELD - 1));
        return { search, pages: [1, ...others, page] };
      });
    },
    [search],
  );

  // One object per slot, kept while its item is the same object (the query cache's structural
  // sharing keeps an unchanged item's object across refetches).
  const held = useRef<{ search: string; slots: Slot[] }>({ search, slots: [] });
  const loaded = new Map<number, MediaItem[]>();
  results.forEach((r, i) => {
    const page = pages[i];
    if (r.data && page !== undefined) loaded.set(page, r.data.items);
  });
  const before = held.current.search === search ? held.current.slots : [];
  let changed = held.current.search !== search || before.length !== total;
  const slots: Slot[] = new Array(total);
  for (let i = 0; i < total; i++) {
    const item = loaded.get(Math.floor(i / PER_PAGE) + 1)?.[i % PER_PAGE] ?? null;
    const prev = before[i];
    if (prev && prev.item === item) slots[i] = prev;
    else {
      slots[i] = { id: i, item };
      changed = true;
    }
  }
  if (changed) held.current = { search, slots };
  return { slots: held.current.slots, total, isPending: first?.isPending ?? true, error: results.find((r) => r.error)?.error ?? null, need };
}
