import { z } from "zod";
import { ActorOut } from "../activity/model";
import { Id, Json, Timestamp } from "../lib/schemas";

const UNIT_STATUSES = ["missing", "machine", "needs_review", "stale", "approved", "published"] as const;

const FieldStatusOut = z
  .record(
    z.string(),
    z.object({
      status: z
        .enum(UNIT_STATUSES)
        .describe(
          "missing: not translated; machine: by a machine or an agent, not reviewed; needs_review: machine output that failed its checks; stale: its source changed since; approved: written or reviewed by a person; published: live",
        ),
      source_hash: z.string().nullable().describe("SHA-256 (hex) of the source text it was made from (missing: of the source now; null: not known)"),
      source_revision: z.number().int().nullable().describe("the node's revision it was made from"),
      origin: z
        .object({
          kind: z.enum(["person", "agent", "machine", "memory", "import"]),
          actor: ActorOut.nullish().describe("who wrote it (person, agent)"),
          provider_kind: z.string().nullish(),
          model: z.string().nullish(),
        })
        .nullable(),
      human_edited: z.boolean().describe("a person wrote or edited this text"),
      stale_since: Timestamp.optional(),
    }),
  )
  .describe("per translatable field (a JSON Pointer into the node: /title, /seo/description, /fields/…, /blocks/{blockId}/data/…), its state in this translation");

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
  field_status: FieldStatusOut.optional(),
});
