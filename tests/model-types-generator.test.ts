// The generator over the JSON Schema subset a model uses: each keyword's TypeScript, checked by the
// real compiler with modules that must and must not type-check, and the answer schema's shape.
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { compileModel } from "../src/model/compile";
import type { ContentModelDefinition } from "../src/model/model";
import { modelJsonSchema, modelTypeScript } from "../src/model/types";

const TSC = join(import.meta.dir, "..", "node_modules", ".bin", "tsc");

function typeCheck(types: string, module: string): string {
  const dir = mkdtempSync(join(tmpdir(), "cms-types-gen-"));
  try {
    writeFileSync(join(dir, "types.ts"), types);
    writeFileSync(join(dir, "use.ts"), module);
    const compilerOptions = { strict: true, noEmit: true, target: "ES2022", module: "ESNext", moduleResolution: "bundler", lib: ["ES2022"], types: [] };
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["types.ts", "use.ts"] }));
    const run = spawnSync(TSC, ["-p", dir], { encoding: "utf8", timeout: 60_000 });
    return `${run.stdout}${run.stderr}`.replace(/^.*?use\.ts/gm, "use.ts");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const MODEL: ContentModelDefinition = {
  strict: true,
  block_types: [
    {
      name: "spec",
      description: "Ends a comment */ here",
      schema: {
        type: "object",
        $defs: { money: { type: "object", properties: { amount: { type: "number" }, currency: { const: "EUR" } }, required: ["amount", "currency"], additionalProperties: false } },
        properties: {
          "data-id": { type: "integer" },
          price: { $ref: "#/$defs/money" },
          note: { type: ["string", "null"] },
          either: { anyOf: [{ type: "string" }, { type: "array", items: { type: "number" } }] },
          both: {
            allOf: [
              { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
              { type: "object", properties: { b: { type: "boolean" } }, required: ["b"] },
            ],
          },
          labels: { type: "object", additionalProperties: { type: "string" } },
          picture: { type: "string", format: "media" },
          color: { type: "string", format: "color" },
        },
        required: ["data-id", "price"],
        additionalProperties: false,
      },
    },
  ],
  node_types: [
    { name: "blog-post", description: "", fields: { type: "object", properties: { x: { type: "string" } } }, blocks: null, children: null },
    { name: "blog_post", description: "", fields: { type: "object", additionalProperties: false }, blocks: [{ type: "spec" }], children: null },
  ],
};

describe("JSON Schema → TypeScript", () => {
  const types = modelTypeScript(MODEL, { project: "gen", version: 7 });

  test("each keyword of the subset, a strict project (no untyped members), names that collide", () => {
    expect(compileModel(MODEL, 7).version).toBe(7); // a model the service accepts
    expect(types).toContain("/** Ends a comment *\\/ here */");
    expect(types).toContain('  "data-id": number;');
    expect(types).toContain('  price: {\n    amount: number;\n    currency: "EUR";\n  };');
    expect(types).toContain("  note?: string | null;");
    expect(types).toContain("  either?: (string) | (number[]);");
    expect(types).toContain("  picture?: MediaRef | null;");
    expect(types).toContain("  /** hex color, e.g. #1a2b3c */\n  color?: string;");
    expect(types).toContain('export interface BlogPostNode extends NodeBase {\n  type: "blog-post";');
    expect(types).toContain('export interface BlogPost2Node extends NodeBase {\n  type: "blog_post";\n  fields: BlogPost2Fields;\n  blocks: Array<SpecBlock>;');
    expect(types).toContain("export type BlogPost2Fields = Record<string, never>;");
    expect(types).toContain("export type AnyNode = Node;");
    expect(types).not.toContain("UntypedNode");
    expect(types).not.toContain("UntypedBlock");
  });

  test("the compiler agrees: valid uses pass, invalid ones fail where expected", () => {
    const ok = `import type { AnyNode, BlogPost2Node, BlogPostNode, SpecData } from "./types";
const d: SpecData = { "data-id": 1, price: { amount: 2, currency: "EUR" }, note: null, either: [1], both: { a: "x", b: true }, labels: { en: "x" }, picture: null };
const open: BlogPostNode["fields"] = { x: "y", anything: 1 };
export function f(n: AnyNode): string {
  switch (n.type) {
    case "blog-post": return n.fields.x ?? "";
    case "blog_post": return n.blocks.map((b) => String(b.data.price.amount + b.data["data-id"])).join();
  }
}
export const used = [d, open] as const;
export type P = BlogPost2Node;
`;
    expect(typeCheck(types, ok)).toBe("");
    const bad = `import type { SpecData } from "./types";
export const a: SpecData = { "data-id": 1, price: { amount: 2, currency: "USD" } };
export const b: SpecData = { "data-id": 1, price: { amount: 2, currency: "EUR" }, both: { a: "x" } };
export const c: SpecData = { "data-id": 1, price: { amount: 2, currency: "EUR" }, extra: true };
export const d: SpecData = { "data-id": "1", price: { amount: 2, currency: "EUR" } };
`;
    const out = typeCheck(types, bad);
    expect(out).toMatch(/use\.ts\(2,\d+\): error TS2322: Type '"USD"' is not assignable to type '"EUR"'/);
    expect(out).toMatch(/use\.ts\(3,\d+\): error TS2322/);
    expect(out).toMatch(/use\.ts\(4,\d+\): error TS2353: Object literal may only specify known properties, and 'extra'/);
    expect(out).toMatch(/use\.ts\(5,\d+\): error TS2322: Type 'string' is not assignable to type 'number'/);
  });
});

describe("the JSON Schema of the answers", () => {
  const schema = modelJsonSchema(MODEL, { project: "gen", version: 7 }) as { $defs: Record<string, Record<string, unknown>> };

  test("compiles under a strict Ajv 2020; a type's own $refs resolve; node and media become references; our keywords are gone", () => {
    const ajv = new Ajv2020({ strict: true });
    addFormats(ajv, ["date-time"]);
    ajv.addFormat("color", true);
    const validate = ajv.compile(schema);
    const SpecData = schema.$defs.SpecData as { properties: Record<string, unknown> };
    expect(SpecData.properties.price).toEqual({ $ref: "#/$defs/SpecData/$defs/money" });
    expect(SpecData.properties.picture).toEqual({ anyOf: [{ $ref: "#/$defs/MediaRef" }, { type: "null" }] });
    expect(JSON.stringify(schema)).not.toContain("translatable");
    // Strict: no untyped node; an undeclared type is refused.
    expect(schema.$defs.UntypedNode).toBeUndefined();
    const seo = {
      canonical: "/x",
      robots: "index,follow",
      og: { type: "website", title: "t", description: null, image: null, url: "/x", locale: "en", site_name: "s" },
      twitter: { card: "summary", title: "t", description: null, image: null },
      hreflang: [],
      jsonld: {},
      breadcrumbs: [],
    };
    const node = { id: "n", parent_id: null, slug: "x", title: "t", locale: "en", path: "x", seo, translated: false, type: "blog_post", fields: {} };
    const block = {
      id: "b",
      type: "spec",
      order: 0,
      data: { "data-id": 1, price: { amount: 1, currency: "EUR" }, picture: { id: "m", url: "/m.png", width: 1, height: 1, alt: null, srcset: null, placeholder: null } },
    };
    expect(validate({ data: { ...node, blocks: [block] } })).toBe(true);
    expect(validate({ data: { ...node, type: "other", blocks: [] } })).toBe(false);
    expect(validate({ data: { ...node, blocks: [{ ...block, data: { ...block.data, picture: "0d6c…" } }] } })).toBe(false);
    expect(validate({ data: [], total: 0, page: 1, per_page: 20 })).toBe(true);
  });
});
