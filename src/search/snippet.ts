// Snippets of search hits, made in the service from the hit's text and the query PostgreSQL ran.
// ts_headline parsed and stemmed every word of each hit's text on every search (about 0.45 ms a
// hit, two thirds of a search's database time); here the words are found with the same Snowball
// stemmers (snowball-stemmers: the algorithms PostgreSQL's snowball dictionaries compile, checked
// against them word for word in tests/search-snippet.test.ts) after folding accents as `unaccent`
// does, and only a word that could stem to a query term is stemmed at all.
import { algorithms, newStemmer } from "snowball-stemmers";

/** Words of a fragment, at most (ts_headline's MaxWords). */
const MAX_WORDS = 22;
/** Fragments of a snippet, at most, joined by DELIMITER (ts_headline's MaxFragments, FragmentDelimiter). */
const MAX_FRAGMENTS = 2;
const DELIMITER = " … ";
/** Stems kept per language (a site's vocabulary); the map starts again when full. */
const STEMS_KEPT = 20_000;

/** A positive operand of the query: a lexeme as the index holds it, whole or as a prefix. */
export interface QueryTerm {
  readonly lexeme: string;
  readonly prefix: boolean;
}

const OPERAND = /(!?)'((?:[^'\\]|''|\\.)*)'(?::(\*?)[A-D]*)?/g;

/** The terms of a tsquery's text form (`'pric':* & 'plan' & !'free'`): excluded ones left out. */
export function queryTerms(tsquery: string): QueryTerm[] {
  const out: QueryTerm[] = [];
  for (const m of tsquery.matchAll(OPERAND)) {
    if (m[1] === "!") continue;
    const lexeme = (m[2] ?? "").replace(/''/g, "'").replace(/\\(.)/g, "$1");
    if (lexeme !== "" && !out.some((t) => t.lexeme === lexeme && t.prefix === (m[3] === "*"))) out.push({ lexeme, prefix: m[3] === "*" });
  }
  return out;
}

/** Letters unaccent folds to more than one, or that have no decomposition. */
const FOLDS: Record<string, string> = { ß: "ss", æ: "ae", œ: "oe", ø: "o", đ: "d", ð: "d", ł: "l", þ: "th", ı: "i", ħ: "h", ŧ: "t" };
const ASCII = /^[\u0000-\u007f]*$/;

/** A word lower case with its accents folded, as the index's configurations see it (unaccent, then the stemmer's lower case). */
function foldWord(word: string): string {
  const lower = word.toLowerCase();
  if (ASCII.test(lower)) return lower;
  return lower
    .normalize("NFD")
    .replace(/\p{M}/gu, "")
    .replace(/[ßæœøđðłþıħŧ]/g, (c) => FOLDS[c] ?? c);
}

/** A word of the text as written → its folded form and its stem (both what matching compares). */
type Stem = (word: string) => readonly [folded: string, stem: string];
const ALGORITHMS = new Set(algorithms());
const stemmers = new Map<string, Stem>();

/**
 * The stemmer of a text-search configuration (`cms_english` → Snowball's english), its stems kept
 * (a word is stemmed once per process: the package takes 7-20 µs a word); a language without one
 * (cms_simple, and greek, hindi, indonesian, lithuanian, nepali, serbian and yiddish, which the
 * package lacks) keeps words as they are, folded.
 */
export function stemmerOf(config: string): Stem {
  const language = config.replace(/^.*\bcms_/, "");
  const known = stemmers.get(language);
  if (known) return known;
  const algorithm = ALGORITHMS.has(language) ? newStemmer(language) : null;
  const kept = new Map<string, readonly [string, string]>();
  const stem: Stem = (word) => {
    let s = kept.get(word);
    if (s === undefined) {
      const folded = foldWord(word);
      s = [folded, algorithm === null ? folded : algorithm.stem(folded)];
      if (kept.size >= STEMS_KEPT) kept.clear();
      kept.set(word, s);
    }
    return s;
  };
  stemmers.set(language, stem);
  return stem;
}

/**
 * Whether the word at [start, end) of the text is one the query found: its stem is a term (or starts
 * with a prefix term). A stem keeps its word's beginning but for the last letters (English `happy` →
 * `happi`, `pricing` → `price`), so a word whose first letter (folded) is no term's is not looked at
 * further, and one not starting with a term's letters but the last two is never a match.
 */
function matcher(terms: readonly QueryTerm[], stem: Stem): (text: string, start: number, end: number) => boolean {
  const heads = terms.map((t) => [...t.lexeme].slice(0, Math.max(1, [...t.lexeme].length - 2)).join(""));
  const firsts = new Set(heads.map((h) => h.charCodeAt(0)));
  return (text, start, end) => {
    const c = text.charCodeAt(start);
    // ASCII letters by their lower case; any other first letter folded (é → e, Ä → a).
    if (c < 0x80 ? !firsts.has(c >= 0x41 && c <= 0x5a ? c | 0x20 : c) : !firsts.has(foldWord(String.fromCodePoint(text.codePointAt(start) ?? c)).charCodeAt(0))) return false;
    const [folded, s] = stem(text.slice(start, end));
    if (!heads.some((h) => folded.startsWith(h))) return false;
    return terms.some((t) => (t.prefix ? s.startsWith(t.lexeme) || folded.startsWith(t.lexeme) : s === t.lexeme));
  };
}

