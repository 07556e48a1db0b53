// Entries filtered and sorted by node fields, on delivery (/api/p/{ref}/entries) and in
// the admin list (list_entries: REST query, MCP tool input). Query syntax:
//   field.<name>=v               equality
//   field.<name>[in]=a,b,c       one of (at most 50 values; a value cannot contain a comma)
//   field.<name>[gt|gte|lt|lte]=v   ranges, for number and date-time fields only
//   sort=field.<name> / sort=-field.<name>
// <name> is a top-level field marked `index: true` in a node type of the project's content model
// (src/model/indexes.ts); values compare by the field's JSON Schema type: numbers as numbers,
// date-times as instants (RFC 3339 with an offset, or a plain date meaning 00:00 UTC), other
// strings and booleans as text. Anything else is 400: invalid_request naming the parameter,
// invalid_sort for the sort. A tool has no query string: it gives { field, op, value } objects
// (fieldFiltersOf), named in errors as the query parameter they stand for.
import { type SQL, sql } from "drizzle-orm";
import { AppError } from "../errors";
import type { CompiledModel } from "./compile";
import { fieldExpression, type IndexedField, indexedFields } from "./indexes";

const FIELD_PREFIX = "field.";
export const FIELD_OPS = ["eq", "in", "gt", "gte", "lt", "lte"] as const;
const OPS = FIELD_OPS;
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
  /** The values of an `in` given one by one (a tool's array; they may contain commas); else `value` is split at commas. */
  values?: readonly string[];
}

/** A field filter as a tool gives it; `in` takes an array of values. */
export interface FieldFilterInput {
  field: string;
  op?: Op | undefined;
  value: string | number | boolean | ReadonlyArray<string | number | boolean>;
}

/** Tool filters as FieldFilters, each named `field.<name>[op]` (the query parameter it stands for). */
export function fieldFiltersOf(list: readonly FieldFilterInput[]): FieldFilter[] {
  if (list.length > MAX_FILTERS) throw new AppError("invalid_request", `at most ${MAX_FILTERS} field filters`, { field: "filters" });
  const out = list.map((f, i): FieldFilter => {
    const op = f.op ?? "eq";
    const param = `field.${f.field}${op === "eq" ? "" : `[${op}]`}`;
    if (!/^[^[\]]{1,64}$/.test(f.field)) throw new AppError("invalid_request", `filters[${i}].field: a top-level field name (1-64 characters, no brackets)`, { field: `filters.${i}.field` });
    const text = (v: string | number | boolean): string => (typeof v === "string" ? v : String(v));
    if (op === "in") {
      const values = (Array.isArray(f.value) ? f.value : [f.value]).map(text);
      if (values.some((v) => v.length > MAX_VALUE)) throw bad(param, "a value is too long");
      return { param, name: f.field, op, value: values.join(","), values };
    }
    if (Array.isArray(f.value)) throw bad(param, `takes one value (an array is for op "in")`);
    const value = text(f.value as string | number | boolean);
    if (value === "") throw bad(param, "needs a value");
    if (value.length > MAX_VALUE) throw bad(param, "the value is too long");
    return { param, name: f.field, op, value };
  });
  const seen = new Set<string>();
  for (const f of out) {
    if (seen.has(f.param)) throw bad(f.param, "must be given once");
    seen.add(f.param);
  }
  return out.sort((a, b) => (a.param < b.param ? -1 : a.param > b.param ? 1 : 0));
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

/** The SQL conditions of `filters` over the entries table or alias `table` (each begins with " and "). */
export function filterConditions(model: CompiledModel | null, filters: readonly FieldFilter[], table = "e"): { where: SQL; fields: IndexedField[] } {
  const parts: SQL[] = [];
  const fields: IndexedField[] = [];
  for (const f of filters) {
    const field = resolve(model, f.name, (why) => bad(f.param, why));
    fields.push(field);
    const expr = sql.raw(fieldExpression(field, table));
    if ((f.op === "gt" || f.op === "gte" || f.op === "lt" || f.op === "lte") && field.kind !== "number" && field.kind !== "date") {
      throw bad(f.param, `a range needs a number or date-time field; "${f.name}" is ${field.kind === "boolean" ? "a boolean" : "text"}`);
    }
    if (f.op === "in") {
      const values = f.values ?? f.value.split(",");
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

/** A sort by field as the list operations' schemas accept it (checked against the model when the list is read). */
export const FIELD_SORT = /^-?field\.[^[\]]{1,64}$/;

/** `field.<name>` / `-field.<name>` of a sort parameter, or null for the built-in keys. */
export function fieldSortName(sort: string): string | null {
  const s = sort.startsWith("-") ? sort.slice(1) : sort;
  return s.startsWith(FIELD_PREFIX) ? s.slice(FIELD_PREFIX.length) : null;
}

/** ORDER BY for a field sort over the table or alias `table`; ids break ties (the order is total, pages do not overlap). */
export function fieldOrder(model: CompiledModel | null, sort: string, table = "e"): { order: SQL; field: IndexedField } {
  const name = fieldSortName(sort) ?? "";
  const field = resolve(model, name, (why) => new AppError("invalid_sort", `sort: ${why}`, { field: "sort" }));
  const dir = sort.startsWith("-") ? "desc" : "asc";
  return { order: sql.raw(`${fieldExpression(field, table)} ${dir}, ${table}.id ${dir}`), field };
}
