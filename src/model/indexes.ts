// Indexed node fields: a node type's top-level property marked `index: true` may filter and sort
// a collection's entries on delivery, and has a PostgreSQL expression index behind it, one per
// (field name, kind), shared by every project that indexes it, the project its first column. One
// index per project and field (partial on the project) made every write to nodes dearer with each
// tenant: each write opens and locks every index of the table, each planning looks at every one
// (at 500 projects of 3 indexed fields, +400 % database CPU per write). The expression compares by
// the field's JSON Schema type: numbers as numeric, date-times as timestamptz (through an immutable
// function that reads RFC 3339 with an explicit offset, so the order is the instants' order
// whatever the offsets and the precision), other strings and booleans as text. The query side
// (src/model/field-filters.ts) writes the very same expression text, so the planner matches it.
import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { rows } from "../lib/json";
import { isPlainObject } from "../lib/merge";
import type { CompiledModel } from "./compile";
import { walkSchema } from "./compile";

type FieldKind = "number" | "date" | "text" | "boolean";

export interface IndexedField {
  readonly name: string;
  readonly kind: FieldKind;
}

/** Field names that can be written into SQL as they are (quoted all the same). */
const SAFE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** The kind a property schema compares as, or null when it cannot be filtered (objects, arrays, unions). */
function kindOf(schema: Record<string, unknown>): FieldKind | null {
  const t = schema.type;
  if (t === "number" || t === "integer") return "number";
  if (t === "boolean") return "boolean";
  if (t === "string") return schema.format === "date-time" ? "date" : "text";
  return null;
}

const indexed = new WeakMap<CompiledModel, ReadonlyMap<string, IndexedField | "conflict">>();

/**
 * The model's indexed fields by name: top-level properties with `index: true` and a scalar type.
 * A name two node types declare with different kinds is "conflict" (it cannot be compared one way).
 */
export function indexedFields(model: CompiledModel): ReadonlyMap<string, IndexedField | "conflict"> {
  const hit = indexed.get(model);
  if (hit) return hit;
  const out = indexedFieldsOf(model.definition.node_types);
  indexed.set(model, out);
  return out;
}

/** indexedFields over node types as stored (each a `fields` schema; anything else is skipped). */
function indexedFieldsOf(types: readonly unknown[]): Map<string, IndexedField | "conflict"> {
  const out = new Map<string, IndexedField | "conflict">();
  for (const type of types) {
    if (!isPlainObject(type)) continue;
    walkSchema(type.fields, (path, sub) => {
      const name = path[0];
      if (path.length !== 1 || name === undefined || sub.index !== true || !SAFE_NAME.test(name)) return;
      const kind = kindOf(sub);
      if (kind === null) return;
      const prev = out.get(name);
      out.set(name, prev === undefined || (prev !== "conflict" && prev.kind === kind) ? { name, kind } : "conflict");
    });
  }
  return out;
}

/** The SQL text of a field's comparable value, over the `fields` column of `table` ("" for the bare column). */
export function fieldExpression(field: IndexedField, table = ""): string {
  const col = `${table === "" ? "" : `${table}.`}fields`;
  const name = `'${field.name.replace(/'/g, "''")}'`;
  switch (field.kind) {
    case "number":
      // Only JSON numbers are cast (a string there would make the cast, and every read, fail).
      return `(case when jsonb_typeof(${col}->${name}) = 'number' then (${col}->>${name})::numeric end)`;
    case "date":
      return `cms_field_time(${col}->>${name})`;
    default:
      return `(${col}->>${name})`;
  }
}

/**
 * What the planner is told a call costs (in cpu_operator_cost units; PostgreSQL's default for a
 * plpgsql function is 100). A call takes microseconds: at 100, sorting a category's 10,000 entries
 * by date looked cheaper than walking the date index backwards, and took 80 ms instead of 3.
 */
const TIME_COST = 1000;

/**
 * RFC 3339 date-time with an explicit offset → timestamptz, else null. Never an error: one bad value
 * must not fail every read, nor the index build; the pattern and the day-of-month check leave the
 * cast nothing to refuse, so no exception block (a subtransaction per call) is needed. Immutable in
 * fact: with the offset given, neither TimeZone nor DateStyle changes the result.
 */
