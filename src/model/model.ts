// The content model's wire shapes: a project's block types and node types. A block
// type's `schema` is the JSON Schema (2020-12) of its `data`; a node type's `fields` the JSON Schema
// of its `fields`. Beside the JSON Schema keywords, a property may say `translatable: true` (a
// translation may override it; machine translation translates it) and `index: true` (delivery may
// filter and sort entries by it), and use the formats markdown, html, uri, date-time, color, node
// (the id of another node of the project) and media (the id of a media item).
import { z } from "zod";
import { Timestamp } from "../lib/schemas";

export const TYPE_NAME = /^[a-z][a-z0-9_-]{0,63}$/;
const TypeName = z.string().regex(TYPE_NAME, "a type name is 1-64 characters: a-z first, then a-z, 0-9, _ or -");
const Description = z.string().max(2000).describe("what the type is for; told to agents and editors");
const JsonSchema = z.record(z.string(), z.unknown()).describe("a JSON Schema (2020-12) of an object");

export const BlockTypeIn = z.object({
  description: Description.default(""),
  schema: JsonSchema.default({ type: "object" }).describe("JSON Schema (2020-12) of the block's data"),
});
export const BlockTypeOut = BlockTypeIn.extend({ name: TypeName });

const AllowedBlock = z.object({
  type: TypeName,
  min: z.number().int().min(0).max(500).optional(),
  max: z.number().int().min(0).max(500).optional(),
});

export const NodeTypeIn = z.object({
  description: Description.default(""),
  fields: JsonSchema.default({ type: "object" }).describe("JSON Schema (2020-12) of the node's fields"),
  blocks: z.array(AllowedBlock).max(200).nullable().default(null).describe("the block types a node of this type may hold, with counts; null: any"),
  children: z.array(TypeName).max(200).nullable().default(null).describe("the node types its children may have; null: any"),
});
export const NodeTypeOut = NodeTypeIn.extend({ name: TypeName });

export const ContentModelIn = z.object({
  strict: z.boolean().default(false).describe("true: a block or node type the model does not declare is refused; false: it stays free-form"),
  block_types: z.array(BlockTypeOut).max(500).default([]),
  node_types: z.array(NodeTypeOut).max(500).default([]),
});
export const ContentModelOut = ContentModelIn.extend({
  version: z.number().int().describe("counts the model's changes; 0: the project has no model yet"),
  updated_at: Timestamp.nullable(),
});

export type ContentModelDefinition = z.output<typeof ContentModelIn>;
export type BlockTypeDef = z.output<typeof BlockTypeOut>;
export type NodeTypeDef = z.output<typeof NodeTypeOut>;

/** The model of a project that has none: free-form everything. */
export const EMPTY_MODEL: ContentModelDefinition = { strict: false, block_types: [], node_types: [] };

/** One way content fails the model: where (a JSON Pointer into the written input), which rule, and why. */
export const ViolationOut = z.object({ pointer: z.string(), rule: z.string(), message: z.string() });
export type Violation = z.output<typeof ViolationOut>;
/** At most this many violations are reported for one write. */
export const MAX_VIOLATIONS = 50;
