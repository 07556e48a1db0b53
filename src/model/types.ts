// A project's content model compiled into what a frontend builds against: TypeScript
// types of its delivery answers, and the JSON Schema (2020-12) of the same answers.
//
// Our own small generator over the subset of JSON Schema a model uses, not json-schema-to-typescript:
// that library imports prettier (several MB of formatter into the server and its single binary, to
// format a string) and resolves $ref through @apidevtools/json-schema-ref-parser, which follows
// file and http references: in a multi-tenant server a tenant's schema must never make it read a
// file or fetch a URL. It also knows nothing of our formats (node and media become references, not
// strings) and would only cover the inner part: the unions by node and block type, the envelopes
// and the answer schema are ours anyway. Unsupported keywords widen to `unknown`, never to a lie.
import { isPlainObject } from "../lib/merge";
import type { ContentModelDefinition } from "./model";

type Schema = Record<string, unknown>;

export interface GeneratedFor {
  /** The project's slug, named in the header. */
  readonly project: string;
  readonly version: number;
}

const FORMAT_NOTES: Record<string, string> = {
  "date-time": 'ISO 8601 date-time (RFC 3339), e.g. "2026-01-31T09:00:00Z"',
  date: 'ISO 8601 date, e.g. "2026-01-31"',
  markdown: "Markdown",
  html: "HTML",
  uri: "URI",
  color: "hex color, e.g. #1a2b3c",
};

// ---- names ----

const pascal = (name: string): string =>
  name
    .split(/[^a-zA-Z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]?.toUpperCase() + w.slice(1))
    .join("")
    .replace(/^(\d)/, "T$1");

/** Fixed names of the generated file; a type's name never takes one of them. */
const FIXED = [
  "NodeRef",
  "MediaRef",
  "Seo",
  "Block",
  "Node",
  "AnyBlock",
  "AnyNode",
  "NodeBase",
  "UntypedNode",
  "UntypedBlock",
  "EntrySummary",
  "NodeAnswer",
  "EntriesAnswer",
  "NodeOfType",
  "BlockOfType",
];

interface Names {
  node: Map<string, { node: string; fields: string }>;
  block: Map<string, { block: string; data: string }>;
}

function allocateNames(def: ContentModelDefinition): Names {
  const taken = new Set(FIXED);
  // A stem and the suffixes it takes, numbered together when one of them is taken (blog-post, blog_post).
  const take = (stem: string, a: string, b: string): [string, string] => {
    let n = "";
    for (let i = 2; taken.has(`${stem}${n}${a}`) || taken.has(`${stem}${n}${b}`); i++) n = String(i);
    taken.add(`${stem}${n}${a}`).add(`${stem}${n}${b}`);
    return [`${stem}${n}${a}`, `${stem}${n}${b}`];
  };
  const block = new Map(
    def.block_types.map((t) => {
      const [name, data] = take(pascal(t.name), "Block", "Data");
      return [t.name, { block: name, data }];
    }),
  );
  const node = new Map(
    def.node_types.map((t) => {
      const [name, fields] = take(pascal(t.name), "Node", "Fields");
      return [t.name, { node: name, fields }];
    }),
  );
  return { node, block };
}

// ---- JSON Schema → TypeScript ----

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const key = (k: string): string => (IDENT.test(k) ? k : JSON.stringify(k));
const literal = (v: unknown): string => (v === null || ["string", "number", "boolean"].includes(typeof v) ? JSON.stringify(v) : "unknown");

