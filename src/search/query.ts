// A search box's text as the PostgreSQL driver runs it. Web-search syntax (`"exact phrase"`,
// `-excluded`, `or`) goes to websearch_to_tsquery, which never fails on user input; the last word,
// while the reader is still typing it, matches as a prefix; and the words a typo fallback may
// correct are picked out. Nothing here reaches SQL but as a bound parameter.

/** At most this many characters of a query are read (the rest is ignored, never an error). */
export const MAX_QUERY_CHARS = 200;
/** A last word shorter than this is a whole word, not a prefix: `a:*` would match nearly every page. */
const MIN_PREFIX_LETTERS = 3;
/** Hits one search ranks and counts at most (as Meilisearch's maxTotalHits and Algolia's paginationLimitedTo): past it, total is a lower bound. */
export const MAX_HITS = 1000;
/** Words of this many letters or more tolerate a typo when the exact search finds nothing. */
export const TYPO_MIN_LETTERS = 4;

export interface ParsedQuery {
  /** The text for websearch_to_tsquery (the prefix word taken out). */
  readonly web: string;
  /** The last word as a prefix (letters and digits only), or null. */
  readonly prefix: string | null;
  /** Plain words (not quoted, not excluded) of TYPO_MIN_LETTERS letters or more, lower case. */
  readonly typoWords: readonly string[];
  /** The query with typo words taken out, for the fallback (they come back as alternatives). */
  readonly webWithoutTypos: string;
  /** Every plain word (the prefix word last), lower case: the relaxed fallback matches any of them. */
  readonly words: readonly string[];
  /** Phrases and exclusions, which the relaxed fallback keeps. */
  readonly webWithoutWords: string;
}

const TOKEN = /-?"[^"]*"?|\S+/gu;
const WORD = /^[\p{L}\p{N}]+$/u;

/** `q` cleaned: control characters out, whitespace collapsed, at most MAX_QUERY_CHARS. */
export function cleanQuery(q: string): string {
  return q
    .replace(/[\u0000-\u001f\u007f]/g, " ")
    .replace(/\s+/g, " ")
    .trimStart()
    .slice(0, MAX_QUERY_CHARS);
}

export function parseQuery(raw: string): ParsedQuery {
  const q = cleanQuery(raw);
  const tokens = q.match(TOKEN) ?? [];
  const last = tokens[tokens.length - 1];
  // The last word is a prefix while it is being typed: the query does not end with a space.
  // After "or" it stays in the web-search text: "a or b:*" has no web-search spelling.
  const typing = last !== undefined && !/\s$/.test(q) && WORD.test(last) && [...last].length >= MIN_PREFIX_LETTERS && last.toLowerCase() !== "or" && tokens[tokens.length - 2]?.toLowerCase() !== "or";
  const prefix = typing ? last.toLowerCase() : null;
  const rest = typing ? tokens.slice(0, -1) : tokens;
  const isTypoWord = (t: string): boolean => WORD.test(t) && t.toLowerCase() !== "or" && [...t].length >= TYPO_MIN_LETTERS;
  const typoWords = [...new Set([...rest.filter(isTypoWord), ...(prefix !== null && isTypoWord(prefix) ? [prefix] : [])].map((t) => t.toLowerCase()))];
  const isWord = (t: string): boolean => WORD.test(t) && t.toLowerCase() !== "or";
  const words = [...new Set([...rest.filter(isWord).map((t) => t.toLowerCase()), ...(prefix === null ? [] : [prefix])])];
  return {
    web: rest.join(" "),
    prefix,
    typoWords,
    webWithoutTypos: rest.filter((t) => !isTypoWord(t)).join(" "),
    words,
    webWithoutWords: rest.filter((t) => !WORD.test(t)).join(" "),
  };
}

/** A word as a to_tsquery operand: quoted (it holds letters and digits only), `:*` for a prefix. */
export const lexemeQuery = (word: string, prefix: boolean): string => `'${word.replace(/'/g, "")}'${prefix ? ":*" : ""}`;