const TIME_FUNCTION = `create or replace function cms_field_time(v text) returns timestamptz
language plpgsql immutable strict parallel safe cost ${TIME_COST} as $fn$
declare y int; m int; d int; last int;
begin
  if v !~ '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])[Tt ]([01]\\d|2[0-3]):[0-5]\\d:([0-5]\\d|60)(\\.\\d{1,9})?([Zz]|[+-]([01]\\d|2[0-3]):[0-5]\\d)$' then return null; end if;
  y := substr(v, 1, 4)::int; m := substr(v, 6, 2)::int; d := substr(v, 9, 2)::int;
  -- (plpgsql reads an IF condition up to its first THEN: the CASE goes in a variable.)
  last := case when m = 2 then case when y % 4 = 0 and (y % 100 <> 0 or y % 400 = 0) then 29 else 28 end when m in (4, 6, 9, 11) then 30 else 31 end;
  if y < 1 or d > last then return null; end if;
  return v::timestamptz;
end $fn$`;

const ensured = new WeakMap<Db, Promise<void>>();

/** Creates cms_field_time once per process and database, when missing or older (concurrent creators tolerated). */
export function ensureFieldFunctions(db: Db): Promise<void> {
  let p = ensured.get(db);
  if (!p) {
    p = (async () => {
      const current = sql`select count(*)::int as n from pg_proc where proname = 'cms_field_time' and procost = ${TIME_COST}`;
      if ((rows<{ n: number }>(await db.execute(current))[0]?.n ?? 0) > 0) return;
      try {
        await db.execute(sql.raw(TIME_FUNCTION));
      } catch (err) {
        // Another instance created it at the same moment ("tuple concurrently updated" / duplicate).
        if ((rows<{ n: number }>(await db.execute(current))[0]?.n ?? 0) === 0) throw err;
      }
    })();
    p.catch(() => ensured.delete(db));
    ensured.set(db, p);
  }
  return p;
}

/** The index of a field, shared by every project indexing it: a hash of (name, kind). */
export function fieldIndexName(field: IndexedField): string {
  return `nodes_fx_${fieldHash(field)}`;
}

const fieldHash = (field: IndexedField): string => fnv32(`${field.name}\u0000${field.kind}`);

const fnv32 = (s: string): string => {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16).padStart(8, "0");
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** A shared field index: nodes_fx_ and the hash. */
const SHARED_INDEX = "^nodes_fx_[0-9a-f]{8}$";
/** A per-project field index, partial on its project, as databases held them before the shared ones. */
const PROJECT_INDEX = "^nodes_fx_[0-9a-f]{32}_[0-9a-f]{8}$";

/**
 * Makes the field indexes match `model`: creates the shared indexes it needs that are missing, and
 * drops those no project's stored model indexes any more (this project's previous fields, say).
 * Call it after a model write has committed, outside any transaction: on PostgreSQL the indexes are
 * built CONCURRENTLY, so writes to nodes go on meanwhile. Answers the names created and dropped.
 */
export async function syncFieldIndexes(db: Db, projectId: string, model: CompiledModel): Promise<{ created: string[]; dropped: string[] }> {
  if (!UUID.test(projectId)) throw new Error("syncFieldIndexes: not a project id");
  const wanted = fieldsOf(indexedFields(model));
  const created = await buildFieldIndexes(db, wanted);
  const dropped = await pruneFieldIndexes(db, wanted);
  const statistics = await syncFieldStatistics(db, wanted);
  // A new index or statistic is known to the planner only after an ANALYZE; autovacuum's would
  // come only once a tenth of the table has changed. (Retried: beside another instance's index
  // build, each waits for the other, and PostgreSQL cancels one as a deadlock.)
  if (created.length > 0 || statistics.created > 0) await retried(() => db.execute(sql`analyze nodes, published_nodes`));
  return { created, dropped };
}

/** Drops the field indexes a deleted project leaves that no remaining project's model indexes. */
export async function dropFieldIndexes(db: Db, projectId: string): Promise<string[]> {
  if (!UUID.test(projectId)) throw new Error("dropFieldIndexes: not a project id");
  const dropped = await pruneFieldIndexes(db, []);
  if (dropped.length > 0) await pruneFieldStatistics(db);
  return dropped;
}

