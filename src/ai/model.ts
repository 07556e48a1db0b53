import { t } from "elysia";
import { Timestamp, Uuid } from "../lib/model";

const Name = t.String({ minLength: 1, maxLength: 200 });
const Kind = t.String({ minLength: 1, maxLength: 32, description: "openai, anthropic (alias claude), gemini, mistral, groq or openrouter" });
const Model = t.String({ minLength: 1, maxLength: 200, description: "model identifier; the kind's default model when unset" });
const BaseUrl = t.String({ minLength: 1, maxLength: 2048, description: "OpenAI-compatible (or Anthropic) endpoint base, e.g. https://api.example.com/v1; the kind's default when unset" });
const ApiKey = t.String({ minLength: 1, maxLength: 4096, description: "vendor API key; sealed at rest, never listed" });
// t.Unknown: Elysia would coerce an array into an object; the service insists on a plain object.
const Capabilities = t.Unknown({ description: 'capability declaration, an object, e.g. { "translate": true }' });

const provider = {
  id: Uuid,
  project_id: Uuid,
  name: t.String(),
  kind: t.String(),
  model: t.Nullable(t.String()),
  base_url: t.Nullable(t.String()),
  effective_model: t.String({ description: "model used by calls: model, or the kind's default" }),
  effective_base_url: t.String({ description: "address used by calls: base_url, or the kind's default" }),
  api_key_hint: t.Nullable(t.String({ description: "masked key, e.g. sk-…a1b2; null when no key is stored" })),
  capabilities: t.Record(t.String(), t.Unknown()),
  is_default: t.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
};

const ProviderCreate = t.Object({
    name: Name,
    kind: Kind,
    model: t.Optional(t.Nullable(Model)),
    base_url: t.Optional(t.Nullable(BaseUrl)),
    api_key: t.Optional(t.Nullable(ApiKey)),
    capabilities: t.Optional(Capabilities),
    is_default: t.Optional(t.Boolean()),
  });

export const AiModel = {
  provider: t.Object(provider),
  providerWithKey: t.Object({ ...provider, api_key: t.Nullable(t.String({ description: "the plain key (this read only)" })) }),
  kind: t.Object({
    kind: t.String(),
    label: t.String(),
    driver: t.String(),
    default_base_url: t.String(),
    default_model: t.String(),
    aliases: t.Array(t.String()),
  }),
  create: ProviderCreate,
  // PATCH: any field of the create body; omitted fields are kept (api_key: null clears the key).
  update: t.Partial(ProviderCreate),
  translate: t.Object({
    provider_id: t.Optional(t.String({ format: "uuid", description: "provider to use; the project's default provider when omitted" })),
    from: t.String({ minLength: 1, maxLength: 35, description: "BCP 47 tag of the text's language" }),
    to: t.String({ minLength: 1, maxLength: 35, description: "BCP 47 tag of the wanted language" }),
    text: t.String({ minLength: 1, maxLength: 64_000, description: "1 to 32,000 characters" }),
    field: t.Optional(t.String({ maxLength: 200, description: "content field the text comes from (title, seo.description, blocks.<id>.text), used as context" })),
  }),
  translation: t.Object({
    data: t.Object({ translation: t.String(), provider: t.String({ description: "the provider's kind" }), model: t.String() }),
  }),
};
