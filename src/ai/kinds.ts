// The interface's six provider kinds. Default models are cheap, fast models suited to
// translation; `model` on a provider overrides them, `base_url` overrides the address.

export const KINDS = [
  { kind: "openai", label: "OpenAI (or any OpenAI-compatible endpoint)", driver: "openai-compatible", default_base_url: "https://api.openai.com/v1", default_model: "gpt-4o-mini", aliases: [] },
  { kind: "anthropic", label: "Anthropic Claude", driver: "anthropic-messages", default_base_url: "https://api.anthropic.com", default_model: "claude-haiku-4-5", aliases: ["claude"] },
  {
    kind: "gemini",
    label: "Google Gemini (OpenAI-compatible endpoint)",
    driver: "openai-compatible",
    default_base_url: "https://generativelanguage.googleapis.com/v1beta/openai",
    default_model: "gemini-2.5-flash",
    aliases: [],
  },
  { kind: "mistral", label: "Mistral AI", driver: "openai-compatible", default_base_url: "https://api.mistral.ai/v1", default_model: "mistral-small-latest", aliases: [] },
  { kind: "groq", label: "Groq", driver: "openai-compatible", default_base_url: "https://api.groq.com/openai/v1", default_model: "llama-3.3-70b-versatile", aliases: [] },
  { kind: "openrouter", label: "OpenRouter", driver: "openai-compatible", default_base_url: "https://openrouter.ai/api/v1", default_model: "openai/gpt-4o-mini", aliases: [] },
] as const;

export type KindInfo = (typeof KINDS)[number];

export function kindInfo(kind: string): KindInfo {
  const info = KINDS.find((i) => i.kind === kind);
  // Rows are written only through checkKind (input.ts); an unknown stored kind is a corrupted row.
  if (!info) throw new Error(`unknown provider kind in database: ${kind}`);
  return info;
}
