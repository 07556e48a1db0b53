// OpenAI Chat Completions (POST {base}/chat/completions, bearer key). Used for openai, gemini,
// mistral, groq and openrouter, and any OpenAI-compatible endpoint given as base_url.
import { AppError } from "../../errors";
import type { Driver } from "./types";

export const openaiCompatible: Driver = async (post, call) => {
  const headers: Record<string, string> = {};
  if (call.apiKey) headers.authorization = `Bearer ${call.apiKey}`;
  const body = await post({
    url: `${call.baseUrl}/chat/completions`,
    headers,
    body: {
      model: call.model,
      messages: [
        { role: "system", content: call.system },
        { role: "user", content: call.text },
      ],
      stream: false,
    },
  });
  const choice = firstChoice(body);
  if (choice?.finish_reason === "length") throw new AppError("provider_error", "the provider stopped before the translation was complete (output limit)");
  const text = contentText(choice?.message?.content);
  if (!text) throw new AppError("provider_error", "the provider returned no translation (empty content)");
  return text;
};

interface Choice {
  finish_reason?: unknown;
  message?: { content?: unknown };
}

function firstChoice(body: unknown): Choice | null {
  if (!body || typeof body !== "object") return null;
  const choices = (body as { choices?: unknown }).choices;
  if (!Array.isArray(choices) || choices.length === 0) return null;
  const c = choices[0] as unknown;
  return c && typeof c === "object" ? (c as Choice) : null;
}

// content is a string, or (some compatible servers) an array of { type: "text", text } parts.
function contentText(content: unknown): string | null {
  if (typeof content === "string") return content.trim() === "" ? null : content;
  if (Array.isArray(content)) {
    const text = content.map((p) => (p && typeof p === "object" && typeof (p as { text?: unknown }).text === "string" ? (p as { text: string }).text : "")).join("");
    return text.trim() === "" ? null : text;
  }
  return null;
}
