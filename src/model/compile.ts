// A content model compiled into validators (Ajv, JSON Schema 2020-12), once per model version.
// Ajv because it compiles each schema into a function once (a write then costs a call, not a
// walk of the schema), implements 2020-12 whole, runs unchanged on Bun, Node and Deno, and reports
// every failure with a JSON Pointer (instancePath), which is what an agent needs to fix its call.
import type { ErrorObject, ValidateFunction } from "ajv/dist/2020.js";
import { deepMerge, isPlainObject } from "../lib/merge";
import { checkSchema, newAjv } from "./ajv";
import { CHECK_BUDGET, CHECK_DEADLINE_MS, CostExceeded, priced, withBudget } from "./cost";
import { type BlockTypeDef, type ContentModelDefinition, MAX_VIOLATIONS, type NodeTypeDef, type Violation } from "./model";

/** What the model checks of one node: its own type and values, its blocks, its translations' overrides. */
export interface NodeSnapshot {
  readonly type: string;
  /** The parent's type, or null for a top-level node. */
  readonly parent_type: string | null;
  readonly fields: Record<string, unknown>;
  readonly blocks: readonly { readonly id: string; readonly type: string; readonly data: Record<string, unknown> }[];
  readonly translations: readonly { readonly locale: string; readonly fields: Record<string, unknown>; readonly blocks: Record<string, Record<string, unknown>> }[];
}

export interface CompiledModel {
  readonly version: number;
  readonly definition: ContentModelDefinition;
  blockType(name: string): BlockTypeDef | undefined;
  nodeType(name: string): NodeTypeDef | undefined;
  /** Every way `node` fails the model (at most MAX_VIOLATIONS), pointers relative to the node's wire form. */
  validateNode(node: NodeSnapshot): Violation[];
}

/** A model that is not one (a schema Ajv refuses, a name used twice, a type named but not declared). */
export class ModelError extends Error {
  constructor(readonly violations: Violation[]) {
    super(violations.map((v) => `${v.pointer}: ${v.message}`).join("; "));
  }
}

const message = (e: ErrorObject): string => {
  if (e.keyword === "additionalProperties") return `property "${String(e.params.additionalProperty)}" is not declared`;
  if (e.keyword === "required") return `property "${String(e.params.missingProperty)}" is required`;
  return e.message ?? e.keyword;
};

function violationsOf(validate: ValidateFunction, value: unknown, prefix: string): Violation[] {
  try {
    if (validate(value)) return [];
  } catch (err) {
    if (err instanceof CostExceeded) err.pointer ??= prefix;
    throw err;
  }
  return (validate.errors ?? []).map((e) => {
    const at =
      e.keyword === "required"
        ? `${e.instancePath}/${pointerSegment(String(e.params.missingProperty))}`
        : e.keyword === "additionalProperties"
          ? `${e.instancePath}/${pointerSegment(String(e.params.additionalProperty))}`
          : e.instancePath;
    return { pointer: `${prefix}${at}`, rule: e.keyword, message: message(e) };
  });
}

/** What `override` merged over `base` fails that `base` alone does not (the base's own are reported once, at the base). */
function causedBy(validate: ValidateFunction, base: Record<string, unknown>, override: Record<string, unknown>, prefix: string): Violation[] {
  const own = new Set(violationsOf(validate, base, "").map((v) => `${v.rule} ${v.pointer}`));
  return violationsOf(validate, deepMerge(base, override), "").flatMap((v) => (own.has(`${v.rule} ${v.pointer}`) ? [] : [{ ...v, pointer: `${prefix}${v.pointer}` }]));
}

/** RFC 6901: `~` and `/` inside a pointer segment. */
export const pointerSegment = (segment: string): string => segment.replace(/~/g, "~0").replace(/\//g, "~1");

/**
 * Which parts of `override` a translation may not set: every key whose schema (or an ancestor's) is
 * not `translatable`. Without a declared schema for the key nothing there is translatable.
 */
function untranslatable(schema: Record<string, unknown> | undefined, override: unknown, pointer: string, out: Violation[]): void {
  if (!isPlainObject(override)) return;
  const props = isPlainObject(schema?.properties) ? (schema.properties as Record<string, unknown>) : {};
  for (const [key, value] of Object.entries(override)) {
    const sub = props[key];
    const at = `${pointer}/${pointerSegment(key)}`;
    if (!isPlainObject(sub)) out.push({ pointer: at, rule: "translatable", message: `"${key}" is not a declared property, so a translation cannot set it` });
    else if (sub.translatable === true) continue;
    else if (isPlainObject(value) && isPlainObject(sub.properties)) untranslatable(sub, value, at, out);
    else out.push({ pointer: at, rule: "translatable", message: `"${key}" is not translatable (the model's schema does not say translatable: true)` });
  }
}

/** Limits of a content model, so that compiling one stays short (Ajv: about 60-80 µs a schema). */
const MODEL_MAX_BYTES = 262_144;
/** Schemas (the type's own and every nested one) in one block or node type. */
const TYPE_MAX_SCHEMAS = 100;
/** Compiling or checking yields to the event loop after this long (ms). */
const SLICE_MS = 10;

export interface CompileOptions {
  /**
   * A model already stored (read back to check writes): the limits a model write enforces do not
   * make it fail; a type that cannot be compiled refuses the content of that type (violation
   * `model`) instead of failing every write of the project.
   */
  readonly stored?: boolean;
}

interface Compiled<T> {
  readonly def: T;
  readonly validate: ValidateFunction | null;
  /** Why the type could not be compiled (a stored model only). */
  readonly broken: string | null;
}

/** Returns an async function that yields to the event loop once SLICE_MS have passed since it last did. */
export function slicer(): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < SLICE_MS) return;
    await new Promise((resolve) => setTimeout(resolve, 0)); // a turn of the loop, for the other projects' requests
    since = performance.now();
  };
}

