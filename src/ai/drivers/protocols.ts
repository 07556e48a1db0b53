// The two wire protocols. A driver returns the text as given (the caller refuses an empty one)
// and throws when the vendor stopped at its output limit.
import { AppError } from "../../errors";
import { isPlainObject } from "../../lib/merge";
import type { KindInfo } from "../kinds";
import type { PostJson } from "./request";

/** What a driver needs for one call; the key is already opened. `image`: a picture sent with the text (describe_media), base64. */
type DriverCall = { baseUrl: string; apiKey: string | null; model: string; system: string; text: string; maxOutputTokens: number; image?: { type: string; base64: string } };

/** The vendor's usage fields, when it reported them. */
export interface Usage {
  readonly input_tokens: number;
  readonly output_tokens: number;
}
interface DriverAnswer {
  readonly text: string;
  readonly usage: Usage | null;
}

type Driver = (post: PostJson, call: DriverCall) => Promise<DriverAnswer>;

const count = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? Math.round(v) : 0);
/** Usage from the fields each wire names it by (OpenAI: prompt/completion; Anthropic: input/output; Gemini: usageMetadata). */
function usageOf(body: unknown): Usage | null {
  if (!isPlainObject(body)) return null;
  const u = isPlainObject(body.usage) ? body.usage : isPlainObject(body.usageMetadata) ? body.usageMetadata : null;
  if (!u) return null;
  const input = count(u.prompt_tokens ?? u.input_tokens ?? u.promptTokenCount);
  const output = count(u.completion_tokens ?? u.output_tokens ?? u.candidatesTokenCount);
  return input + output > 0 ? { input_tokens: input, output_tokens: output } : null;
}

const outputLimit = (): AppError => new AppError("provider_error", "the provider stopped before the translation was complete (output limit)");

/** The joined `text` of an array of parts. */
const partsText = (parts: unknown, type?: string): string =>
  Array.isArray(parts) ? parts.map((p) => (isPlainObject(p) && typeof p.text === "string" && (type === undefined || p.type === type) ? p.text : "")).join("") : "";

export const DRIVERS: Record<KindInfo["driver"], Driver> = {
  // OpenAI Chat Completions (POST {base}/chat/completions, bearer key). Used for openai, gemini,
  // mistral, groq and openrouter, and any OpenAI-compatible endpoint given as base_url.
  "openai-compatible": async (post, call) => {
    const body = await post({
      url: `${call.baseUrl}/chat/completions`,
      headers: call.apiKey ? { authorization: `Bearer ${call.apiKey}` } : {},
      body: {
        model: call.model,
        messages: [
          { role: "system", content: call.system },
          {
            role: "user",
            // An image goes as the OpenAI-compatible image_url part with a data URL (OpenAI, Gemini's OpenAI endpoint, Mistral, OpenRouter).
            content: call.image
              ? [
                  { type: "text", text: call.text },
                  { type: "image_url", image_url: { url: `data:${call.image.type};base64,${call.image.base64}` } },
                ]
              : call.text,
          },
        ],
        stream: false,
      },
    });
    const choice = isPlainObject(body) && Array.isArray(body.choices) && isPlainObject(body.choices[0]) ? body.choices[0] : {};
    if (choice.finish_reason === "length") throw outputLimit();
    // content is a string, or (some compatible servers) an array of { type: "text", text } parts.
    const content = isPlainObject(choice.message) ? choice.message.content : undefined;
    return { text: typeof content === "string" ? content : partsText(content), usage: usageOf(body) };
  },
  // Anthropic Messages API, native (POST {base}/v1/messages, x-api-key, anthropic-version).
  "anthropic-messages": async (post, call) => {
    const body = await post({
      url: `${call.baseUrl}/v1/messages`,
      headers: { "anthropic-version": "2023-06-01", ...(call.apiKey ? { "x-api-key": call.apiKey } : {}) },
      body: {
        model: call.model,
        max_tokens: call.maxOutputTokens,
        system: call.system,
        // An image goes as the Messages API's native base64 image block, before the text.
        messages: [
          {
            role: "user",
            content: call.image
              ? [
                  { type: "image", source: { type: "base64", media_type: call.image.type, data: call.image.base64 } },
                  { type: "text", text: call.text },
                ]
              : call.text,
          },
        ],
      },
    });
    if (!isPlainObject(body)) return { text: "", usage: null };
    if (body.stop_reason === "max_tokens") throw outputLimit();
    return { text: partsText(body.content, "text"), usage: usageOf(body) };
  },
};

/** Gemini's native API root from the base URL of its OpenAI-compatible endpoint: `…/v1beta/openai` → `…/v1beta`. */
const geminiNativeBase = (baseUrl: string): string => baseUrl.replace(/\/+$/, "").replace(/\/openai$/, "");

/**
 * Google's Gemini API, native (POST {base}/models/{model}:generateContent, x-goog-api-key), for a
 * call with an image (describe_media): the image goes as `inline_data`, Gemini's own form; text
 * calls keep the OpenAI-compatible endpoint. No output cap is sent: Gemini 2.5 counts its thinking
 * against maxOutputTokens, so a small cap can end a call before any text; the input is what is bounded.
 */
export const geminiGenerateContent: Driver = async (post, call) => {
  const model = call.model.replace(/^models\//, "");
  const body = await post({
    url: `${geminiNativeBase(call.baseUrl)}/models/${encodeURIComponent(model)}:generateContent`,
    headers: call.apiKey ? { "x-goog-api-key": call.apiKey } : {},
    body: {
      system_instruction: { parts: [{ text: call.system }] },
      contents: [{ role: "user", parts: [...(call.image ? [{ inline_data: { mime_type: call.image.type, data: call.image.base64 } }] : []), { text: call.text }] }],
    },
  });
  const candidate = isPlainObject(body) && Array.isArray(body.candidates) && isPlainObject(body.candidates[0]) ? body.candidates[0] : {};
  if (candidate.finishReason === "MAX_TOKENS") throw outputLimit();
  const content = isPlainObject(candidate.content) ? candidate.content.parts : undefined;
  // Thought summaries (thought: true) are not the answer.
  return { text: Array.isArray(content) ? partsText(content.filter((p) => !(isPlainObject(p) && p.thought === true))) : "", usage: usageOf(body) };
};
