// The state of each translated field in the translation view (docs/translation.md): the
// translation's `field_status`, keyed by the form's pointers, handed down the form by context. A
// field whose text is machine-made, needs review or went stale carries a badge saying so (missing
// ones already say "Not translated"; approved and published ones need no word).
import { createContext, type ReactNode, useContext } from "react";

export type FieldState = "missing" | "machine" | "needs_review" | "stale" | "approved" | "published";

export const FieldStatusContext = createContext<ReadonlyMap<string, FieldState>>(new Map());

const WORDS: Partial<Record<FieldState, string>> = {
  machine: "Machine translation, not reviewed",
  needs_review: "Needs review: the machine's answer failed its checks",
  stale: "Stale: the original changed since",
};

/** The state of the translated field at `pointer`, or null (not in a translation, or no state worth a word). */
export function useFieldState(pointer: string): FieldState | null {
  return useContext(FieldStatusContext).get(pointer) ?? null;
}

export function FieldStateBadge({ state, id }: { state: FieldState | null; id: string }): ReactNode {
  const words = state ? WORDS[state] : undefined;
  return words ? (
    <span className={`st-badge field-state field-state-${state}`} id={id}>
      {words}
    </span>
  ) : null;
}

/** `field_status` (pointers into the node: blocks by id) as the form names fields (blocks by position). */
export function formPointers(status: Record<string, { status: FieldState }> | undefined, blockIds: readonly string[]): Map<string, FieldState> {
  const out = new Map<string, FieldState>();
  for (const [pointer, s] of Object.entries(status ?? {})) {
    const m = /^\/blocks\/([^/]+)(\/.*)$/.exec(pointer);
    const at = m ? blockIds.indexOf(m[1] ?? "") : -1;
    out.set(m ? (at < 0 ? pointer : `/blocks/${at}${m[2]}`) : pointer, s.status);
  }
  return out;
}
