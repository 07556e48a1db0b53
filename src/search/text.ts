// The typo fallback's corrections (snippets: ./snippet.ts).
import { lexemeQuery, type ParsedQuery } from "./query";

/** Edits between a and b (insertions, deletions, substitutions and transpositions of neighbours), or more than `max` once that is certain. */
function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const x = [...a];
  const y = [...b];
  let prev2: number[] = [];
  let prev = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const cur = [i];
    let best = i;
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      let d = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) d = Math.min(d, (prev2[j - 2] ?? 0) + 1);
      cur.push(d);
      best = Math.min(best, d);
    }
    if (best > max) return max + 1;
    prev2 = prev;
    prev = cur;
  }
  return prev[y.length] ?? max + 1;
}

/** Typos a word tolerates: one from TYPO_MIN_LETTERS letters, two from nine. */
const typosFor = (word: string): number => ([...word].length >= 9 ? 2 : 1);
/** Corrections kept per word, nearest first. */
const MAX_CORRECTIONS = 3;

/**
 * Each typo word with its corrections among `candidates` (words of the titles searched), as
 * to_tsquery alternatives: the word itself, then each candidate within its typos. Null when no
 * word has a correction (the fallback would find nothing new).
 */
export function typoCorrections(p: ParsedQuery, candidates: readonly string[]): string[][] | null {
  let any = false;
  const out = p.typoWords.map((word) => {
    const w = word.normalize("NFD").replace(/\p{M}/gu, "");
    const near = [...new Set(candidates)]
      .map((c) => ({ c, d: editDistance(w, c, typosFor(w)) }))
      .filter((x) => x.d > 0 && x.d <= typosFor(w))
      .sort((a, b) => a.d - b.d || a.c.localeCompare(b.c))
      .slice(0, MAX_CORRECTIONS)
      .map((x) => x.c.replace(/[^\p{L}\p{N}]/gu, ""))
      .filter((c) => c !== "");
    if (near.length > 0) any = true;
    const isPrefix = p.prefix === word;
    return [lexemeQuery(word, isPrefix), ...near.map((c) => lexemeQuery(c, false))];
  });
  return any ? out : null;
}
