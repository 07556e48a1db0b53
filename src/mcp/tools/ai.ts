import { z } from "zod";
import { translateText } from "../../ai/service";
import { translationToWire } from "../../translations/service";
import { translateNode } from "../translate";
import { Locale, NodeId, TranslationOut } from "./schemas";
import { defineTool } from "./tool";

const Tag = z.string().min(2).max(35).describe("BCP 47 language tag, e.g. fr or pt-BR");
const ProviderId = z.uuid().optional().describe("an AI provider of this project; default: the project's default provider");

export const translateTextTool = defineTool({
  name: "translate_text",
  title: "Translate text",
  description:
    "Translate a piece of text with one of the project's AI providers (its stored key). from defaults to the project's default locale. " +
    "field optionally names the content field the text belongs to (title, seo.description, blocks.<id>.text…) so the translation fits it; markup, placeholders and URLs are kept. Nothing is stored.",
  scopes: ["ai:read"],
  input: z.object({
    text: z.string().min(1).max(32_000),
    to: Tag,
    from: Tag.optional().describe("BCP 47 tag of the text; default: the project's default locale"),
    field: z.string().max(200).optional(),
    provider_id: ProviderId,
  }),
  output: z.object({ translation: z.string(), provider: z.string(), model: z.string() }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async run({ deps, project }, args) {
    return translateText(deps, project, { ...args, from: args.from ?? project.defaultLocale });
  },
});

export const translateNodeTool = defineTool({
  name: "translate_node",
  title: "Machine-translate a node",
  description:
    "Translate a node's title, SEO description and the text of its blocks into one of the project's other locales with the project's AI provider, " +
    "and store the result as a DRAFT translation (not delivered until published: review it with get_translation or get_node with locale, then upsert_translation with status \"published\"). " +
    "Existing translated fields that were not re-translated (a localised slug, say) are kept. Reports every field translated.",
  scopes: ["content:write", "ai:read"],
  input: z.object({ node_id: NodeId, locale: Locale, provider_id: ProviderId }),
  output: z.object({
    translation: TranslationOut,
    translated_fields: z.array(z.object({ field: z.string(), chars: z.number().int() })),
    provider: z.string().nullable(),
    model: z.string().nullable(),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async run({ deps, project, now, progress }, args) {
    const r = await translateNode(deps, project, args, now, progress);
    return { ...r, translation: translationToWire(r.translation) };
  },
});
