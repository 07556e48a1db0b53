// Sets a project's content model directly, as the model API will (one contentWrite: content_models
// at version+1, projects.model_version the same). The model API is another branch's; once merged,
// tests may switch to PUT /admin/p/{ref}/model.
import { eq, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { contentModels, projects } from "../db/schema";
import { ContentModelIn } from "../src/model/model";
import { contentWrite } from "../src/write";

export async function setModel(db: Db, projectId: string, model: Record<string, unknown>): Promise<number> {
  const definition = ContentModelIn.parse(model);
  return contentWrite(db, projectId, async (tx) => {
    const [row] = await tx
      .insert(contentModels)
      .values({ projectId, version: 1, definition })
      .onConflictDoUpdate({ target: contentModels.projectId, set: { version: sql`${contentModels.version} + 1`, definition, updatedAt: new Date() } })
      .returning({ version: contentModels.version });
    if (!row) throw new Error("setModel: no row");
    await tx.update(projects).set({ modelVersion: row.version }).where(eq(projects.id, projectId));
    return row.version;
  });
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
