// Snippets of search hits, made in the service from the hit's text and the query PostgreSQL ran.
// ts_headline parsed and stemmed every word of each hit's text on every search (about 0.45 ms a
// hit, two thirds of a search's database time); here the words are found with the same Snowball
// stemmers (snowball-stemmers: the algorithms PostgreSQL's snowball dictionaries compile, checked
// against them word for word in tests/search-snippet.test.ts) after folding accents as `unaccent`
// does, and only a word that could stem to a query term is stemmed at all: such words are found by
// one regular expression over the text, and only the words around them are read one by one.
import { algorithms, newStemmer } from "snowball-stemmers";
import { escapeRegExp } from "../lib/regexp";

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

/** A term's letters but the last two (one at least): what a word found by it starts with, folded. */
const headsOf = (terms: readonly QueryTerm[]): string[] => terms.map((t) => [...t.lexeme].slice(0, Math.max(1, [...t.lexeme].length - 2)).join(""));

/**
 * Whether the word at [start, end) of the text is one the query found: its stem is a term (or starts
 * with a prefix term). A stem keeps its word's beginning but for the last letters (English `happy` →
 * `happi`, `pricing` → `price`), so a word whose first letter (folded) is no term's is not looked at
 * further, and one not starting with a term's letters but the last two is never a match.
 */
