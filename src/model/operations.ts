import { z } from "zod";
import { IDEMPOTENT_WRITE, projectOperation, READ_ONLY } from "../core/operation";
import { type BlockTypeDef, BlockTypeIn, BlockTypeOut, type ContentModelDefinition, ContentModelIn, ContentModelOut, NodeTypeIn, NodeTypeOut, TYPE_NAME, ViolationOut } from "./model";
import { deleteType, getBlockType, getModel, getNodeType, putType, type StoredModel, writeModel } from "./service";

const TypeName = z.string().regex(TYPE_NAME, "a type name is 1-64 characters: a-z first, then a-z, 0-9, _ or -");
const Flags = {
  force: z.boolean().default(false).describe("apply the model even though existing nodes no longer match it (they are listed in the answer)"),
  dry_run: z.boolean().default(false).describe("only report which nodes would no longer match; nothing is written"),
};
const FLAG_NAMES = ["force", "dry_run"] as const;
const InvalidNodeOut = z.object({ node_id: z.string(), path: z.string(), type: z.string(), violations: z.array(ViolationOut) });
const Check = {
  applied: z.boolean().describe("false for a dry run"),
  invalid: z.array(InvalidNodeOut).describe("nodes the model does not accept (at most 50)"),
  count: z.number().int().describe("how many nodes the model does not accept, in all"),
};
const WRITE_ERRORS = [409];
const MODEL_PATH = "/admin/p/:ref/model";
const CHECKED =
  "The new model is checked against every node of the project: when some would no longer match, nothing is written and the answer is 409 conflict " +
  "listing them (details.invalid, at most 50: node_id, path, type, violations; details.count), unless force is true (applied; they are listed in the answer). " +
  "dry_run only reports. A model that is not valid itself is 400 invalid_content, details.violations pointing into the model.";

const toOut = (m: StoredModel): z.input<typeof ContentModelOut> => ({ strict: m.strict, block_types: m.block_types, node_types: m.node_types, version: m.version, updated_at: m.updated_at });

const getModelOp = projectOperation({
  name: "get_content_model",
  title: "Read the content model",
  description:
    "Read the project's content model in a compact form: per block type and node type its description and properties (type, format, required, translatable, enum), " +
    'per node type the blocks it allows ("hero 0..1": type, min..max) and the types its children may have. Write node fields and block data that match it. ' +
    "strict: false means types the model does not declare are free-form. compact: false gives the full JSON Schemas.",
  scopes: ["content:read"],
  input: z.object({ compact: z.boolean().default(true).describe("true (default): a short summary per type; false: the model as stored, full JSON Schemas") }),
  output: z.object({ model: z.record(z.string(), z.unknown()) }),
  tool: READ_ONLY,
  http: { method: "GET", path: `${MODEL_PATH}/compact`, data: "model", tag: "model", summary: "Read the content model as an agent reads it (compact=false: as stored)" },
  async run({ deps, project }, { compact }) {
    const model = await getModel(deps.db, project.id);
    return { model: compact ? compactModel(model) : toOut(model) };
  },
});

const readModelOp = projectOperation({
  name: "read_content_model",
  title: "Read the content model",
  description: "The project's content model: block types, node types, strict, version (0 and empty lists when it has none).",
  scopes: ["content:read"],
  input: z.object({}),
  output: z.object({ model: ContentModelOut }),
  http: { method: "GET", path: MODEL_PATH, data: "model", tag: "model", summary: "Read the content model (version 0 when there is none)" },
  run: async ({ deps, project }) => ({ model: toOut(await getModel(deps.db, project.id)) }),
});

const updateModelOp = projectOperation({
  name: "update_content_model",
  title: "Replace the content model",
  description: `Replace the project's whole content model (strict, block_types, node_types); answers the new version. ${CHECKED} Read it first with get_content_model (compact: false) to keep what you do not change.`,
  scopes: ["model:write"],
  input: ContentModelIn.extend(Flags),
  output: z.object({ model: ContentModelOut, ...Check }),
  tool: IDEMPOTENT_WRITE,
  http: { method: "PUT", path: MODEL_PATH, query: FLAG_NAMES, data: "model", tag: "model", summary: "Replace the content model (?force=true, ?dry_run=true)", errors: WRITE_ERRORS },
  async run({ deps, project, write }, { force, dry_run, ...definition }) {
    const r = await writeModel(deps.db, write, project.id, () => definition, { force, dry_run });
    return { ...r, model: toOut(r.model) };
  },
});