/**
 * Replaces the per-project field indexes of a database written before the shared ones: builds the
 * shared index of every field any project's stored model indexes, then drops every per-project one.
 * Run at start-up; with none left it only looks. Two instances starting at once both build and drop
 * (IF [NOT] EXISTS, retried as in syncFieldIndexes). Answers the per-project indexes dropped.
 */
export async function upgradeFieldIndexes(db: Db): Promise<string[]> {
  const old = (await fieldIndexes(db, PROJECT_INDEX)).map((e) => e.name);
  // A database from before published versions (migration 0011) has the working copies' indexes only.
  const shared = (await fieldIndexes(db, SHARED_INDEX)).map((e) => e.name);
  const twins = new Set((await fieldIndexes(db, `^published_${SHARED_INDEX.slice(1)}`)).map((e) => e.name));
  if (shared.some((name) => !twins.has(publishedTwin(name)))) {
    const fields = await storedIndexedFields(db);
    await buildFieldIndexes(db, fields);
    await syncFieldStatistics(db, fields);
    await retried(() => db.execute(sql`analyze published_nodes`));
  }
  if (old.length === 0) return [];
  const fields = await storedIndexedFields(db);
  await buildFieldIndexes(db, fields);
  await syncFieldStatistics(db, fields);
  for (const name of old) await retried(() => db.execute(sql.raw(`drop index concurrently if exists "${name}"`)));
  await pruneFieldStatistics(db);
  await retried(() => db.execute(sql`analyze nodes`));
  return old;
}

const fieldsOf = (map: ReadonlyMap<string, IndexedField | "conflict">): IndexedField[] => [...map.values()].flatMap((f) => (f === "conflict" ? [] : [f]));

/** Every field some project's stored content model indexes (a model write is rare: each is read whole). */
async function storedIndexedFields(db: Db): Promise<IndexedField[]> {
  const out = new Map<string, IndexedField>();
  for (const { definition } of rows<{ definition: unknown }>(await db.execute(sql`select definition from content_models`))) {
    const types = isPlainObject(definition) && Array.isArray(definition.node_types) ? definition.node_types : [];
    for (const f of fieldsOf(indexedFieldsOf(types))) out.set(fieldIndexName(f), f);
  }
  return [...out.values()];
}

/**
 * Creates the shared index of each of `fields` that is missing, on (project_id, parent_id, status,
 * the field's expression, id): no partial predicate, so `nodes` has one index per distinct (name,
 * kind) whatever the number of projects (the expression reads any stored JSON without an error).
 * Two builds on `nodes` at once (two instances, or two projects' model writes) can deadlock in
 * PostgreSQL's wait for older transactions; the loser's build is retried (its half-built index
 * dropped first), a few times, after a pause. Answers the names created.
 */
async function buildFieldIndexes(db: Db, fields: readonly IndexedField[]): Promise<string[]> {
  if (fields.some((f) => f.kind === "date")) await ensureFieldFunctions(db);
  const state = async (name: string) => (await fieldIndexes(db, `^${name}$`))[0];
  const created: string[] = [];
  for (const field of fields) {
    const name = fieldIndexName(field);
    let built = false;
    // The working copies (the admin API's entries) and the published versions (delivery's), each its index.
    for (const [table, index] of [
      ["nodes", name],
      ["published_nodes", publishedTwin(name)],
    ] as const) {
      if ((await state(index))?.valid) continue;
      const create = sql.raw(`create index concurrently if not exists "${index}" on ${table} (project_id, parent_id, status, (${fieldExpression(field)}), id)`);
      await retried(async (attempt) => {
        const found = await state(index);
        if (found?.valid) return;
        // Invalid: being built by another instance (seen once: wait and look again), or left by a
        // build that failed (IF NOT EXISTS would keep it): dropped, then built here.
        if (found && attempt === 1) throw new Error(`index ${index} is being built elsewhere, or was left invalid`);
        if (found) await db.execute(sql.raw(`drop index concurrently if exists "${index}"`));
        await db.execute(create);
        if (!(await state(index))?.valid) throw new Error(`index ${index} is not valid after its build`);
        built = true;
      });
    }
    if (built) created.push(name);
  }
  return created;
}

/** The published versions' index (or statistic) beside the working copies' one of the same field. */
const publishedTwin = (name: string): string => `published_${name}`;

