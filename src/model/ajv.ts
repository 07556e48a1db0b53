// The Ajv instance a content model is compiled with: JSON Schema 2020-12, strict, our formats, the
// cost keywords (./cost.ts), and `pattern` on a linear-time engine. Every check here takes time
// linear in the value: a model is written by one project and checked on the loop every project
// shares. Measured on the demo model's `uri` (ajv-formats' RFC 3986 regex, which on Bun falls back
// to a slow path past about 55,000 characters): 16 values of 62,000 characters took 10.8-13.0 s of
// one write; a catastrophic `pattern` (^(\w+\s?)*$) 2-2.7 s for a 27-character value.
import { Ajv2020 } from "ajv/dist/2020.js";
import type { RegExpEngine } from "ajv/dist/types/index.js";
import addFormats from "ajv-formats";
import { RE2JS } from "re2js";
import { addCostKeywords, CostExceeded, spend } from "./cost";

/** The longest `uri` value a model accepts (characters). */
const URI_MAX_LENGTH = 8192;
/** The longest `pattern` (or `patternProperties` name) a model may declare (characters). */
const PATTERN_MAX_LENGTH = 500;
/**
 * A value's length times its pattern's program size, at most: RE2's slowest path (a pattern whose
 * automaton it cannot cache, [ab]*a[ab]{20}$) costs about 130 ns for each, so one test stays
 * under about 25 ms. A pattern of program size 20 checks values of up to 10,000 characters.
 */
const PATTERN_WORK_MAX = 200_000;

const HEX_COLOR = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// A scheme, then only characters RFC 3986 allows (one character class: linear on any engine), every
// `%` starting an escape, and what the WHATWG URL parser accepts (hosts, ports, IPv6 literals).
const URI_CHARACTERS = /^[a-z][a-z0-9+.-]*:[\w\-.~:/?#[\]@!$&'()*+,;=%]+$/i;
const BROKEN_ESCAPE = /%(?![0-9a-f]{2})/i;

/** format `uri`: an absolute URI (a scheme; RFC 3986 characters), at most URI_MAX_LENGTH characters. */
const isUri = (s: string): boolean => s.length <= URI_MAX_LENGTH && URI_CHARACTERS.test(s) && !BROKEN_ESCAPE.test(s) && URL.canParse(s);

/**
 * `pattern` on RE2 (re2js, pure JavaScript): matching takes time linear in the value whatever the
 * pattern, which a backtracking engine cannot promise (exponential for ^(a+)+$). A pattern RE2 does
 * not support (lookaround, backreferences) is an error of the model. Each test spends the value's
 * length times the pattern's program size / 16 from the write's budget; a value longer than
 * PATTERN_WORK_MAX allows for its pattern is refused (rule `cost`) without being tested.
 */
function linearRegExp(pattern: string): { test: (s: string) => boolean; toString: () => string } {
  const quoted = JSON.stringify(pattern.length > 60 ? `${pattern.slice(0, 60)}…` : pattern);
  if (pattern.length > PATTERN_MAX_LENGTH) throw new Error(`pattern ${quoted} is longer than ${PATTERN_MAX_LENGTH} characters`);
  let re: RE2JS;
  try {
    re = RE2JS.compile(RE2JS.translateRegExp(pattern));
  } catch (err) {
    const why = err instanceof Error ? err.message.replace(/^error parsing regexp: /, "") : String(err);
    throw new Error(`pattern ${quoted} is not supported (${why}): patterns run on a linear-time engine (RE2), without lookaround or backreferences`);
  }
  const size = re.programSize();
  const longest = Math.floor(PATTERN_WORK_MAX / size);
  return {
    test: (s: string) => {
      if (s.length > longest) throw new CostExceeded(`a value checked against the pattern ${quoted} is at most ${longest.toLocaleString("en")} characters`);
      spend(1 + Math.ceil((s.length * size) / 16));
      return re.test(s);
    },
    toString: () => pattern,
  };
}
const engine: RegExpEngine = Object.assign(linearRegExp, { code: "linearRegExp" });

/**
 * One instance per process checks schemas against the 2020-12 meta-schema: compiling that costs
 * 40-80 ms, once here rather than once per model compiled (every model version, on every instance).
 */
let meta: Ajv2020 | null = null;

/** Throws when `schema` is not a JSON Schema 2020-12 (the meta-schema's errors, as Ajv words them). */
export function checkSchema(schema: Record<string, unknown>): void {
  meta ??= new Ajv2020({ allErrors: false, strict: false });
  if (meta.validateSchema(schema) !== true) throw new Error(`schema is invalid: ${meta.errorsText(meta.errors)}`);
}

/** A new instance for one model: its schemas (checked by checkSchema first) and nothing else. */
export function newAjv(): Ajv2020 {
  // strict: an unknown keyword or format in a schema is an error of the model, not silently ignored.
  const ajv = new Ajv2020({
    allErrors: true,
    strict: true,
    strictRequired: false,
    allowUnionTypes: true,
    validateFormats: true,
    validateSchema: false,
    // optimize: Ajv's pass over the generated code halves how long compiling takes, for checks a little leaner.
    code: { regExp: engine, optimize: false },
  });
  addFormats(ajv, ["date-time", "date", "time", "email"]);
  ajv.addFormat("uri", isUri).addFormat("markdown", true).addFormat("html", true).addFormat("color", HEX_COLOR).addFormat("node", UUID).addFormat("media", UUID);
  ajv.addKeyword({ keyword: "translatable", schemaType: "boolean" }).addKeyword({ keyword: "index", schemaType: "boolean" });
  addCostKeywords(ajv);
  return ajv;
}
