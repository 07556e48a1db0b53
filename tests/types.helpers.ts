// Shared by the model-types tests: node fields written directly through the one write path
// (src/write/unit.ts); the model is set with tests/model.helpers.ts.
import { eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { nodes } from "../db/schema";
import type { ContentModelDefinition } from "../src/model/model";
import { systemWrite } from "../src/write/context";
import { contentWrite } from "../src/write/unit";

/** Sets a node's fields; the write is checked against the project's model (400 invalid_content). */
export async function setFields(db: Db, projectId: string, nodeId: string, fields: Record<string, unknown>): Promise<void> {
  await contentWrite(db, systemWrite(), projectId, async (tx, w) => {
    await tx.update(nodes).set({ fields }).where(eq(nodes.id, nodeId));
    w.touched(nodeId);
    w.gone("");
  });
}

/** A model like the demo's: page, collection, post (author, date, category, tags, a related post), hero, text, image, call to action. */
export const DEMO_LIKE_MODEL: ContentModelDefinition = {
  strict: false,
  block_types: [
    {
      name: "hero",
      description: "The large banner at the top of a page.",
      schema: {
        type: "object",
        properties: {
          heading: { type: "string", translatable: true, description: "The main line." },
          subheading: { type: "string", translatable: true },
          image: { type: "string", format: "media" },
        },
        required: ["heading"],
        additionalProperties: false,
      },
    },
    {
      name: "text",
      description: "A passage of prose.",
      schema: { type: "object", properties: { body: { type: "string", format: "markdown", translatable: true } }, required: ["body"], additionalProperties: false },
    },
    {
      name: "image",
      description: "One picture with its alternative text.",
      schema: {
        type: "object",
        properties: { url: { type: "string", format: "uri" }, alt: { type: "string", translatable: true }, caption: { type: ["string", "null"] } },
        required: ["url", "alt"],
        additionalProperties: false,
      },
    },
    {
      name: "call-to-action",
      description: "A button that sends the reader somewhere.",
      schema: {
        type: "object",
        properties: { label: { type: "string", translatable: true }, href: { type: "string", format: "uri" }, style: { enum: ["primary", "secondary"] } },
        required: ["label", "href"],
        additionalProperties: false,
      },
    },
  ],
  node_types: [
    {
      name: "page",
      description: "A page of the site.",
      fields: { type: "object", additionalProperties: false },
      blocks: null,
      children: null,
    },
    {
      name: "collection",
      description: "A list of posts.",
      fields: { type: "object", additionalProperties: false },
      blocks: null,
      children: ["post"],
    },
    {
      name: "post",
      description: "A blog post.",
      fields: {
        type: "object",
        properties: {
          author: { type: "string", minLength: 1, index: true },
          date: { type: "string", format: "date-time", index: true },
          category: { enum: ["news", "guides", "releases"], index: true },
          tags: { type: "array", items: { type: "string" } },
          reading_minutes: { type: "integer", minimum: 1 },
          featured: { type: "boolean" },
          related: { type: "string", format: "node" },
          summary: { type: "string", translatable: true, maxLength: 300 },
        },
        required: ["author", "date", "category"],
        additionalProperties: false,
      },
      blocks: [{ type: "hero", max: 1 }, { type: "text" }, { type: "image" }, { type: "call-to-action" }],
      children: [],
    },
  ],
};
