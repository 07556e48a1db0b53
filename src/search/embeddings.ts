// Embeddings for semantic search (docs/search.md, "Semantic search"): one POST to the vendor's
// OpenAI-compatible `{base}/embeddings` with the project's own provider key, through the AI
// feature's sealed keys, outbound guard and pinned fetch (src/ai). Keys are never logged or answered.
import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { jsonPoster } from "../ai/drivers/request";
import { urlPolicy } from "../ai/input";
import { kindInfo } from "../ai/kinds";
import { type ProviderRow, revealApiKey } from "../ai/service";
import type { AppDeps } from "../core/deps";
import { AppError } from "../errors";
import { isPlainObject } from "../lib/merge";
import { checkOutboundUrl } from "../lib/ssrf";

/** Every vector has this many dimensions. */
export const DIMENSIONS = 1024;

/**
 * The provider kinds whose vendor offers an embeddings endpoint on the OpenAI-compatible wire, the
 * default model of each, and whether the request names the dimensions (`dimensions`, for models
 * that shorten their vectors: OpenAI's text-embedding-3, Gemini's gemini-embedding-001). Mistral's
 * mistral-embed is 1024 dimensions as it is. Anthropic and Groq offer no embeddings endpoint.
 */
export const EMBEDDING_KINDS: Readonly<Record<string, { readonly model: string; readonly sendDimensions: boolean }>> = {
  openai: { model: "text-embedding-3-small", sendDimensions: true },
  gemini: { model: "gemini-embedding-001", sendDimensions: true },
  mistral: { model: "mistral-embed", sendDimensions: false },
  openrouter: { model: "openai/text-embedding-3-small", sendDimensions: true },
};

/** Texts one call embeds, at most. */
export const TEXTS_PER_CALL = 32;
/** Characters of a page's text embedded (about 1,500 tokens: under every vendor's input limit, Gemini's 2,048 the lowest). */
const MAX_TEXT_CHARS = 6000;

/** The text of an index row that is embedded: title, description and fields, blocks; capped. */
export function embeddingText(title: string, body: string, blocks: string): string {
  const text = [title, body, blocks]
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .join("\n\n");
  return text.length <= MAX_TEXT_CHARS ? text : Array.from(text).slice(0, MAX_TEXT_CHARS).join("");
}

const LITTLE_ENDIAN = new Uint8Array(new Float32Array([1]).buffer)[3] === 0x3f;

/** A vector as stored: float32, little-endian. */
export function encodeVector(v: Float32Array): Uint8Array {
  if (LITTLE_ENDIAN) return new Uint8Array(v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength));
  const out = new Uint8Array(v.length * 4);
  const view = new DataView(out.buffer);
  for (const [i, x] of v.entries()) view.setFloat32(i * 4, x, true);
  return out;
}

/** A stored vector, copied into `into` at `offset` (a flat matrix of the index) or a new array. */
export function decodeVector(bytes: Uint8Array, into?: Float32Array, offset = 0): Float32Array {
  const n = bytes.byteLength >> 2;
  const out = into ?? new Float32Array(n);
  if (LITTLE_ENDIAN && bytes.byteOffset % 4 === 0) out.set(new Float32Array(bytes.buffer, bytes.byteOffset, n), offset);
  else {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let i = 0; i < n; i++) out[offset + i] = view.getFloat32(i * 4, true);
  }
  return out;
}

/** 400 unless the provider's kind has an embeddings endpoint. */
export function checkEmbeddingKind(kind: string): void {
  if (!(kind in EMBEDDING_KINDS)) {
    throw new AppError("invalid_request", `a ${kind} provider offers no embeddings endpoint; name a provider of kind ${Object.keys(EMBEDDING_KINDS).join(", ")}`, {
      field: "provider_id",
    });
  }
}

/** One embeddings call: a vector of DIMENSIONS per text, in order; any other answer is provider_error. */
export async function embedTexts(deps: AppDeps, provider: ProviderRow, model: string, texts: readonly string[]): Promise<Float32Array[]> {
  checkEmbeddingKind(provider.kind);
  const spec = EMBEDDING_KINDS[provider.kind];
  const info = kindInfo(provider.kind);
  const started = performance.now();
  // At call time, as every AI call: DNS may have changed; the call connects to the addresses checked.
  const check = provider.baseUrl ? await checkOutboundUrl(provider.baseUrl, urlPolicy(deps, "refuse")) : null;
  if (check && !check.ok) throw new AppError("provider_error", `the provider's base_url ${check.reason}`, { field: "base_url" });
  const apiKey = await revealApiKey(deps, provider);
  // A vector of 1024 floats is about 20 KB of JSON.
  const maxBytes = Math.max(deps.config.aiMaxResponseBytes, texts.length * 40_000);
  const post = jsonPoster({ fetch: deps.fetch, timeoutMs: deps.config.aiTimeoutMs, maxBytes, secret: apiKey, addresses: check?.addresses ?? [] });
  const body = await post({
    url: `${provider.baseUrl || info.default_base_url}/embeddings`,
    headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
    body: { model, input: texts, encoding_format: "float", ...(spec?.sendDimensions ? { dimensions: DIMENSIONS } : {}) },
  });
  const data = isPlainObject(body) && Array.isArray(body.data) ? body.data : null;
  if (data === null || data.length !== texts.length) throw new AppError("provider_error", "the provider's embeddings answer has no vector for each text");
  const vectors: Float32Array[] = new Array(texts.length);
  data.forEach((item, i) => {
    const at = isPlainObject(item) && typeof item.index === "number" ? item.index : i;
    const e = isPlainObject(item) ? item.embedding : null;
    if (!Array.isArray(e) || e.length !== DIMENSIONS || !e.every((x) => typeof x === "number" && Number.isFinite(x)) || at < 0 || at >= texts.length) {
      throw new AppError("provider_error", `the provider's embeddings are not ${DIMENSIONS} numbers each (model ${model}); choose a model with ${DIMENSIONS} dimensions`);
    }
    vectors[at] = Float32Array.from(e as number[]);
  });
  if (vectors.some((v) => v === undefined)) throw new AppError("provider_error", "the provider's embeddings answer has no vector for each text");
  const usage = isPlainObject(body) && isPlainObject(body.usage) && typeof body.usage.prompt_tokens === "number" ? Math.max(0, Math.round(body.usage.prompt_tokens)) : 0;
  await countUsage(deps.db, provider, usage, deps.now());
  deps.log.info("search embed", { project_id: provider.projectId, provider_id: provider.id, kind: provider.kind, model, texts: texts.length, ms: Math.round(performance.now() - started) });
  return vectors;
}

/** The call in the project's AI usage (GET …/ai/usage), as every AI call is counted. */
async function countUsage(db: Db, provider: ProviderRow, tokens: number, now: Date): Promise<void> {
  await db.execute(sql`insert into ai_usage (project_id, provider_id, month, kind, input_tokens, output_tokens, calls, updated_at)
    values (${provider.projectId}, ${provider.id}, ${now.toISOString().slice(0, 7)}, ${provider.kind}, ${tokens}, 0, 1, ${now.toISOString()})
    on conflict (project_id, provider_id, month) do update set input_tokens = ai_usage.input_tokens + excluded.input_tokens, calls = ai_usage.calls + 1, updated_at = excluded.updated_at`);
}
