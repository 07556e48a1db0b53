// What checking one write against the content model may cost. Validation runs on the event loop
// every project shares, so one node's check (its fields, blocks and translations) has a budget of
// CHECK_BUDGET units and CHECK_DEADLINE_MS of CPU time, and the write is refused (400 invalid_content,
// rule `cost`) when it needs more, rather than holding the loop: every schema a value is checked
// against costs its weight (1, plus the names and values it lists), a value checked against a
// `pattern` its length times the pattern's size, and `uniqueItems` compares items by their
// canonical JSON in linear time (Ajv's own compares every pair). The units make the refusal of
// most hostile content independent of the machine's load; the deadline bounds what units do not
// price (Ajv building one error object per failure, a cold validator). It counts the process's CPU
// time, not the clock's: on a loaded machine the clock also counts the time other processes ran, and
// a valid write would be refused for the machine's load. Without a budget (a check outside
// validateNode) nothing is counted.
import { _, type Ajv2020, type KeywordCxt } from "ajv/dist/2020.js";
import { isPlainObject } from "../lib/merge";

/** The keyword every schema gets in the compiled copy: its weight in budget units. */
const COST_KEYWORD = "x-check-cost";

/** Units of one node's check. A warm validator spends about 50-300 ns a unit. */
export const CHECK_BUDGET = 1_000_000;
/** CPU time one node's check may take (ms), whatever its units. */
export const CHECK_DEADLINE_MS = 20;

export class CostExceeded extends Error {
  /** Where the check was when the budget ran out: a JSON Pointer into the node's wire form. */
  pointer: string | undefined;
  constructor(why = `more than ${CHECK_BUDGET.toLocaleString("en")} units or ${CHECK_DEADLINE_MS} ms of CPU time`) {
    super(`the content needs more checking against the content model than one write may have (${why}): fewer items, shorter values under a pattern`);
  }
}

let left = Number.POSITIVE_INFINITY;
let deadline = Number.POSITIVE_INFINITY;
let calls = 0;

/**
 * The process's CPU time (user and system) in ms; the clock where the runtime does not count it
 * (Deno's process.cpuUsage has been a stub answering 0, and a process that loaded this module has
 * spent some).
 */
const cpuMs: () => number = (() => {
  const cpu = (): number => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  try {
    if (cpu() > 0) return cpu;
  } catch {
    // not implemented: the clock below
  }
  return () => performance.now();
})();

/** Takes `units` from the budget of the check running; throws CostExceeded when it is spent or its time is up. */
export function spend(units: number): void {
  left -= units;
  if (left < 0) throw new CostExceeded();
  // CPU time is read every 256th call (reading it costs about 3 µs, a call far less) and for any costly one.
  calls += 1;
  if ((calls % 256 === 0 || units > 256) && cpuMs() > deadline) throw new CostExceeded();
}

/** Runs `check` (synchronous) with a budget of `units` and `ms` of CPU time. */
export function withBudget<T>(units: number, ms: number, check: () => T): T {
  const outer = [left, deadline] as const;
  left = units;
  deadline = cpuMs() + ms;
  try {
    return check();
  } finally {
    [left, deadline] = outer;
  }
}

const ONE = ["items", "additionalProperties", "propertyNames", "contains", "not", "if", "then", "else", "unevaluatedItems", "unevaluatedProperties"];
const MANY = ["allOf", "anyOf", "oneOf", "prefixItems"];
const MAP = ["properties", "patternProperties", "dependentSchemas", "$defs", "definitions"];

const length = (v: unknown): number => (Array.isArray(v) ? v.length : isPlainObject(v) ? Object.keys(v).length : 0);

/** What one evaluation of `schema` costs before its subschemas: 1, plus the lists it walks. */
function weightOf(schema: Record<string, unknown>): number {
  const dependent = isPlainObject(schema.dependentRequired) ? Object.values(schema.dependentRequired).reduce<number>((n, v) => n + length(v), 0) : 0;
  return 1 + length(schema.required) + length(schema.enum) + length(schema.properties) + length(schema.type) + dependent;
}

/**
 * A copy of `schema` whose every schema carries its weight (COST_KEYWORD); `count.schemas` counts
 * them. The stored model is never changed.
 */
export function priced(schema: unknown, count: { schemas: number }): unknown {
  if (!isPlainObject(schema)) return schema;
  count.schemas += 1;
  const out: Record<string, unknown> = { ...schema, [COST_KEYWORD]: weightOf(schema) };
  for (const k of ONE) if (k in schema) out[k] = priced(schema[k], count);
  for (const k of MANY) {
    const list = schema[k];
    if (Array.isArray(list)) out[k] = list.map((s) => priced(s, count));
  }
  for (const k of MAP) {
    const map = schema[k];
    if (isPlainObject(map)) out[k] = Object.fromEntries(Object.entries(map).map(([name, s]) => [name, priced(s, count)]));
  }
  return out;
}

/** JSON with object keys sorted: two values JSON Schema calls equal have the same one. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (isPlainObject(v))
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`)
      .join(",")}}`;
  return JSON.stringify(v) ?? "null";
}

/** The cost keyword, and `uniqueItems` in linear time. */
export function addCostKeywords(ajv: Ajv2020): void {
  // Code, not a validate function: one call of spend inlined per schema (a validate function's
  // error plumbing made compiling twice as slow).
  ajv.addKeyword({
    keyword: COST_KEYWORD,
    schemaType: "number",
    code: (cxt: KeywordCxt) => {
      const fn = cxt.gen.scopeValue("func", { ref: spend, key: "spend" });
      cxt.gen.code(_`${fn}(${cxt.schema as number})`);
    },
  });
  ajv.removeKeyword("uniqueItems");
  const unique = (wanted: boolean, data: unknown[]): boolean => {
    if (!wanted) return true;
    spend(data.length);
    const seen = new Set<string>();
    for (const item of data) {
      spend(1);
      const key = canonical(item);
      if (seen.has(key)) {
        unique.errors = [{ keyword: "uniqueItems", message: "must NOT have duplicate items", params: {} }];
        return false;
      }
      seen.add(key);
    }
    return true;
  };
  unique.errors = [] as { keyword: string; message: string; params: Record<string, never> }[];
  ajv.addKeyword({ keyword: "uniqueItems", type: "array", schemaType: "boolean", validate: unique });
}