/** Per UTF-16 unit beyond ASCII: 0 not yet known, 1 a letter or digit (\p{L}, \p{N}), 2 not. */
const WORD_UNITS = new Uint8Array(0x10000);
const LETTER_OR_DIGIT = /^[\p{L}\p{N}]$/u;

/** The code units a letter or digit takes at `i` (2 for one beyond the BMP), or 0. */
function wordUnitAt(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c < 0x80) return (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a) ? 1 : 0;
  if (c >= 0xd800 && c <= 0xdbff) {
    const cp = text.codePointAt(i) ?? c;
    return cp > 0xffff && LETTER_OR_DIGIT.test(String.fromCodePoint(cp)) ? 2 : 0;
  }
  let k = WORD_UNITS[c] ?? 2;
  if (k === 0) {
    k = LETTER_OR_DIGIT.test(String.fromCharCode(c)) ? 1 : 2;
    WORD_UNITS[c] = k;
  }
  return k === 1 ? 1 : 0;
}

/** Calls `each(start, end)` for the words (runs of letters and digits) of the text, until it returns false. */
function eachWord(text: string, each: (start: number, end: number) => boolean): void {
  const n = text.length;
  let i = 0;
  while (i < n) {
    let u = wordUnitAt(text, i);
    if (u === 0) {
      i++;
      continue;
    }
    const start = i;
    while (u > 0) {
      i += u;
      u = i < n ? wordUnitAt(text, i) : 0;
    }
    if (!each(start, i)) return;
  }
}

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
/** Text as HTML text: escaped, whitespace collapsed. */
export const escapeText = (text: string): string => text.replace(/[&<>"']|[\t\n\v\f\r\u00a0\u2028\u2029]\s*|\s{2,}/g, (c) => ESCAPES[c] ?? " ");

/** The words of a text (where each starts and ends) and, for each, whether the query found it. */
export function findMatches(text: string, terms: readonly QueryTerm[], config: string): { starts: number[]; ends: number[]; marked: boolean[] } {
  const isMatch = terms.length === 0 ? () => false : matcher(terms, stemmerOf(config));
  const starts: number[] = [];
  const ends: number[] = [];
  const marked: boolean[] = [];
  eachWord(text, (start, end) => {
    starts.push(start);
    ends.push(end);
    marked.push(isMatch(text, start, end));
    return true;
  });
  return { starts, ends, marked };
}

/**
 * The snippet of a hit: HTML-escaped text with the words the query found in `<mark>`, and no other
 * tag. A text of MAX_WORDS words or fewer is shown whole; a longer one as up to MAX_FRAGMENTS
 * fragments of MAX_WORDS words around the first matches (the first around the first match, the
 * next around the first match after it), in text order; a text where no word matches (the title
 * matched) as its first MAX_WORDS words. The text is read only as far as the last fragment ends.
 */
export function makeSnippet(text: string, terms: readonly QueryTerm[], config: string): string {
  const isMatch = terms.length === 0 ? () => false : matcher(terms, stemmerOf(config));
  const starts: number[] = [];
  const ends: number[] = [];
  const marked: boolean[] = [];
  const windows: [number, number][] = [];
  let whole = true;
  eachWord(text, (start, end) => {
    const i = starts.length;
    const last = windows[windows.length - 1];
    if (windows.length === MAX_FRAGMENTS && last !== undefined && i >= last[1]) {
      whole = false;
      return false;
    }
    starts.push(start);
    ends.push(end);
    const hit = isMatch(text, start, end);
    marked.push(hit);
    if (hit && (last === undefined || i >= last[1])) {
      const from = Math.max(last?.[1] ?? 0, i - Math.floor((MAX_WORDS - 1) / 2));
      windows.push([from, from + MAX_WORDS]);
    }
    return true;
  });
  const n = starts.length;
  if (whole && n <= MAX_WORDS) windows.splice(0, windows.length, [0, n]);
  else if (windows.length === 0) windows.push([0, MAX_WORDS]);
  else if (whole) {
    // The text ended inside the last fragment: it ends with the text, starting earlier if it can.
    const last = windows[windows.length - 1] as [number, number];
    const before = windows[windows.length - 2]?.[1] ?? 0;
    if (last[1] > n) windows[windows.length - 1] = [Math.max(before, n - MAX_WORDS), n];
  }
  // Escaped in runs: the text from one marked word to the next at once.
  const fragments = windows.map(([a, b]) => {
    const from = a === 0 ? 0 : (starts[a] ?? 0);
    const to = whole && b >= n ? text.length : (ends[Math.min(b, n) - 1] ?? from);
    let out = "";
    let at = from;
    for (let i = a; i < b && i < n; i++) {
      if (!marked[i]) continue;
      const start = starts[i] ?? at;
      const end = ends[i] ?? start;
      out += `${escapeText(text.slice(at, start))}<mark>${escapeText(text.slice(start, end))}</mark>`;
      at = end;
    }
    return (out + escapeText(text.slice(at, to))).trim();
  });
  return fragments.join(DELIMITER);
}
