// A word-level diff of two texts, computed in the browser: the tokens (words and the whitespace
// between them) each side keeps, and those only one side has. Rendered as text with <del>/<ins>.

export interface DiffPart {
  text: string;
  /** "same": in both; "removed": only before; "added": only after. */
  kind: "same" | "removed" | "added";
}

/** Above this many tokens a side, the whole text counts as replaced (the table stays quadratic-safe). */
const MAX_TOKENS = 1500;

const tokens = (s: string): string[] => s.match(/\s+|[^\s]+/g) ?? [];

/** The parts of `before` and of `after`, from the longest common subsequence of their tokens. */
export function wordDiff(before: string, after: string): { before: DiffPart[]; after: DiffPart[] } {
  const a = tokens(before);
  const b = tokens(after);
  if (a.length > MAX_TOKENS || b.length > MAX_TOKENS) {
    return { before: before ? [{ text: before, kind: "removed" }] : [], after: after ? [{ text: after, kind: "added" }] : [] };
  }
  // lcs[i][j]: the common length of a[i..] and b[j..].
  const lcs: Uint16Array[] = Array.from({ length: a.length + 1 }, () => new Uint16Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--) {
    const row = lcs[i] as Uint16Array;
    const next = lcs[i + 1] as Uint16Array;
    for (let j = b.length - 1; j >= 0; j--) row[j] = a[i] === b[j] ? (next[j + 1] as number) + 1 : Math.max(next[j] as number, row[j + 1] as number);
  }
  const left: DiffPart[] = [];
  const right: DiffPart[] = [];
  const push = (list: DiffPart[], text: string, kind: DiffPart["kind"]) => {
    const last = list[list.length - 1];
    if (last && last.kind === kind) last.text += text;
    else list.push({ text, kind });
  };
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      push(left, a[i] as string, "same");
      push(right, b[j] as string, "same");
      i++;
      j++;
    } else if ((lcs[i + 1]?.[j] ?? 0) >= (lcs[i]?.[j + 1] ?? 0)) push(left, a[i++] as string, "removed");
    else push(right, b[j++] as string, "added");
  }
  while (i < a.length) push(left, a[i++] as string, "removed");
  while (j < b.length) push(right, b[j++] as string, "added");
  return { before: left, after: right };
}