function matcher(terms: readonly QueryTerm[], stem: Stem): (text: string, start: number, end: number) => boolean {
  const heads = headsOf(terms);
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

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
/** Text as HTML text: escaped, whitespace collapsed. */
export const escapeText = (text: string): string => text.replace(/[&<>"']|[\t\n\v\f\r\u00a0\u2028\u2029]\s*|\s{2,}/g, (c) => ESCAPES[c] ?? " ");

/** The words of a text (where each starts and ends) and, for each, whether the query found it. */
export function findMatches(text: string, terms: readonly QueryTerm[], config: string): { starts: number[]; ends: number[]; marked: boolean[] } {
  const isMatch = terms.length === 0 ? () => false : matcher(terms, stemmerOf(config));
  const { starts, ends } = wordsAfter(text, 0, Number.POSITIVE_INFINITY);
  return { starts, ends, marked: starts.map((start, i) => isMatch(text, start, ends[i] ?? start)) };
}

/**
 * The letters and digits of the Latin blocks (U+0000-U+024F, U+1E00-U+1EFF) by what each folds to
 * alone (foldWord): one letter (`é` → e, `Ä` → a, `K` → k), or more (`ß` → ss, `æ` → ae). Made once.
 */
let latinFolds: { single: Map<string, string[]>; multi: [char: string, folded: string][]; word: string } | null = null;
function latin(): NonNullable<typeof latinFolds> {
  if (latinFolds !== null) return latinFolds;
  const single = new Map<string, string[]>();
  const multi: [string, string][] = [];
  for (const [from, to] of [
    [0x30, 0x24f],
    [0x1e00, 0x1eff],
  ] as const) {
    for (let c = from; c <= to; c++) {
      const ch = String.fromCharCode(c);
      if (!LETTER_OR_DIGIT.test(ch)) continue;
      const f = foldWord(ch);
      if ([...f].length === 1) single.set(f, [...(single.get(f) ?? []), ch]);
      else multi.push([ch, f]);
    }
  }
  // Every letter and digit of those blocks, as a character class's content.
  const word = [...[...single.values()].flat(), ...multi.map(([c]) => c)].map(escapeRegExp).join("");
  latinFolds = { single, multi, word };
  return latinFolds;
}

/** Characters outside the Latin blocks (punctuation such as `…` and `’` among them). */
const NOT_LATIN = /[^\u0000-\u024f\u1e00-\u1eff]/g;
/** Whether a letter or digit outside the Latin blocks is in the text: then it is read word by word. */
function notLatin(text: string): boolean {
  NOT_LATIN.lastIndex = 0;
  for (let m = NOT_LATIN.exec(text); m !== null; m = NOT_LATIN.exec(text)) if (wordUnitAt(text, m.index) > 0) return true;
  return false;
}

/** Letters of a head the finder looks for: enough to pass over most words, few enough for a small expression (each letter folded from two doubles what follows it). */
const FINDER_LETTERS = 4;

/** A regular expression source matching the start of any Latin text whose folded form starts with `head` (its first FINDER_LETTERS letters). */
function headSource(head: string): string {
  const { single, multi } = latin();
  const chars = [...head].slice(0, FINDER_LETTERS);
  const at = (i: number): string => {
    if (i >= chars.length) return "";
    const c = chars[i] ?? "";
    const rest = chars.slice(i).join("");
    // In a class, `-` is a character only escaped.
    const options = [`[${[c, ...(single.get(c) ?? [])].map((x) => (x === "-" ? "\\-" : escapeRegExp(x))).join("")}]${at(i + 1)}`];
    for (const [ch, f] of multi) {
      if (rest.startsWith(f)) options.push(`${escapeRegExp(ch)}${at(i + [...f].length)}`);
      else if (f.startsWith(rest)) options.push(escapeRegExp(ch));
    }
    return options.length === 1 ? (options[0] ?? "") : `(?:${options.join("|")})`;
  };
  return at(0);
}

/** The terms' word-start finders, by their heads (a search's terms, used for each of its hits). */
const finders = new Map<string, RegExp>();
const FINDERS_KEPT = 2000;
function finderOf(heads: readonly string[]): RegExp {
  const key = heads.join("\u0000");
  let re = finders.get(key);
  if (re === undefined) {
    // A word's start: the text's, or after a character that is not a letter or digit (a Latin text's).
    re = new RegExp(`(?:^|[^${latin().word}])(?:${[...new Set(heads)].map(headSource).join("|")})`, "gu");
    if (finders.size >= FINDERS_KEPT) finders.clear();
    finders.set(key, re);
  }
  return re;
}

/** The end of the word starting at `start`. */
function wordEnd(text: string, start: number): number {
  let i = start;
  for (let u = wordUnitAt(text, i); u > 0; u = i < text.length ? wordUnitAt(text, i) : 0) i += u;
  return i;
}

/**
 * Where the words the query found start, in order: those findMatches marks. A Latin text is
 * searched for the words that could match (starting, folded, with a term's letters but the last two)
 * by one regular expression, and only those are stemmed; any other is read word by word.
 */
export function matchStarts(text: string, terms: readonly QueryTerm[], config: string): number[] {
  if (terms.length === 0) return [];
  if (notLatin(text)) {
    const { starts, marked } = findMatches(text, terms, config);
    return starts.filter((_, i) => marked[i]);
  }
  const isMatch = matcher(terms, stemmerOf(config));
  const out: number[] = [];
  const re = finderOf(headsOf(terms));
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const start = m.index === 0 && wordUnitAt(text, 0) > 0 ? 0 : m.index + 1;
    const end = wordEnd(text, start);
    if (isMatch(text, start, end)) out.push(start);
    re.lastIndex = end;
  }
  return out;
}

/** The code units of a letter or digit ending at `i` (2 for one beyond the BMP), or 0. */
function wordUnitBefore(text: string, i: number): number {
  if (i <= 0) return 0;
  const c = text.charCodeAt(i - 1);
  if (c >= 0xdc00 && c <= 0xdfff && i >= 2) return wordUnitAt(text, i - 2) === 2 ? 2 : 0;
  return wordUnitAt(text, i - 1) === 1 ? 1 : 0;
}

/** Up to `k` words from `at` on: their starts and ends (code unit offsets). */
function wordsAfter(text: string, at: number, k: number): { starts: number[]; ends: number[] } {
  const starts: number[] = [];
  const ends: number[] = [];
  const n = text.length;
  let i = at;
  while (i < n && starts.length < k) {
    if (wordUnitAt(text, i) === 0) {
      i++;
      continue;
    }
    starts.push(i);
    i = wordEnd(text, i);
    ends.push(i);
  }
  return { starts, ends };
}

/** The start of the `k`-th word before `at` (a word start), not before `floor`: that word's start, or that of the first word from `floor` on when fewer come between. */
function startBefore(text: string, at: number, k: number, floor: number): number {
  let first = at;
  let i = at;
  for (let found = 0; found < k; ) {
    while (i > floor && wordUnitBefore(text, i) === 0) i--;
    if (i <= floor) break;
    for (let u = wordUnitBefore(text, i); u > 0 && i > floor; u = wordUnitBefore(text, i)) i -= u;
    first = i;
    found++;
  }
  return first;
}

/**
 * The snippet of a hit: HTML-escaped text with the words the query found in `<mark>`, and no other
 * tag. A text of MAX_WORDS words or fewer is shown whole; a longer one as up to MAX_FRAGMENTS
 * fragments of MAX_WORDS words around the first matches (the first starting MAX_WORDS / 2 words
 * before the first match, the next likewise around the first match after it), in text order; a
 * fragment the text ends in ends with the text (starting earlier if it can); a text where no word
 * matches (the title matched) as its first MAX_WORDS words. Only the words around the matches are
 * read one by one (the matches are found first, ./matchStarts).
 */
export function makeSnippet(text: string, terms: readonly QueryTerm[], config: string): string {
  const head = wordsAfter(text, 0, MAX_WORDS + 1);
  const found = matchStarts(text, terms, config);
  const fragment = (from: number, to: number): string => {
    let out = "";
    let at = from;
    for (const start of found) {
      if (start < from || start >= to) continue;
      const end = wordEnd(text, start);
      out += `${escapeText(text.slice(at, start))}<mark>${escapeText(text.slice(start, end))}</mark>`;
      at = end;
    }
    return (out + escapeText(text.slice(at, to))).trim();
  };
  // Short enough to show whole, or nothing matched in it: the start of the text.
  if (head.starts.length <= MAX_WORDS) return fragment(0, text.length);
  if (found.length === 0) return fragment(0, head.ends[MAX_WORDS - 1] ?? 0);
  const before = Math.floor((MAX_WORDS - 1) / 2);
  const fragments: string[] = [];
  let floor = 0; // where the last fragment ended (a fragment starts at or after it)
  let next = 0; // the first match not yet in a fragment
  while (fragments.length < MAX_FRAGMENTS && next < found.length) {
    const match = found[next] ?? 0;
    // The first fragment starting at the first word starts with the text.
    const start = (from: number): number => (fragments.length === 0 && from === head.starts[0] ? 0 : from);
    const from = startBefore(text, match, before, floor);
    const words = wordsAfter(text, from, MAX_WORDS);
    const to = words.ends[words.ends.length - 1] ?? text.length;
    if (words.starts.length < MAX_WORDS || wordsAfter(text, to, 1).starts.length === 0) {
      // The text ends in this fragment: it ends with the text, starting earlier if it can (not before the last fragment).
      fragments.push(fragment(start(startBefore(text, text.length, MAX_WORDS, floor)), text.length));
      break;
    }
    fragments.push(fragment(start(from), to));
    floor = to;
    while (next < found.length && (found[next] ?? 0) < to) next++;
  }
  return fragments.join(DELIMITER);
}