/**
 * Drops the shared field indexes that neither `keep` nor any project's stored model indexes. A model
 * write that adds a field just as another project's prune drops its last use can find the index
 * there and then lose it: the project's lists still answer (without the index), and its next model
 * write builds it again.
 */
async function pruneFieldIndexes(db: Db, keep: readonly IndexedField[]): Promise<string[]> {
  const existing = await fieldIndexes(db, SHARED_INDEX);
  if (existing.length === 0) return [];
  const used = new Set([...keep, ...(await storedIndexedFields(db))].map(fieldIndexName));
  const dropped: string[] = [];
  for (const { name } of existing) {
    if (used.has(name)) continue;
    await retried(() => db.execute(sql.raw(`drop index concurrently if exists "${name}"`)));
    await retried(() => db.execute(sql.raw(`drop index concurrently if exists "${publishedTwin(name)}"`)));
    dropped.push(name);
  }
  return dropped;
}

/** The table-wide statistic of a field's expression: one per (name, kind), beside its index. */
const fieldStatisticName = (field: IndexedField): string => `nodes_fs_${fieldHash(field)}`;

/**
 * The expression's statistics, with the project and the collection beside it. With none (PostgreSQL
 * ignores a partial index's expressions, as the per-project indexes were) a filter on any field
 * value was guessed to keep 0.5 % of the rows: a category holding 10 % of a collection was then
 * sorted whole by date (50 ms) rather than read along the date index (3 ms). Creates the statistics
 * `fields` needs and drops those whose field index is gone.
 */
async function syncFieldStatistics(db: Db, fields: readonly IndexedField[]): Promise<{ created: number }> {
  const existing = new Set(
    rows<{ name: string }>(await db.execute(sql`select stxname as name from pg_statistic_ext where starts_with(stxname, 'nodes_fs_') or starts_with(stxname, 'published_nodes_fs_')`)).map(
      (r) => r.name,
    ),
  );
  let created = 0;
  for (const field of fields) {
    for (const [table, name] of [
      ["nodes", fieldStatisticName(field)],
      ["published_nodes", publishedTwin(fieldStatisticName(field))],
    ] as const) {
      if (existing.has(name)) continue;
      try {
        await db.execute(sql.raw(`create statistics if not exists "${name}" on project_id, parent_id, (${fieldExpression(field)}) from ${table}`));
        created++;
      } catch (err) {
        // Created by another instance at the same moment (a duplicate key in pg_statistic_ext).
        const again = rows<{ n: number }>(await db.execute(sql`select count(*)::int as n from pg_statistic_ext where stxname = ${name}`));
        if ((again[0]?.n ?? 0) === 0) throw err;
      }
    }
  }
  await pruneFieldStatistics(db);
  return { created };
}

/** Drops the field statistics whose shared field index is gone (the same hash names both). */
async function pruneFieldStatistics(db: Db): Promise<void> {
  const unused = rows<{ name: string }>(
    await db.execute(sql`select s.stxname as name from pg_statistic_ext s where (starts_with(s.stxname, 'nodes_fs_') or starts_with(s.stxname, 'published_nodes_fs_'))
      and not exists (select 1 from pg_class c where c.relkind = 'i' and c.relname = 'nodes_fx_' || right(s.stxname, 8))`),
  );
  for (const { name } of unused) await db.execute(sql.raw(`drop statistics if exists "${name}"`));
}

const ATTEMPTS = 5;

async function retried(step: (attempt: number) => Promise<unknown>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await step(attempt);
      return;
    } catch (err) {
      if (attempt >= ATTEMPTS) throw err;
      await new Promise((r) => setTimeout(r, 50 + Math.random() * 200 * attempt));
    }
  }
}

/** The indexes whose name matches `pattern` (a regular expression), valid or not. */
async function fieldIndexes(db: Db, pattern: string): Promise<{ name: string; valid: boolean }[]> {
  return rows<{ name: string; valid: boolean }>(
    await db.execute(sql`select c.relname as name, i.indisvalid as valid from pg_class c join pg_index i on i.indexrelid = c.oid
      where c.relkind = 'i' and (starts_with(c.relname, 'nodes_fx_') or starts_with(c.relname, 'published_nodes_fx_')) and c.relname ~ ${pattern}`),
  );
}