function docComment(lines: string[], indent: string): string {
  const text = lines.filter((l) => l.trim() !== "").map((l) => l.replace(/\*\//g, "*\\/"));
  if (text.length === 0) return "";
  if (text.length === 1) return `${indent}/** ${text[0]?.replace(/\s+/g, " ")} */\n`;
  return `${indent}/**\n${text.map((l) => `${indent} * ${l.replace(/\s+/g, " ")}`).join("\n")}\n${indent} */\n`;
}

const describe = (s: Schema): string[] => {
  const note = typeof s.format === "string" ? FORMAT_NOTES[s.format] : undefined;
  return [typeof s.description === "string" ? s.description : "", note ?? ""];
};

/** `#/$defs/x` (or `#/definitions/x`) of the root schema; anything else is not followed. */
function localRef(root: Schema, ref: unknown): Schema | boolean | null {
  if (typeof ref !== "string") return null;
  const m = /^#\/(\$defs|definitions)\/([^/]+)$/.exec(ref);
  const defs = m ? root[m[1] as string] : undefined;
  const target =
    m && isPlainObject(defs)
      ? defs[
          decodeURIComponent(m[2] as string)
            .replace(/~1/g, "/")
            .replace(/~0/g, "~")
        ]
      : undefined;
  return isPlainObject(target) || typeof target === "boolean" ? target : null;
}

const MAX_DEPTH = 24;

/** The TypeScript type of values valid against `schema` (the subset a model uses; the rest widens to unknown). */
function tsType(schema: unknown, root: Schema, indent: string, depth = 0): string {
  if (schema === true || schema === undefined) return "unknown";
  if (schema === false) return "never";
  if (!isPlainObject(schema) || depth > MAX_DEPTH) return "unknown";
  if (schema.$ref !== undefined) {
    const target = localRef(root, schema.$ref);
    return target === null ? "unknown" : tsType(target, root, indent, depth + 1);
  }
  const types = Array.isArray(schema.type) ? schema.type.filter((t): t is string => typeof t === "string") : typeof schema.type === "string" ? [schema.type] : [];
  const nullable = types.includes("null");
  // References are expanded by delivery: the published target, or null when it is not.
  if (schema.format === "node") return "NodeRef | null";
  if (schema.format === "media") return "MediaRef | null";
  if ("const" in schema) return literal(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.length === 0 ? "never" : [...new Set(schema.enum.map(literal))].join(" | ");
  const parts = (list: unknown): string[] => (Array.isArray(list) ? list.map((s) => tsType(s, root, indent, depth + 1)) : []);
  if (Array.isArray(schema.anyOf) || Array.isArray(schema.oneOf)) {
    const union = [...new Set([...parts(schema.anyOf), ...parts(schema.oneOf)])];
    return union.length === 0 ? "never" : union.map((t) => (t.includes("\n") ? t : `(${t})`)).join(" | ");
  }
  if (Array.isArray(schema.allOf)) {
    const all = parts(schema.allOf).filter((t) => t !== "unknown");
    return all.length === 0 ? "unknown" : all.map((t) => `(${t})`).join(" & ");
  }
  const shapes = types.filter((t) => t !== "null");
  if (shapes.length === 0) {
    // No type keyword: judge by what the schema says of objects or arrays.
    if (isPlainObject(schema.properties)) shapes.push("object");
    else if (schema.items !== undefined) shapes.push("array");
    else return nullable ? "null" : "unknown";
  }
  const out = shapes.map((t) => {
    switch (t) {
      case "string":
        return "string";
      case "number":
      case "integer":
        return "number";
      case "boolean":
        return "boolean";
      case "array": {
        const item = tsType(schema.items, root, indent, depth + 1);
        return /^[A-Za-z]+$/.test(item) ? `${item}[]` : `Array<${item}>`;
      }
      case "object":
        return objectType(schema, root, indent, depth);
      default:
        return "unknown";
    }
  });
  if (nullable) out.push("null");
  return out.join(" | ");
}

function objectType(schema: Schema, root: Schema, indent: string, depth: number): string {
  const props = isPlainObject(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === "string") : []);
  const inner = `${indent}  `;
  const lines: string[] = [];
  for (const [name, sub] of Object.entries(props)) {
    const doc = isPlainObject(sub) ? docComment(describe(sub), inner) : "";
    lines.push(`${doc}${inner}${key(name)}${required.has(name) ? "" : "?"}: ${tsType(sub, root, inner, depth + 1)};`);
  }
  // Keys the schema does not name: `false` closes the object; a schema types them (unknown when
  // named properties are there too, since TypeScript wants every property to fit the index type);
  // absent or true, JSON Schema allows any.
  const extra = schema.additionalProperties;
  if (extra !== false) {
    const type = Object.keys(props).length === 0 && isPlainObject(extra) ? tsType(extra, root, inner, depth + 1) : "unknown";
    lines.push(`${inner}[key: string]: ${type};`);
  }
  return lines.length === 0 ? "Record<string, never>" : `{\n${lines.join("\n")}\n${indent}}`;
}

// ---- the TypeScript file ----

const HEADER = (p: GeneratedFor): string =>
  `// Types of the delivery answers of project "${p.project}", content model version ${p.version}.\n` +
  "// Generated by the content service (GET /admin/p/{ref}/model/types.ts, npm run cli -- model:types): do not edit.\n";

const COMMON = `
/** A reference to another node: the published target, or null when it is not published (or gone). */
export interface NodeRef {
  id: string;
  path: string;
  title: string;
  type: string;
}

/** A media item of the project's library, or null when it is gone. */
export interface MediaRef {
  id: string;
  url: string;
  width: number | null;
  height: number | null;
  alt: string | null;
  srcset: string | null;
  placeholder: string | null;
}

export interface Seo {
  canonical: string;
  robots: string;
  /** With an og_image naming a media item: its size (og:image:width/height), type and alt text in the answer's language. */
  og: { type: string; title: string; description: string | null; image: string | null; image_width?: number; image_height?: number; image_type?: string; image_alt?: string; url: string; locale: string; site_name: string };
  twitter: { card: string; title: string; description: string | null; image: string | null; image_alt?: string };
  hreflang: { locale: string; href: string }[];
  /** schema.org JSON-LD ({ "@context", "@graph" }). */
  jsonld: Record<string, unknown>;
  breadcrumbs: { title: string; path: string; href: string }[];
}

/** What every node answer carries beside its type, fields and blocks. */
export interface NodeBase {
  id: string;
  parent_id: string | null;
  slug: string;
  title: string;
  /** The locale of the returned content. */
  locale: string;
  /** The slug path in that locale. */
  path: string;
  seo: Seo;
  /** True when a published translation in the requested locale was merged in. */
  translated: boolean;
}

/** An entry of a collection, as GET /api/p/{ref}/entries lists it. */
export interface EntrySummary {
  id: string;
  slug: string;
  title: string;
  path: string;
  /** ISO 8601 date-time. */
  updated_at: string;
  /** The entry's fields (default locale; references to nodes expanded to NodeRef or null). */
  fields: Record<string, unknown>;
}

/** GET /api/p/{ref}/nodes/{id}, /nodes/by-path/…, /translations/nodes/{id}. */
export interface NodeAnswer<N extends AnyNode = AnyNode> {
  data: N;
}

/** GET /api/p/{ref}/entries?collection=… */
export interface EntriesAnswer {
  data: EntrySummary[];
  total: number;
  page: number;
  per_page: number;
}

export type NodeOfType<T extends Node["type"]> = Extract<Node, { type: T }>;
export type BlockOfType<T extends Block["type"]> = Extract<Block, { type: T }>;
`;

/** TypeScript source of the delivery answers of a project with model `def`. */
export function modelTypeScript(def: ContentModelDefinition, p: GeneratedFor): string {
  const names = allocateNames(def);
  const out: string[] = [HEADER(p), COMMON];
  // A union with a `type: string` member no longer narrows on `type` (a case "post" keeps the
  // untyped member, and its fields turn unknown). So Node and Block are the declared types only;
  // in a project that is not strict, what a read may also answer is AnyNode / AnyBlock, and the
  // guards isTypedNode / isTypedBlock (the one runtime part of the file) narrow back.
  const free = !def.strict;
  for (const b of def.block_types) {
    const n = names.block.get(b.name);
    if (!n) continue;
    out.push(`${docComment([b.description], "")}export type ${n.data} = ${tsType(b.schema, b.schema, "")};`);
    out.push(`export interface ${n.block} {\n  id: string;\n  type: ${JSON.stringify(b.name)};\n  order: number;\n  data: ${n.data};\n}\n`);
  }
  const blockUnion = [...names.block.values()].map((n) => n.block).join(" | ") || "never";
  out.push(`/** A block of a type the model declares: switch on \`type\`. */\nexport type Block = ${blockUnion};\n`);
  out.push(`export const BLOCK_TYPES = ${JSON.stringify(def.block_types.map((b) => b.name))} as const;\n`);
  if (free) {
    out.push(
      "/** A block of a type the model does not declare (the project is not strict, so there may be some). */\n" +
        "export interface UntypedBlock {\n  id: string;\n  type: string;\n  order: number;\n  data: Record<string, unknown>;\n}\n\n" +
        "export type AnyBlock = Block | UntypedBlock;\n\n" +
        "export function isTypedBlock(block: AnyBlock): block is Block {\n  return (BLOCK_TYPES as readonly string[]).includes(block.type);\n}\n",
    );
  } else out.push("export type AnyBlock = Block;\n\nexport function isTypedBlock(block: AnyBlock): block is Block {\n  return (BLOCK_TYPES as readonly string[]).includes(block.type);\n}\n");
  for (const t of def.node_types) {
    const n = names.node.get(t.name);
    if (!n) continue;
    // A node type that lists its blocks holds only those (declared: the model checks it, strict or not).
    const blocks = t.blocks === null ? "AnyBlock" : [...new Set(t.blocks.flatMap((a) => names.block.get(a.type)?.block ?? []))].join(" | ") || "never";
    out.push(`export type ${n.fields} = ${tsType(t.fields, t.fields, "")};`);
    out.push(`${docComment([t.description], "")}export interface ${n.node} extends NodeBase {\n  type: ${JSON.stringify(t.name)};\n  fields: ${n.fields};\n  blocks: Array<${blocks}>;\n}\n`);
  }
  const nodeUnion = [...names.node.values()].map((n) => n.node).join(" | ") || "never";
  out.push(`/** A node of a type the model declares: switch on \`type\`. */\nexport type Node = ${nodeUnion};\n`);
  out.push(`export const NODE_TYPES = ${JSON.stringify(def.node_types.map((t) => t.name))} as const;\n`);
  if (free) {
    out.push(
      "/** A node of a type the model does not declare (the project is not strict, so there may be some). */\n" +
        "export interface UntypedNode extends NodeBase {\n  type: string;\n  fields: Record<string, unknown>;\n  blocks: AnyBlock[];\n}\n\n" +
        "/** What a node read may answer. */\nexport type AnyNode = Node | UntypedNode;\n\n" +
        "export function isTypedNode(node: AnyNode): node is Node {\n  return (NODE_TYPES as readonly string[]).includes(node.type);\n}\n",
    );
  } else
    out.push(
      "/** What a node read may answer. */\nexport type AnyNode = Node;\n\nexport function isTypedNode(node: AnyNode): node is Node {\n  return (NODE_TYPES as readonly string[]).includes(node.type);\n}\n",
    );
  return out.join("\n");
}

// ---- the JSON Schema of the answers ----

const STRING = { type: "string" };
const INTEGER = { type: "integer" };
const NULL_OR = (s: Schema): Schema => ({ anyOf: [s, { type: "null" }] });
const closed = (properties: Record<string, unknown>, required = Object.keys(properties)): Schema => ({ type: "object", properties, required, additionalProperties: false });

/** A model schema as delivery answers it: references expanded, our own keywords (translatable, index) dropped. */
function answerSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(answerSchema);
  if (!isPlainObject(schema)) return schema;
  if (schema.format === "node") return { ...(typeof schema.description === "string" ? { description: schema.description } : {}), ...NULL_OR({ $ref: "#/$defs/NodeRef" }) };
  if (schema.format === "media") return { ...(typeof schema.description === "string" ? { description: schema.description } : {}), ...NULL_OR({ $ref: "#/$defs/MediaRef" }) };
  const out: Schema = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === "translatable" || k === "index" || k === "$schema" || k === "$id") continue;
    if (k === "const" || k === "enum" || k === "default" || k === "examples") {
      out[k] = v; // values, not schemas
      continue;
    }
    // $ref stays local to the type's own schema: its $defs move with it under a prefix.
    out[k] = k === "properties" || k === "$defs" || k === "definitions" || k === "patternProperties" ? mapValues(v, answerSchema) : answerSchema(v);
  }
  return out;
}
const mapValues = (v: unknown, f: (x: unknown) => unknown): unknown => (isPlainObject(v) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, f(x)])) : v);

