// A content model compiled into validators (Ajv, JSON Schema 2020-12), once per model version.
// Ajv because it compiles each schema into a function once (a write then costs a call, not a
// walk of the schema), implements 2020-12 whole, runs unchanged on Bun, Node and Deno, and reports
// every failure with a JSON Pointer (instancePath), which is what an agent needs to fix its call.
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { deepMerge, isPlainObject } from "../lib/merge";
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

const HEX_COLOR = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function newAjv(): Ajv2020 {
  // strict: an unknown keyword or format in a schema is an error of the model, not silently ignored.
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true, validateFormats: true });
  addFormats(ajv, ["uri", "date-time", "date", "time", "email"]);
  ajv.addFormat("markdown", true).addFormat("html", true).addFormat("color", HEX_COLOR).addFormat("node", UUID).addFormat("media", UUID);
  ajv.addKeyword({ keyword: "translatable", schemaType: "boolean" }).addKeyword({ keyword: "index", schemaType: "boolean" });
  return ajv;
}

const message = (e: ErrorObject): string => {
  if (e.keyword === "additionalProperties") return `property "${String(e.params.additionalProperty)}" is not declared`;
  if (e.keyword === "required") return `property "${String(e.params.missingProperty)}" is required`;
  return e.message ?? e.keyword;
};

function violationsOf(validate: ValidateFunction, value: unknown, prefix: string): Violation[] {
  if (validate(value)) return [];
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

/** Compiles `definition` (version `version`), or throws ModelError saying what is wrong with it. */
export function compileModel(definition: ContentModelDefinition, version: number): CompiledModel {
  const ajv = newAjv();
  const problems: Violation[] = [];
  const compile = (schema: Record<string, unknown>, pointer: string): ValidateFunction | null => {
    try {
      return ajv.compile(schema);
    } catch (err) {
      problems.push({ pointer, rule: "schema", message: err instanceof Error ? err.message : String(err) });
      return null;
    }
  };
  const blocks = new Map<string, { def: BlockTypeDef; validate: ValidateFunction | null }>();
  definition.block_types.forEach((def, i) => {
    if (blocks.has(def.name)) problems.push({ pointer: `/block_types/${i}/name`, rule: "unique", message: `block type "${def.name}" is declared twice` });
    blocks.set(def.name, { def, validate: compile(def.schema, `/block_types/${i}/schema`) });
  });
  const nodes = new Map<string, { def: NodeTypeDef; validate: ValidateFunction | null }>();
  definition.node_types.forEach((def, i) => {
    if (nodes.has(def.name)) problems.push({ pointer: `/node_types/${i}/name`, rule: "unique", message: `node type "${def.name}" is declared twice` });
    nodes.set(def.name, { def, validate: compile(def.fields, `/node_types/${i}/fields`) });
  });
  definition.node_types.forEach((def, i) => {
    def.blocks?.forEach((b, j) => {
      if (!blocks.has(b.type)) problems.push({ pointer: `/node_types/${i}/blocks/${j}/type`, rule: "declared", message: `block type "${b.type}" is not declared` });
      if (b.min !== undefined && b.max !== undefined && b.min > b.max) problems.push({ pointer: `/node_types/${i}/blocks/${j}`, rule: "range", message: "min is greater than max" });
    });
    def.children?.forEach((c, j) => {
      if (!nodes.has(c)) problems.push({ pointer: `/node_types/${i}/children/${j}`, rule: "declared", message: `node type "${c}" is not declared` });
    });
  });
  if (problems.length > 0) throw new ModelError(problems.slice(0, MAX_VIOLATIONS));

  const validateNode = (node: NodeSnapshot): Violation[] => {
    const out: Violation[] = [];
    const nodeType = nodes.get(node.type);
    if (!nodeType && definition.strict) out.push({ pointer: "/type", rule: "node_type", message: `node type "${node.type}" is not declared in the content model` });
    if (nodeType?.validate) out.push(...violationsOf(nodeType.validate, node.fields, "/fields"));
    const parent = node.parent_type === null ? undefined : nodes.get(node.parent_type);
    if (parent?.def.children && !parent.def.children.includes(node.type)) {
      out.push({ pointer: "/type", rule: "children", message: `a "${node.parent_type}" node holds only ${parent.def.children.map((c) => `"${c}"`).join(", ") || "no"} children` });
    }
    const allowed = nodeType?.def.blocks ?? null;
    const counts = new Map<string, number>();
    const byId = new Map<string, { type: string; data: Record<string, unknown> }>();
    node.blocks.forEach((b, i) => {
      byId.set(b.id, b);
      counts.set(b.type, (counts.get(b.type) ?? 0) + 1);
      const blockType = blocks.get(b.type);
      if (allowed && !allowed.some((a) => a.type === b.type))
        out.push({
          pointer: `/blocks/${i}/type`,
          rule: "allowed_blocks",
          message: `a "${node.type}" node does not hold "${b.type}" blocks (allowed: ${allowed.map((a) => a.type).join(", ") || "none"})`,
        });
      else if (!blockType && definition.strict) out.push({ pointer: `/blocks/${i}/type`, rule: "block_type", message: `block type "${b.type}" is not declared in the content model` });
      if (blockType?.validate) out.push(...violationsOf(blockType.validate, b.data, `/blocks/${i}/data`));
    });
    for (const a of allowed ?? []) {
      const n = counts.get(a.type) ?? 0;
      if (a.min !== undefined && n < a.min) out.push({ pointer: "/blocks", rule: "min_blocks", message: `a "${node.type}" node needs at least ${a.min} "${a.type}" block(s), has ${n}` });
      if (a.max !== undefined && n > a.max) out.push({ pointer: "/blocks", rule: "max_blocks", message: `a "${node.type}" node holds at most ${a.max} "${a.type}" block(s), has ${n}` });
    }
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
    return out.slice(0, MAX_VIOLATIONS);
  };

  return {
    version,
    definition,
    blockType: (name) => blocks.get(name)?.def,
    nodeType: (name) => nodes.get(name)?.def,
    validateNode,
  };
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
