import { z } from "zod";
import { Id, Json, Timestamp } from "../lib/schemas";

export const ProviderId = z.uuid().optional().describe("an AI provider of this project; default: the project's default provider");

export const ProviderOut = z.object({
  id: Id,
  project_id: Id,
  name: z.string(),
  kind: z.string(),
  model: z.string().nullable(),
  base_url: z.string().nullable(),
  effective_model: z.string().describe("model used by calls: model, or the kind's default"),
  effective_base_url: z.string().describe("address used by calls: base_url, or the kind's default"),
  api_key_hint: z.string().nullable().describe("masked key, e.g. sk-…a1b2; null when no key is stored"),
  capabilities: Json,
  is_default: z.boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export const TranslateTextOut = z.object({
  translation: z.string(),
  provider: z.string().describe("the provider's kind (memory: reused from the translation memory, no vendor call)"),
  model: z.string(),
  status: z.enum(["machine", "needs_review", "approved"]).optional().describe("needs_review: the answer failed the pipeline's checks twice (failures say why)"),
  usage: z.object({ input_tokens: z.number().int(), output_tokens: z.number().int() }).nullish().describe("the tokens the vendor reported for this call"),
  failures: z.array(z.string()).optional(),
});
export const KindOut = z.object({ kind: z.string(), label: z.string(), driver: z.string(), default_base_url: z.string(), default_model: z.string(), aliases: z.array(z.string()) });
export const ProviderIn = z.object({
  name: z.string().min(1).max(200),
  kind: z.string().min(1).max(32).describe("openai, anthropic (alias claude), gemini, mistral, groq or openrouter"),
  model: z.string().min(1).max(200).nullable().optional().describe("model identifier; the kind's default model when unset"),
  base_url: z.string().min(1).max(2048).nullable().optional().describe("OpenAI-compatible (or Anthropic) endpoint base, e.g. https://api.example.com/v1; the kind's default when unset"),
  api_key: z.string().min(1).max(4096).nullable().optional().describe("vendor API key; sealed at rest, never listed"),
  // Any JSON: the service insists on a plain object and names the field.
  capabilities: z.unknown().optional().describe('capability declaration, an object, e.g. { "translate": true }'),
  is_default: z.boolean().optional(),
});
export const TranslateIn = z.object({
  text: z.string().min(1).max(64_000).describe("1 to 32,000 characters"),
  to: z.string().min(2).max(35).describe("BCP 47 language tag, e.g. fr or pt-BR"),
  from: z.string().min(2).max(35).optional().describe("BCP 47 tag of the text; default: the project's default locale"),
  field: z.string().max(200).optional().describe("content field the text comes from (title, seo.description, blocks.<id>.text), used as context"),
  provider_id: ProviderId,
});

export const UsageOut = z.object({
  provider_id: z.string(),
  kind: z.string(),
  month: z.string().describe("calendar month, UTC: 2026-11"),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  calls: z.number().int(),
});