/** Rewrites `#/$defs/x` of a type's own schema to `#/$defs/<Type>/$defs/x`, where it now lives. */
function rebase(schema: unknown, at: string): unknown {
  if (Array.isArray(schema)) return schema.map((s) => rebase(s, at));
  if (!isPlainObject(schema)) return schema;
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, k === "$ref" && typeof v === "string" && /^#\/(\$defs|definitions)\//.test(v) ? `#/$defs/${at}${v.slice(1)}` : rebase(v, at)]));
}

/** The JSON Schema (2020-12) of the delivery answers of a project with model `def`. */
export function modelJsonSchema(def: ContentModelDefinition, p: GeneratedFor): Schema {
  const names = allocateNames(def);
  const ref = (name: string): Schema => ({ $ref: `#/$defs/${name}` });
  const nodeBase: Record<string, unknown> = {
    id: STRING,
    parent_id: { type: ["string", "null"] },
    slug: STRING,
    title: STRING,
    locale: STRING,
    path: STRING,
    seo: ref("Seo"),
    translated: { type: "boolean" },
  };
  const defs: Record<string, unknown> = {
    NodeRef: closed({ id: STRING, path: STRING, title: STRING, type: STRING }),
    MediaRef: closed({
      id: STRING,
      url: STRING,
      width: { type: ["number", "null"] },
      height: { type: ["number", "null"] },
      alt: { type: ["string", "null"] },
      srcset: { type: ["string", "null"] },
      placeholder: { type: ["string", "null"] },
    }),
    Seo: closed({
      canonical: STRING,
      robots: STRING,
      og: closed(
        {
          type: STRING,
          title: STRING,
          description: { type: ["string", "null"] },
          image: { type: ["string", "null"] },
          image_width: INTEGER,
          image_height: INTEGER,
          image_type: STRING,
          image_alt: STRING,
          url: STRING,
          locale: STRING,
          site_name: STRING,
        },
        ["type", "title", "description", "image", "url", "locale", "site_name"],
      ),
      twitter: closed({ card: STRING, title: STRING, description: { type: ["string", "null"] }, image: { type: ["string", "null"] }, image_alt: STRING }, ["card", "title", "description", "image"]),
      hreflang: { type: "array", items: closed({ locale: STRING, href: STRING }) },
      jsonld: { type: "object" },
      breadcrumbs: { type: "array", items: closed({ title: STRING, path: STRING, href: STRING }) },
    }),
    EntrySummary: closed({ id: STRING, slug: STRING, title: STRING, path: STRING, updated_at: { type: "string", format: "date-time" }, fields: { type: "object" } }),
  };
  const block = (type: Schema, data: Schema): Schema => closed({ id: STRING, type, order: { type: "integer" }, data });
  const declaredBlocks = def.block_types.map((b) => b.name);
  for (const b of def.block_types) {
    const n = names.block.get(b.name);
    if (!n) continue;
    defs[n.data] = answerSchema(rebase(b.schema, n.data));
    defs[n.block] = { ...(b.description ? { description: b.description } : {}), ...block({ const: b.name }, ref(n.data)) };
  }
  const blockRefs = [...names.block.values()].map((n) => ref(n.block));
  if (!def.strict) {
    defs.UntypedBlock = block({ type: "string", not: { enum: declaredBlocks } }, { type: "object" });
    blockRefs.push(ref("UntypedBlock"));
  }
  defs.Block = { anyOf: blockRefs };
  const nodeRefs: Schema[] = [];
  for (const t of def.node_types) {
    const n = names.node.get(t.name);
    if (!n) continue;
    defs[n.fields] = answerSchema(rebase(t.fields, n.fields));
    const items = t.blocks === null ? ref("Block") : { anyOf: [...new Set(t.blocks.flatMap((a) => names.block.get(a.type)?.block ?? []))].map(ref) };
    defs[n.node] = {
      ...(t.description ? { description: t.description } : {}),
      ...closed({ ...nodeBase, type: { const: t.name }, fields: ref(n.fields), blocks: { type: "array", items } }),
    };
    nodeRefs.push(ref(n.node));
  }
  if (!def.strict || def.node_types.length === 0) {
    defs.UntypedNode = closed({ ...nodeBase, type: { type: "string", not: { enum: def.node_types.map((t) => t.name) } }, fields: { type: "object" }, blocks: { type: "array", items: ref("Block") } });
    nodeRefs.push(ref("UntypedNode"));
  }
  defs.Node = { anyOf: nodeRefs };
  defs.NodeAnswer = closed({ data: ref("Node") });
  defs.EntriesAnswer = closed({ data: { type: "array", items: ref("EntrySummary") }, total: { type: "integer" }, page: { type: "integer" }, per_page: { type: "integer" } });
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    title: `Delivery answers of project "${p.project}", content model version ${p.version}`,
    description: "A node read ($defs/NodeAnswer) or an entries list ($defs/EntriesAnswer).",
    anyOf: [ref("NodeAnswer"), ref("EntriesAnswer")],
    $defs: defs,
  };
}
