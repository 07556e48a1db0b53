import { z } from "zod";
import { Id, Json, Timestamp } from "../lib/schemas";

export const TranslationStatus = z.enum(["draft", "published"]);
export const TranslationOut = z.object({
  id: Id,
  node_id: Id,
  locale: z.string(),
  meta: Json,
  fields: Json,
  blocks: z.record(z.string(), Json),
  status: TranslationStatus.describe("published: it has a published version (delivered with its node); draft: it has none"),
  state: z.enum(["draft", "published", "changed"]).describe("changed: published, with unpublished changes (publish_node with locale makes them live)"),
  publish_at: Timestamp.nullable().describe("scheduled publication of this translation (UTC); null when none"),
  unpublish_at: Timestamp.nullable().describe("scheduled unpublication of this translation (UTC); null when none"),
  created_at: Timestamp,
  updated_at: Timestamp,
});
