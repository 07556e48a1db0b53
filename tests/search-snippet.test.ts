// Snippets made in the service (src/search/snippet.ts) against what PostgreSQL's text search does
// with the same words: the Snowball stems equal the index's lexemes word for word, and the words
// marked equal those ts_headline marks (HighlightAll) for the judged queries of the relevance set
// in English, German, French and Spanish, as whole words and as prefixes. Then the snippet's shape:
// fragments, the text start when nothing matches, escaping. Runs on PGlite and on PostgreSQL.
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { rows } from "../src/lib/json";
import { sqlArray } from "../src/lib/sql";
import { escapeText, findMatches, makeSnippet, matchStarts, type QueryTerm, queryTerms, stemmerOf } from "../src/search/snippet";
import fixture from "./fixtures/search-relevance.json" with { type: "json" };
import { harness } from "./helpers";

type Doc = { slug: string } & Record<"en" | "de" | "fr" | "es", { title: string; description: string; body: string }>;
const LOCALES = ["en", "de", "fr", "es"] as const;
const docs = fixture.documents as Doc[];
const queries = fixture.queries as unknown as { locale: string; q: string }[];

describe("search snippets: the service's stems and marks against PostgreSQL's", async () => {
  const h = await harness();
  const db = h.deps.db;

  test("every word of the judged set stems as the index's configuration stems it (accents folded)", async () => {
    let compared = 0;
    for (const locale of LOCALES) {
      const words = [...new Set(docs.flatMap((d) => `${d[locale].title} ${d[locale].description} ${d[locale].body}`.match(/[\p{L}\p{N}]+/gu) ?? []))];
      const found = rows<{ w: string; v: string; config: string }>(
        await db.execute(sql`select w, to_tsvector(search_config(${locale}), w)::text as v, search_config(${locale})::text as config from unnest(${sqlArray(words, "text")}) w`),
      );
      const stem = stemmerOf(found[0]?.config ?? "");
      const differ: string[] = [];
      for (const r of found) {
        const lexeme = /^'([^']+)'/.exec(r.v)?.[1];
        if (lexeme === undefined) continue; // a stop word: never in the index, never a query term
        compared++;
        const [, stemmed] = stem(r.w);
        if (stemmed !== lexeme) differ.push(`${locale} ${r.w}: index ${lexeme}, service ${stemmed}`);
      }
      expect(differ).toEqual([]);
    }
    expect(compared).toBeGreaterThan(900);
  });

  test("the words marked are those ts_headline marks, for each judged query (whole words and prefixes) in each document", async () => {
    let marks = 0;
    for (const { locale, q } of queries) {
      const last =
        q
          .split(/\s+/)
          .at(-1)
          ?.replace(/[^\p{L}\p{N}]/gu, "") ?? "";
      const forms = [sql`websearch_to_tsquery(search_config(${locale}), ${q})`, sql`to_tsquery(search_config(${locale}), ${`'${last}':*`})`];
      for (const form of forms) {
        const texts = docs.map((d) => `${d[locale as "en"].description}\n${d[locale as "en"].body}`);
        const found = rows<{ t: number; tq: string; config: string; h: string }>(
          await db.execute(sql`select t.n as t, q.tq::text as tq, search_config(${locale})::text as config,
              ts_headline(search_config(${locale}), t.text, q.tq, 'HighlightAll=true, StartSel=[[, StopSel=]]') as h
            from (select ${form} as tq) q, unnest(${sqlArray(texts, "text")}) with ordinality t(text, n)`),
        );
        for (const r of found) {
          const expected = [...r.h.matchAll(/\[\[(.*?)\]\]/g)].map((m) => m[1] ?? "");
          const text = texts[r.t - 1] ?? "";
          const { starts, ends, marked } = findMatches(text, queryTerms(r.tq), r.config);
          const actual = starts.flatMap((start, i) => (marked[i] ? [text.slice(start, ends[i])] : []));
          expect({ q, tq: r.tq, doc: r.t, marked: actual }).toEqual({ q, tq: r.tq, doc: r.t, marked: expected });
          marks += expected.length;
        }
      }
    }
    expect(marks).toBeGreaterThan(200);
  });
});

