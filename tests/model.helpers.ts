// Sets a project's content model through the model service (src/model/service.ts), forced: the
// tests that use it set up models over content on purpose.
import type { Db } from "../db/client";
import { ContentModelIn } from "../src/model/model";
import { writeModel } from "../src/model/service";
import { systemWrite } from "../src/write/context";

/** `indexes: false` builds no field indexes (a test of syncFieldIndexes builds them itself). Answers the model's version. */
export async function setModel(db: Db, projectId: string, model: Record<string, unknown>, opts: { indexes?: boolean } = {}): Promise<number> {
  const definition = ContentModelIn.parse(model);
  return (await writeModel(db, systemWrite(), projectId, () => definition, { force: true, indexes: opts.indexes })).model.version;
}

/** A model used by the write tests: a "post" with typed fields, a "hero" and a "text" block; strict as given. */
export const BLOG_MODEL = (strict = false): Record<string, unknown> => ({
  strict,
  block_types: [
    {
      name: "hero",
      description: "a large heading",
      schema: {
        type: "object",
        properties: { heading: { type: "string", maxLength: 40, translatable: true }, image: { type: "string", format: "uri" } },
        required: ["heading"],
        additionalProperties: false,
      },
    },
    { name: "text", description: "prose", schema: { type: "object", properties: { body: { type: "string", format: "markdown", translatable: true } }, required: ["body"] } },
  ],
  node_types: [
    {
      name: "post",
      description: "a blog post",
      fields: {
        type: "object",
        properties: {
          author: { type: "string", minLength: 1 },
          date: { type: "string", format: "date-time" },
          summary: { type: "string", maxLength: 60, translatable: true },
          tags: { type: "array", items: { type: "string" }, translatable: true },
        },
        required: ["author"],
        additionalProperties: false,
      },
      blocks: [{ type: "hero", max: 1 }, { type: "text" }],
      children: null,
    },
  ],
});
