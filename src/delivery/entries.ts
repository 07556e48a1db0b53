// Entries filtered and sorted by node fields (issue 24). Query syntax:
//   field.<name>=v               equality
//   field.<name>[in]=a,b,c       one of (at most 50 values; a value cannot contain a comma)
//   field.<name>[gt|gte|lt|lte]=v   ranges, for number and date-time fields only
//   sort=field.<name> / sort=-field.<name>
// <name> is a top-level field marked `index: true` in a node type of the project's content model
// (src/model/indexes.ts); values compare by the field's JSON Schema type: numbers as numbers,
// date-times as instants (RFC 3339 with an offset, or a plain date meaning 00:00 UTC), other
// strings and booleans as text. Anything else is 400: invalid_request naming the parameter,
// invalid_sort for the sort.
import { type SQL, sql } from "drizzle-orm";
import { AppError } from "../errors";
import type { CompiledModel } from "../model/compile";
import { fieldExpression, type IndexedField, indexedFields } from "../model/indexes";

const FIELD_PREFIX = "field.";
const OPS = ["eq", "in", "gt", "gte", "lt", "lte"] as const;
type Op = (typeof OPS)[number];
const PARAM = /^field\.([^[\]]{1,64})(?:\[([a-z]{1,8})\])?$/;
const MAX_FILTERS = 10;
const MAX_IN = 50;
const MAX_VALUE = 200;

/** A filter as parsed from the query string (checked against the model later, when it is at hand). */
export interface FieldFilter {
  param: string;
  name: string;
  op: Op;
  value: string;
}

const bad = (param: string, why: string): AppError => new AppError("invalid_request", `${param}: ${why}`, { field: param });

/** The field filters of a query string, in a stable order (the cache key's source). */
export function parseFieldFilters(query: URLSearchParams): FieldFilter[] {
  const out: FieldFilter[] = [];
  for (const param of new Set(query.keys())) {
    if (!param.startsWith(FIELD_PREFIX)) continue;
    const m = PARAM.exec(param);
    const op = (m?.[2] ?? "eq") as Op;
    if (!m || !OPS.includes(op)) throw bad(param, "a field filter is field.<name>=value or field.<name>[in|gt|gte|lt|lte]=value");
    const all = query.getAll(param);
    if (all.length > 1) throw bad(param, "must be given once");
    const value = all[0] ?? "";
    if (value === "") throw bad(param, "needs a value");
    if (value.length > (op === "in" ? MAX_VALUE * 10 : MAX_VALUE)) throw bad(param, "the value is too long");
    out.push({ param, name: m[1] as string, op, value });
  }
  if (out.length > MAX_FILTERS) throw new AppError("invalid_request", `at most ${MAX_FILTERS} field filters`, { field: "field" });
  return out.sort((a, b) => (a.param < b.param ? -1 : a.param > b.param ? 1 : 0));
}

/** What cms_field_time (model/indexes.ts) reads: RFC 3339 with an offset, a real day of its month. */
const DATE_TIME = /^(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt ]([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d{1,9})?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)$/;
function isDateTime(v: string): boolean {
  const m = DATE_TIME.exec(v);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  return y >= 1 && d <= (mo === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(mo) ? 30 : 31);
}
const DATE = /^\d{4}-\d\d-\d\d$/;
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** One value as the SQL parameter it compares with, or an error naming the parameter. */
function valueSql(f: FieldFilter, field: IndexedField, raw: string): SQL {
  switch (field.kind) {
    case "number":
      if (!NUMBER.test(raw) || !Number.isFinite(Number(raw))) throw bad(f.param, `"${raw.slice(0, 40)}" is not a number`);
      return sql`${raw}::numeric`;
    case "date": {
      const v = DATE.test(raw) ? `${raw}T00:00:00Z` : raw;
      if (!isDateTime(v)) throw bad(f.param, `"${raw.slice(0, 40)}" is not a date-time (RFC 3339 with an offset, or YYYY-MM-DD)`);
      return sql`${v}::timestamptz`;
    }
    case "boolean":
      if (raw !== "true" && raw !== "false") throw bad(f.param, "is true or false");
      return sql`${raw}`;
    default:
      return sql`${raw}`;
  }
}

/** The model's field of a filter or sort, or the error saying why there is none. */
function resolve(model: CompiledModel | null, name: string, error: (why: string) => AppError): IndexedField {
  const indexed = model === null ? new Map<string, IndexedField | "conflict">() : indexedFields(model);
  const found = indexed.get(name);
  if (found === "conflict") throw error(`"${name}" is declared with different types by different node types, so it cannot be compared`);
  if (!found) {
    const names = [...indexed.entries()].flatMap(([n, f]) => (f === "conflict" ? [] : [n]));
    throw error(`"${name}" is not an indexed field of this project's content model (a top-level field with index: true; indexed: ${names.join(", ") || "none"})`);
  }
  return found;
}

/** The SQL conditions of `filters` over the entries alias `e`. */
export function filterConditions(model: CompiledModel | null, filters: readonly FieldFilter[]): { where: SQL; fields: IndexedField[] } {
  const parts: SQL[] = [];
  const fields: IndexedField[] = [];
  for (const f of filters) {
    const field = resolve(model, f.name, (why) => bad(f.param, why));
    fields.push(field);
    const expr = sql.raw(fieldExpression(field, "e"));
    if ((f.op === "gt" || f.op === "gte" || f.op === "lt" || f.op === "lte") && field.kind !== "number" && field.kind !== "date") {
      throw bad(f.param, `a range needs a number or date-time field; "${f.name}" is ${field.kind === "boolean" ? "a boolean" : "text"}`);
    }
    if (f.op === "in") {
      const values = f.value.split(",");
      if (values.length > MAX_IN || values.some((v) => v === "")) throw bad(f.param, `takes 1 to ${MAX_IN} comma-separated values`);
      parts.push(
        sql` and ${expr} in (${sql.join(
          values.map((v) => valueSql(f, field, v)),
          sql`, `,
        )})`,
      );
    } else {
      const op = { eq: "=", gt: ">", gte: ">=", lt: "<", lte: "<=" }[f.op];
      parts.push(sql` and ${expr} ${sql.raw(op)} ${valueSql(f, field, f.value)}`);
    }
  }
  return { where: sql.join(parts), fields };
}

/** `field.<name>` / `-field.<name>` of a sort parameter, or null for the built-in keys. */
export function fieldSortName(sort: string): string | null {
  const s = sort.startsWith("-") ? sort.slice(1) : sort;
  return s.startsWith(FIELD_PREFIX) ? s.slice(FIELD_PREFIX.length) : null;
}

/** ORDER BY for a field sort over the alias `e`; ids break ties (the order is total, pages do not overlap). */
export function fieldOrder(model: CompiledModel | null, sort: string): { order: SQL; field: IndexedField } {
  const name = fieldSortName(sort) ?? "";
  const field = resolve(model, name, (why) => new AppError("invalid_sort", `sort: ${why}`, { field: "sort" }));
  const dir = sort.startsWith("-") ? "desc" : "asc";
  return { order: sql.raw(`${fieldExpression(field, "e")} ${dir}, e.id ${dir}`), field };
}