/** GET, PUT and DELETE of one block type or node type. */
function typeOperations(kind: "block" | "node", input: z.ZodObject, output: z.ZodObject) {
  const list = kind === "block" ? "block_types" : "node_types";
  const field = kind === "block" ? "block_type" : "node_type";
  const path = `${MODEL_PATH}/${kind}s/:name`;
  const http = { path, tag: "model" } as const;
  const get = projectOperation({
    name: `read_${field}`,
    title: `Read a ${kind} type`,
    description: `One ${kind} type of the content model, by name.`,
    scopes: ["content:read"],
    input: z.object({ name: TypeName }),
    output: z.object({ [field]: output, version: z.number().int() }),
    http: { ...http, method: "GET", data: field, summary: `Read a ${kind} type` },
    run: async ({ deps, project }, { name }) => (await (kind === "block" ? getBlockType(deps.db, project.id, name) : getNodeType(deps.db, project.id, name))) as never,
  });
  const put = projectOperation({
    name: `put_${field}`,
    title: `Add or replace a ${kind} type`,
    description: `Add the ${kind} type or replace it, keeping the rest of the model. ${CHECKED}`,
    scopes: ["model:write"],
    input: input.extend({ name: TypeName, ...Flags }),
    output: z.object({ [field]: output, version: z.number().int(), ...Check }),
    http: { ...http, method: "PUT", query: FLAG_NAMES, data: field, summary: `Add or replace a ${kind} type (?force=true, ?dry_run=true)`, errors: WRITE_ERRORS },
    async run({ deps, project, write }, args) {
      const { force, dry_run, ...def } = args as { force: boolean; dry_run: boolean; name: string };
      const r = await writeModel(deps.db, write, project.id, putType(list, def as BlockTypeDef), { force, dry_run });
      return { [field]: def, version: r.model.version, applied: r.applied, invalid: r.invalid, count: r.count };
    },
  });
  const del = projectOperation({
    name: `delete_${field}`,
    title: `Delete a ${kind} type`,
    description: `Remove the ${kind} type from the content model (what it was used for becomes free-form unless the model is strict). ${CHECKED}`,
    scopes: ["model:write"],
    input: z.object({ name: TypeName, ...Flags }),
    output: z.object({ version: z.number().int(), ...Check }),
    http: { ...http, method: "DELETE", summary: `Delete a ${kind} type (?force=true, ?dry_run=true)`, errors: WRITE_ERRORS },
    async run({ deps, project, write }, { name, force, dry_run }) {
      const r = await writeModel(deps.db, write, project.id, deleteType(list, name), { force, dry_run });
      return { version: r.model.version, applied: r.applied, invalid: r.invalid, count: r.count };
    },
  });
  return [get, put, del];
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** One property in a line an agent reads: type, format, required, translatable, enum, and nested properties. */
function compactProps(schema: unknown): Json | undefined {
  if (!isObject(schema) || !isObject(schema.properties)) return undefined;
  const required = Array.isArray(schema.required) ? schema.required : [];
  const out: Json = {};
  for (const [name, sub] of Object.entries(schema.properties)) {
    if (!isObject(sub)) continue;
    const p: Json = {};
    for (const k of ["type", "format", "enum", "const", "description", "minLength", "maxLength", "minimum", "maximum", "pattern"] as const) if (sub[k] !== undefined) p[k] = sub[k];
    if (required.includes(name)) p.required = true;
    if (sub.translatable === true) p.translatable = true;
    if (sub.index === true) p.index = true;
    const nested = compactProps(sub);
    if (nested) p.properties = nested;
    if (isObject(sub.items))
      p.items = compactProps(sub.items) ?? Object.fromEntries(["type", "format", "enum"].flatMap((k) => (isObject(sub.items) && sub.items[k] !== undefined ? [[k, sub.items[k]]] : [])));
    out[name] = p;
  }
  return out;
}

/** The model as an agent reads it in one call: per type its description, properties and what it allows. */
function compactModel(model: StoredModel | (ContentModelDefinition & { version: number })): Json {
  const closed = (schema: Json): boolean => schema.additionalProperties === false || schema.unevaluatedProperties === false;
  return {
    version: model.version,
    strict: model.strict,
    block_types: Object.fromEntries(
      model.block_types.map((b) => [b.name, { description: b.description, data: compactProps(b.schema) ?? {}, ...(closed(b.schema) ? { other_properties: false } : {}) }]),
    ),
    node_types: Object.fromEntries(
      model.node_types.map((n) => [
        n.name,
        {
          description: n.description,
          fields: compactProps(n.fields) ?? {},
          ...(closed(n.fields) ? { other_fields: false } : {}),
          blocks: n.blocks === null ? "any" : n.blocks.map((b) => `${b.type} ${b.min ?? 0}..${b.max ?? "*"}`),
          children: n.children === null ? "any" : n.children,
        },
      ]),
    ),
  };
}

export const modelOperations = [getModelOp, updateModelOp, readModelOp, ...typeOperations("block", BlockTypeIn, BlockTypeOut), ...typeOperations("node", NodeTypeIn, NodeTypeOut)];