describe("search snippets: shape", () => {
  const en = "cms_english";
  const long = Array.from({ length: 60 }, (_, i) => `w${i}`).join(" ");

  test("a short text whole, its matches marked (stems, accents, case), excluded terms not", () => {
    expect(makeSnippet("Pricing plans: we PRICED it.", queryTerms("'price':* & !'plan'"), "cms_english")).toBe("<mark>Pricing</mark> plans: we <mark>PRICED</mark> it.");
    expect(makeSnippet("Les élèves, un ÉLÈVE et les eleves.", queryTerms("'elev'"), "cms_french")).toBe("Les <mark>élèves</mark>, un <mark>ÉLÈVE</mark> et les <mark>eleves</mark>.");
    expect(makeSnippet("The runner was running", queryTerms("'run'"), en)).toBe("The runner was <mark>running</mark>");
  });

  test("a long text as up to two fragments of 22 words around the first matches, in text order", () => {
    const text = long.replace("w30", "alpha").replace("w50", "alpha").replace("w55", "beta");
    const s = makeSnippet(text, queryTerms("'alpha' | 'beta'"), en);
    const [a, b] = s.split(" … ");
    expect(a).toBe(`${Array.from({ length: 22 }, (_, i) => (i + 20 === 30 ? "<mark>alpha</mark>" : `w${i + 20}`)).join(" ")}`);
    // The second starts where the first ended at the earliest (no word twice) and ends with the text.
    const w = (from: number, to: number): string[] => Array.from({ length: to - from }, (_, i) => `w${from + i}`);
    expect(b).toBe([...w(42, 50), "<mark>alpha</mark>", ...w(51, 55), "<mark>beta</mark>", ...w(56, 60)].join(" "));
    expect(s.split(" … ")).toHaveLength(2);
  });

  test("no match in the text (the title matched): its first 22 words", () => {
    expect(makeSnippet(long, queryTerms("'zzz'"), en)).toBe(Array.from({ length: 22 }, (_, i) => `w${i}`).join(" "));
    expect(makeSnippet("", queryTerms("'zzz'"), en)).toBe("");
  });

  test("escaped text with <mark> only: tags and entities in content come out as text", () => {
    const s = makeSnippet("Literal <script>alert('x')</script> & &lt; entity quokka \"quoted\"", queryTerms("'quokka'"), en);
    expect(s).toBe("Literal &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &amp;lt; entity <mark>quokka</mark> &quot;quoted&quot;");
    expect(makeSnippet("<mark>x</mark> y", queryTerms("'y'"), en)).toBe("&lt;mark&gt;x&lt;/mark&gt; <mark>y</mark>");
  });

  test("words are runs of letters and digits in any script; symbols and emoji are not words", () => {
    expect(makeSnippet("café ☕ naïve 日本語 𝐀lpha x2", queryTerms("'naiv' & 'x2'"), en)).toBe("café ☕ <mark>naïve</mark> 日本語 𝐀lpha <mark>x2</mark>");
    const { starts } = findMatches("café ☕ naïve 日本語 𝐀lpha x2", [], en);
    expect(starts).toHaveLength(5);
  });

  test("a language without a stemmer in the package matches words as written, accents folded", () => {
    expect(makeSnippet("Ένα κείμενο και λέξεις", queryTerms("'κειμενο'"), "cms_greek")).toBe("Ένα <mark>κείμενο</mark> και λέξεις");
    expect(makeSnippet("abc def", queryTerms("'de':*"), "cms_simple")).toBe("abc <mark>def</mark>");
  });

  test("the query's text form: quotes, prefixes, weights and exclusions", () => {
    expect(queryTerms("'don''t':* & !'no' & 'a':*AB & ( 'b' <-> 'c' )")).toEqual([
      { lexeme: "don't", prefix: true },
      { lexeme: "a", prefix: true },
      { lexeme: "b", prefix: false },
      { lexeme: "c", prefix: false },
    ]);
  });
});

/**
 * The snippet as the words of the whole text define it (every word read, each asked whether it
 * matches: findMatches), written as plainly as it can be: what makeSnippet, which reads only the
 * words around the matches it found first, must give for any text.
 */
function snippetByWords(text: string, terms: readonly QueryTerm[], config: string): string {
  const { starts, ends, marked } = findMatches(text, terms, config);
  const n = starts.length;
  if (n <= 22) return render(text, starts, ends, marked, 0, n, 0, text.length);
  const windows: [number, number][] = [];
  for (let i = 0; i < n && windows.length < 2; i++) {
    const last = windows.at(-1);
    if (marked[i] && (last === undefined || i >= last[1])) {
      const from = Math.max(last?.[1] ?? 0, i - 10);
      windows.push([from, from + 22]);
    }
  }
  if (windows.length === 0) windows.push([0, 22]);
  const last = windows.at(-1) as [number, number];
  if (last[1] > n) windows[windows.length - 1] = [Math.max(windows.at(-2)?.[1] ?? 0, n - 22), n];
  return windows.map(([a, b]) => render(text, starts, ends, marked, a, Math.min(b, n), a === 0 ? 0 : (starts[a] ?? 0), b >= n ? text.length : (ends[b - 1] ?? 0))).join(" … ");
}