/** Compiles `definition` (version `version`), or throws ModelError saying what is wrong with it. */
export function compileModel(definition: ContentModelDefinition, version: number, opts: CompileOptions = {}): CompiledModel {
  const steps = compiling(definition, version, opts);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** compileModel, yielding to the event loop between types once SLICE_MS have passed. */
export async function compileModelSliced(definition: ContentModelDefinition, version: number, opts: CompileOptions = {}): Promise<CompiledModel> {
  const steps = compiling(definition, version, opts);
  const pause = slicer();
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    await pause();
  }
}

/** The compilation, one step per type. */
function* compiling(definition: ContentModelDefinition, version: number, opts: CompileOptions): Generator<void, CompiledModel> {
  const bytes = new TextEncoder().encode(JSON.stringify(definition)).length;
  if (bytes > MODEL_MAX_BYTES && !opts.stored) throw new ModelError([{ pointer: "", rule: "size", message: `the content model is ${bytes} bytes of JSON; a model is at most ${MODEL_MAX_BYTES}` }]);
  const ajv = newAjv();
  const problems: Violation[] = [];
  const compile = <T>(def: T, schema: Record<string, unknown>, pointer: string): Compiled<T> => {
    const count = { schemas: 0 };
    const copy = priced(schema, count) as Record<string, unknown>;
    let problem: Violation;
    if (count.schemas > TYPE_MAX_SCHEMAS) {
      problem = { pointer, rule: "size", message: `the schema holds ${count.schemas} schemas (nested ones included); a type holds at most ${TYPE_MAX_SCHEMAS}` };
    } else {
      try {
        checkSchema(copy);
        return { def, validate: ajv.compile(copy), broken: null };
      } catch (err) {
        problem = { pointer, rule: "schema", message: err instanceof Error ? err.message : String(err) };
      }
    }
    problems.push(problem);
    return { def, validate: null, broken: problem.message };
  };
  const blocks = new Map<string, Compiled<BlockTypeDef>>();
  for (const [i, def] of definition.block_types.entries()) {
    if (blocks.has(def.name)) problems.push({ pointer: `/block_types/${i}/name`, rule: "unique", message: `block type "${def.name}" is declared twice` });
    blocks.set(def.name, compile(def, def.schema, `/block_types/${i}/schema`));
    yield;
  }
  const nodes = new Map<string, Compiled<NodeTypeDef>>();
  for (const [i, def] of definition.node_types.entries()) {
    if (nodes.has(def.name)) problems.push({ pointer: `/node_types/${i}/name`, rule: "unique", message: `node type "${def.name}" is declared twice` });
    nodes.set(def.name, compile(def, def.fields, `/node_types/${i}/fields`));
    yield;
  }
  definition.node_types.forEach((def, i) => {
    def.blocks?.forEach((b, j) => {
      if (!blocks.has(b.type)) problems.push({ pointer: `/node_types/${i}/blocks/${j}/type`, rule: "declared", message: `block type "${b.type}" is not declared` });
      if (b.min !== undefined && b.max !== undefined && b.min > b.max) problems.push({ pointer: `/node_types/${i}/blocks/${j}`, rule: "range", message: "min is greater than max" });
    });
    def.children?.forEach((c, j) => {
      if (!nodes.has(c)) problems.push({ pointer: `/node_types/${i}/children/${j}`, rule: "declared", message: `node type "${c}" is not declared` });
    });
  });
  if (problems.length > 0 && !opts.stored) throw new ModelError(problems.slice(0, MAX_VIOLATIONS));
  const validateNode = (node: NodeSnapshot): Violation[] => {
    const out: Violation[] = [];
    try {
      withBudget(CHECK_BUDGET, CHECK_DEADLINE_MS, () => checkNode(definition, blocks, nodes, node, out));
    } catch (err) {
      if (!(err instanceof CostExceeded)) throw err;
      out.push({ pointer: err.pointer ?? "", rule: "cost", message: err.message });
    }
    return out.slice(0, MAX_VIOLATIONS);
  };
  return { version, definition, blockType: (name) => blocks.get(name)?.def, nodeType: (name) => nodes.get(name)?.def, validateNode };
}

