// Anthropic Messages API, native (POST {base}/v1/messages, x-api-key, anthropic-version).
import { AppError } from "../../errors";
import type { Driver } from "./types";

const ANTHROPIC_VERSION = "2023-06-01";

export const anthropicMessages: Driver = async (post, call) => {
  const headers: Record<string, string> = { "anthropic-version": ANTHROPIC_VERSION };
  if (call.apiKey) headers["x-api-key"] = call.apiKey;
  const body = await post({
    url: `${call.baseUrl}/v1/messages`,
    headers,
    body: {
      model: call.model,
      max_tokens: call.maxOutputTokens,
      system: call.system,
      messages: [{ role: "user", content: call.text }],
    },
  });
  if (!body || typeof body !== "object") throw new AppError("provider_error", "the provider returned no translation (empty content)");
  const { content, stop_reason } = body as { content?: unknown; stop_reason?: unknown };
  if (stop_reason === "max_tokens") throw new AppError("provider_error", "the provider stopped before the translation was complete (output limit)");
  const text = Array.isArray(content)
    ? content
        .filter((b): b is { type: "text"; text: string } => !!b && typeof b === "object" && (b as { type?: unknown }).type === "text" && typeof (b as { text?: unknown }).text === "string")
        .map((b) => b.text)
        .join("")
    : "";
  if (text.trim() === "") throw new AppError("provider_error", "the provider returned no translation (empty content)");
  return text;
};