function render(text: string, starts: number[], ends: number[], marked: boolean[], a: number, b: number, from: number, to: number): string {
  let out = "";
  let at = from;
  for (let i = a; i < b; i++) {
    if (!marked[i]) continue;
    out += `${escapeText(text.slice(at, starts[i]))}<mark>${escapeText(text.slice(starts[i], ends[i]))}</mark>`;
    at = ends[i] ?? at;
  }
  return (out + escapeText(text.slice(at, to))).trim();
}

describe("search snippets: the words around the matches, read alone, give what reading every word gives", () => {
  // Letters that fold to one (é, Ä, K), to two (ß, æ, Œ, þ, ĳ), or that lower-case to two (İ); a
  // combining accent (not a letter: it ends a word); punctuation beyond ASCII; letters of other
  // scripts and beyond the BMP (such a text is read word by word).
  const LETTERS = [
    "a",
    "e",
    "i",
    "o",
    "u",
    "r",
    "s",
    "t",
    "n",
    "l",
    "c",
    "h",
    "p",
    "A",
    "S",
    "T",
    "é",
    "É",
    "è",
    "ä",
    "Ä",
    "ö",
    "ü",
    "ß",
    "ẞ",
    "æ",
    "Æ",
    "œ",
    "Œ",
    "þ",
    "Þ",
    "ð",
    "ø",
    "ł",
    "ı",
    "İ",
    "ĳ",
    "K",
    "ñ",
    "ç",
    "ṡ",
    "1",
    "7",
  ];
  const OTHER = ["\u0301", "…", "’", "—", "-", "'", "<", "&", "\n", "  "];
  const FOREIGN = ["ж", "λ", "日", "𝐀"];
  let seed = 42;
  const random = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const pick = <T>(xs: readonly T[]): T => xs[random(xs.length)] as T;
  const word = (): string => Array.from({ length: 1 + random(7) }, () => pick(LETTERS)).join("");

  test("letters that fold to two (ß, æ, þ) before, inside and at the end of what a term starts with", () => {
    const cases: [string, QueryTerm[], string][] = [
      ["Die Straßenbahn fährt, die STRASSENBAHN auch.", [{ lexeme: "strassenb", prefix: true }], "Die <mark>Straßenbahn</mark> fährt, die <mark>STRASSENBAHN</mark> auch."],
      ["Ærøskøbing æbleskiver", [{ lexeme: "aebles", prefix: true }], "Ærøskøbing <mark>æbleskiver</mark>"],
      ["Þingvellir and thingvellir", [{ lexeme: "thingv", prefix: true }], "<mark>Þingvellir</mark> and <mark>thingvellir</mark>"],
      ["groß und gross", [{ lexeme: "gros", prefix: true }], "<mark>groß</mark> und <mark>gross</mark>"],
    ];
    for (const [text, terms, expected] of cases) {
      expect(makeSnippet(text, terms, "cms_simple")).toBe(expected);
      expect(snippetByWords(text, terms, "cms_simple")).toBe(expected);
    }
  });

  test("2,000 random texts and queries in four configurations", () => {
    const configs = ["cms_english", "cms_german", "cms_french", "cms_simple"];
    let marked = 0;
    let fragments = 0;
    for (let k = 0; k < 2000; k++) {
      const vocabulary = Array.from({ length: 12 }, word);
      const words = Array.from({ length: random(90) }, () => pick(vocabulary));
      const foreign = random(8) === 0;
      const text = words.map((w) => (foreign && random(20) === 0 ? pick(FOREIGN) + w : w)).join(random(3) === 0 ? pick(OTHER) : " ");
      const config = pick(configs);
      const stem = stemmerOf(config);
      // Terms as the index has them: the stems of words of the text (or of none), whole or as prefixes.
      const terms: QueryTerm[] = Array.from({ length: 1 + random(3) }, () => {
        const [folded, stemmed] = stem(pick(vocabulary));
        const prefix = random(2) === 0;
        return { lexeme: prefix ? [...folded].slice(0, 1 + random(8)).join("") : stemmed, prefix };
      });
      const expected = snippetByWords(text, terms, config);
      expect({ text, terms, config, snippet: makeSnippet(text, terms, config) }).toEqual({ text, terms, config, snippet: expected });
      const { starts, marked: m } = findMatches(text, terms, config);
      expect(matchStarts(text, terms, config)).toEqual(starts.filter((_, i) => m[i]));
      marked += expected.split("<mark>").length - 1;
      fragments += expected.split(" … ").length - 1;
    }
    // The cases met: many marks, and texts long enough for two fragments.
    expect(marked).toBeGreaterThan(2000);
    expect(fragments).toBeGreaterThan(200);
  });
});