/** The violations of one value against a compiled type: its schema's, or why the type cannot check it. */
function checked(type: Compiled<BlockTypeDef | NodeTypeDef>, kind: string, value: unknown, prefix: string): Violation[] {
  if (type.broken !== null)
    return [{ pointer: prefix, rule: "model", message: `the content model's ${kind} type "${type.def.name}" cannot be checked (${type.broken}); write the model again within its limits` }];
  return type.validate ? violationsOf(type.validate, value, prefix) : [];
}

/** Every way `node` fails the model, into `out`: its type, fields, blocks, then its translations. */
function checkNode(
  definition: ContentModelDefinition,
  blocks: ReadonlyMap<string, Compiled<BlockTypeDef>>,
  nodes: ReadonlyMap<string, Compiled<NodeTypeDef>>,
  node: NodeSnapshot,
  out: Violation[],
): void {
  const nodeType = nodes.get(node.type);
  if (!nodeType && definition.strict) out.push({ pointer: "/type", rule: "node_type", message: `node type "${node.type}" is not declared in the content model` });
  if (nodeType) out.push(...checked(nodeType, "node", node.fields, "/fields"));
  const parent = node.parent_type === null ? undefined : nodes.get(node.parent_type);
  if (parent?.def.children && !parent.def.children.includes(node.type)) {
    out.push({ pointer: "/type", rule: "children", message: `a "${node.parent_type}" node holds only ${parent.def.children.map((c) => `"${c}"`).join(", ") || "no"} children` });
  }
  const allowed = nodeType?.def.blocks ?? null;
  const counts = new Map<string, number>();
  node.blocks.forEach((b, i) => {
    counts.set(b.type, (counts.get(b.type) ?? 0) + 1);
    const blockType = blocks.get(b.type);
    if (allowed && !allowed.some((a) => a.type === b.type))
      out.push({
        pointer: `/blocks/${i}/type`,
        rule: "allowed_blocks",
        message: `a "${node.type}" node does not hold "${b.type}" blocks (allowed: ${allowed.map((a) => a.type).join(", ") || "none"})`,
      });
    else if (!blockType && definition.strict) out.push({ pointer: `/blocks/${i}/type`, rule: "block_type", message: `block type "${b.type}" is not declared in the content model` });
    if (blockType) out.push(...checked(blockType, "block", b.data, `/blocks/${i}/data`));
  });
  for (const a of allowed ?? []) {
    const n = counts.get(a.type) ?? 0;
    if (a.min !== undefined && n < a.min) out.push({ pointer: "/blocks", rule: "min_blocks", message: `a "${node.type}" node needs at least ${a.min} "${a.type}" block(s), has ${n}` });
    if (a.max !== undefined && n > a.max) out.push({ pointer: "/blocks", rule: "max_blocks", message: `a "${node.type}" node holds at most ${a.max} "${a.type}" block(s), has ${n}` });
  }
  checkTranslations(blocks, nodeType, node, out);
}

/** What each translation's overrides fail: keys that are not translatable, values the merged whole fails. */
function checkTranslations(blocks: ReadonlyMap<string, Compiled<BlockTypeDef>>, nodeType: Compiled<NodeTypeDef> | undefined, node: NodeSnapshot, out: Violation[]): void {
  const byId = new Map(node.blocks.map((b) => [b.id, b]));
  for (const t of node.translations) {
    const at = `/translations/${pointerSegment(t.locale)}`;
    if (nodeType) {
      untranslatable(nodeType.def.fields, t.fields, `${at}/fields`, out);
      if (nodeType.validate && Object.keys(t.fields).length > 0) out.push(...causedBy(nodeType.validate, node.fields, t.fields, `${at}/fields`));
    }
    for (const [id, override] of Object.entries(t.blocks)) {
      const block = byId.get(id);
      const blockType = block && blocks.get(block.type);
      if (!block || !blockType) continue;
      untranslatable(blockType.def.schema, override, `${at}/blocks/${pointerSegment(id)}`, out);
      if (blockType.validate) out.push(...causedBy(blockType.validate, block.data, override, `${at}/blocks/${pointerSegment(id)}`));
    }
  }
}
/**
 * Calls `visit` for every property schema under `schema` (objects' properties, arrays' items),
 * with its path of property names ("*" for array items): machine translation finds the
 * translatable strings this way, delivery the node references and media.
 */
export function walkSchema(schema: unknown, visit: (path: readonly string[], sub: Record<string, unknown>) => void, path: readonly string[] = []): void {
  if (!isPlainObject(schema)) return;
  if (path.length > 0) visit(path, schema);
  if (isPlainObject(schema.properties)) for (const [k, sub] of Object.entries(schema.properties)) walkSchema(sub, visit, [...path, k]);
  if (isPlainObject(schema.items)) walkSchema(schema.items, visit, [...path, "*"]);
}
