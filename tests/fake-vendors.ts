// A real loopback HTTP server speaking the two wire protocols the drivers use:
//   OpenAI Chat Completions  POST …/chat/completions  (Authorization: Bearer <key>)
//   Anthropic Messages       POST …/v1/messages       (x-api-key, anthropic-version: 2023-06-01)
//   Gemini generateContent   POST …/v1beta/models/{model}:generateContent (x-goog-api-key), native
//                            (describe_media); beside it Gemini's OpenAI endpoint, …/v1beta/openai/chat/completions
// The first path segment after /s/ picks a scenario, so each provider's base_url decides how
// the "vendor" behaves: http://127.0.0.1:<port>/s/<scenario>. Every request is recorded.

export type Scenario =
  | "ok"
  | "401"
  | "403"
  | "429"
  | "429-date"
  | "500"
  | "503"
  | "400"
  | "400-echo-key"
  | "hang"
  | "slow-body"
  | "malformed"
  | "html"
  | "empty"
  | "no-choices"
  | "length"
  | "redirect"
  | "oversize"
  | "oversize-chunked"
  | "slow-ok";

interface RecordedRequest {
  method: string;
  path: string;
  scenario: string;
  protocol: "openai" | "anthropic" | "gemini" | "unknown";
  headers: Record<string, string>;
  body: any;
  rawBody: string;
}

export interface FakeVendors {
  readonly origin: string;
  readonly requests: RecordedRequest[];
  /** base_url for a scenario. */
  base(scenario: Scenario): string;
  /** Requests received for one scenario. */
  received(scenario: Scenario): RecordedRequest[];
  stop(): Promise<void>;
}

const OVERSIZE_BYTES = 256 * 1024;
const VENDOR_MODEL_ECHO = "fake-vendor";

/** What the fake "translates" a text to: recognisable and derived from the input. */
export const fakeTranslation = (text: string): string => `[translated] ${text}`;

export async function startFakeVendors(): Promise<FakeVendors> {
  const requests: RecordedRequest[] = [];
  const hanging = new Set<() => void>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 30,
    async fetch(req) {
      const url = new URL(req.url);
      const m = /^\/s\/([^/]+)(\/.*)$/.exec(url.pathname);
      const scenario = m?.[1] ?? "";
      const rest = m ? m[2] : url.pathname;
      const gemini = /^\/v1beta\/models\/([^/:]+):generateContent$/.exec(rest ?? "");
      const protocol = rest === "/chat/completions" || rest === "/v1beta/openai/chat/completions" ? "openai" : rest === "/v1/messages" ? "anthropic" : gemini ? "gemini" : "unknown";
      const rawBody = await req.text();
      let body: any = null;
      try {
        body = JSON.parse(rawBody);
      } catch {
        body = null;
      }
      requests.push({ method: req.method, path: url.pathname, scenario, protocol, headers: Object.fromEntries(req.headers), body, rawBody });
      if (protocol === "unknown" || req.method !== "POST") return vendorError(protocol, 404, "not_found_error", `unknown route ${req.method} ${url.pathname}`);
      if (protocol === "gemini") return geminiAnswer(scenario!, req, body, decodeURIComponent(gemini?.[1] ?? ""));
      return answer(scenario!, protocol, req, body, url, hanging);
    },
  });
  const origin = `http://127.0.0.1:${server.port}`;
  return {
    origin,
    requests,
    base: (scenario) => `${origin}/s/${scenario}`,
    received: (scenario) => requests.filter((r) => r.scenario === scenario),
    async stop() {
      for (const release of hanging) {
        try {
          release();
        } catch {
          // the client went away first (aborted stream)
        }
      }
      await server.stop(true);
    },
  };
}

async function answer(scenario: string, protocol: "openai" | "anthropic", req: Request, body: any, url: URL, hanging: Set<() => void>): Promise<Response> {
  const key = protocol === "openai" ? (/^Bearer (.+)$/.exec(req.headers.get("authorization") ?? "")?.[1] ?? null) : req.headers.get("x-api-key");
  switch (scenario) {
    case "401":
      return protocol === "openai"
        ? vendorError(protocol, 401, "invalid_api_key", `Incorrect API key provided: ${mask(key)}. You can find your API key at https://platform.openai.com/account/api-keys.`)
        : vendorError(protocol, 401, "authentication_error", "invalid x-api-key");
    case "403":
      return vendorError(protocol, 403, "permission_error", "Your API key does not have permission to use the specified resource.");
    case "429":
      return vendorError(protocol, 429, "rate_limit_error", "Rate limit reached for requests", { "retry-after": "17" });
    case "429-date":
      return vendorError(protocol, 429, "rate_limit_error", "Rate limit reached", { "retry-after": new Date(Date.now() + 42_000).toUTCString() });
    case "500":
      return vendorError(protocol, 500, "api_error", "Internal server error");
    case "503":
      return vendorError(protocol, 503, "overloaded_error", "Overloaded");
    case "400":
      return vendorError(protocol, 400, "invalid_request_error", "The model `no-such-model` does not exist");
    case "400-echo-key":
      return vendorError(protocol, 400, "invalid_request_error", `Malformed key ${key} in request`);
    case "hang":
      return new Promise<Response>((resolve) => hanging.add(() => resolve(new Response("late"))));
    case "slow-body": {
      const stream = new ReadableStream<Uint8Array>({
        start(ctrl) {
          ctrl.enqueue(new TextEncoder().encode('{"choices":['));
          hanging.add(() => ctrl.close());
        },
      });
      return new Response(stream, { status: 200, headers: { "content-type": "application/json" } });
    }
    case "malformed":
      return new Response('{"id":"x","choices":[{"message":{"content":"unterminated', { status: 200, headers: { "content-type": "application/json" } });
    case "html":
      return new Response("<html><body>Welcome to nginx</body></html>", { status: 200, headers: { "content-type": "text/html" } });
    case "empty":
      return success(protocol, body, "");
    case "no-choices":
      return Response.json(protocol === "openai" ? { id: "chatcmpl-1", object: "chat.completion", choices: [] } : { id: "msg_1", type: "message", role: "assistant", content: [] });
    case "length":
      return success(protocol, body, "partial", true);
    case "redirect":
      return new Response(null, { status: 302, headers: { location: `${url.origin}/s/ok${url.pathname.replace(/^\/s\/[^/]+/, "")}` } });
    case "oversize":
      return new Response(JSON.stringify({ padding: "x".repeat(OVERSIZE_BYTES) }), { status: 200, headers: { "content-type": "application/json" } });
    case "oversize-chunked": {
      let sent = 0;
      const chunk = new TextEncoder().encode("x".repeat(16 * 1024));
      const stream = new ReadableStream<Uint8Array>({
        pull(ctrl) {
          if (sent === 0) ctrl.enqueue(new TextEncoder().encode('{"padding":"'));
          if (sent > OVERSIZE_BYTES * 4) return ctrl.close();
          sent += chunk.byteLength;
          ctrl.enqueue(chunk);
        },
      });
      return new Response(stream, { status: 200, headers: { "content-type": "application/json" } });
    }
    case "slow-ok":
      await new Promise((r) => setTimeout(r, 500));
      return validated(protocol, req, body, key);
    case "ok":
      return validated(protocol, req, body, key);
    default:
      return vendorError(protocol, 404, "not_found_error", `unknown scenario ${scenario}`);
  }
}

// The "ok" vendor checks what the real APIs require before answering.
function validated(protocol: "openai" | "anthropic", req: Request, body: any, key: string | null): Response {
  if (!key) {
    return protocol === "openai" ? vendorError(protocol, 401, "invalid_api_key", "You didn't provide an API key.") : vendorError(protocol, 401, "authentication_error", "x-api-key header is required");
  }
  if (!body || typeof body.model !== "string" || !Array.isArray(body.messages) || body.messages.length === 0) {
    return vendorError(protocol, 400, "invalid_request_error", "model and messages are required");
  }
  if (protocol === "anthropic") {
    if (req.headers.get("anthropic-version") !== "2023-06-01") return vendorError(protocol, 400, "invalid_request_error", "anthropic-version header is required");
    if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) return vendorError(protocol, 400, "invalid_request_error", "max_tokens: Field required");
    if (body.messages.some((m: any) => m.role === "system")) return vendorError(protocol, 400, "invalid_request_error", "messages: system role is not allowed; use the top-level system parameter");
  }
  const user = body.messages.filter((m: any) => m.role === "user").pop();
  // A message with an image (describe_media): the image part checked as the vendor's API wants it.
  if (Array.isArray(user?.content)) {
    const image = imagePart(protocol, user.content);
    if (typeof image === "string") return vendorError(protocol, 400, "invalid_request_error", image);
    return success(protocol, body, fakeDescription(image.type, image.bytes));
  }
  return success(protocol, body, fakeTranslation(typeof user?.content === "string" ? user.content : ""));
}

/** What the fake "sees" in an image: recognisable and derived from the input. */
export const fakeDescription = (type: string, bytes: number): string => `A test picture (${type}, ${bytes} bytes)`;

/** The image of a content array: OpenAI-compatible image_url data URL, or Anthropic's base64 image block; else what is wrong. */
function imagePart(protocol: "openai" | "anthropic", parts: any[]): { type: string; bytes: number } | string {
  if (!parts.some((p) => p?.type === "text" && typeof p.text === "string")) return "a text part is required";
  if (protocol === "openai") {
    const url = parts.find((p) => p?.type === "image_url")?.image_url?.url;
    const m = typeof url === "string" ? /^data:(image\/[a-z+]+);base64,([A-Za-z0-9+/=]+)$/.exec(url) : null;
    return m?.[1] && m[2] ? { type: m[1], bytes: Buffer.from(m[2], "base64").length } : "image_url.url must be a base64 data URL";
  }
  const src = parts.find((p) => p?.type === "image")?.source;
  if (src?.type !== "base64" || typeof src.media_type !== "string" || typeof src.data !== "string") return "image.source must be { type: base64, media_type, data }";
  return { type: src.media_type, bytes: Buffer.from(src.data, "base64").length };
}

function success(protocol: "openai" | "anthropic", body: any, text: string, truncated = false): Response {
  const model = typeof body?.model === "string" ? body.model : VENDOR_MODEL_ECHO;
  if (protocol === "openai") {
    return Response.json({
      id: "chatcmpl-fake",
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: truncated ? "length" : "stop" }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    });
  }
  return Response.json({
    id: "msg_fake",
    type: "message",
    role: "assistant",
    model,
    content: text === "" ? [] : [{ type: "text", text }],
    stop_reason: truncated ? "max_tokens" : "end_turn",
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 5 },
  });
}

function vendorError(protocol: string, status: number, type: string, message: string, headers: Record<string, string> = {}): Response {
  const body = protocol === "anthropic" ? { type: "error", error: { type, message } } : { error: { message, type, param: null, code: type } };
  return Response.json(body, { status, headers });
}

function mask(key: string | null): string {
  if (!key) return "(none)";
  return `${key.slice(0, 5)}${"*".repeat(Math.max(0, key.length - 9))}${key.slice(-4)}`;
}

// ---- Gemini's native API (generateContent), as Google documents its wire format and errors ----

/** Google's error shape: { error: { code, message, status } }. */
function geminiError(code: number, status: string, message: string, headers: Record<string, string> = {}): Response {
  return Response.json({ error: { code, message, status } }, { status: code, headers });
}

function geminiSuccess(model: string, text: string, finishReason = "STOP"): Response {
  return Response.json({
    candidates: [{ content: { parts: text === "" ? [] : [{ text }], role: "model" }, finishReason, index: 0 }],
    usageMetadata: { promptTokenCount: 270, candidatesTokenCount: 12, totalTokenCount: 282 },
    modelVersion: model,
    responseId: "fake-response",
  });
}

function geminiAnswer(scenario: string, req: Request, body: any, model: string): Response {
  switch (scenario) {
    case "401":
    case "403":
      return geminiError(
        403,
        "PERMISSION_DENIED",
        "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
      );
    case "400":
      return geminiError(400, "INVALID_ARGUMENT", `models/${model} is not found for API version v1beta, or is not supported for generateContent.`);
    case "429":
      return geminiError(429, "RESOURCE_EXHAUSTED", "You exceeded your current quota, please check your plan and billing details.", { "retry-after": "17" });
    case "500":
      return geminiError(500, "INTERNAL", "An internal error has occurred.");
    case "empty":
      // A prompt blocked by safety settings: no candidates at all.
      return Response.json({ promptFeedback: { blockReason: "SAFETY" }, usageMetadata: { promptTokenCount: 270, totalTokenCount: 270 }, modelVersion: model });
    case "length":
      return geminiSuccess(model, "A partial", "MAX_TOKENS");
    case "ok":
      break;
    default:
      return geminiError(404, "NOT_FOUND", `unknown scenario ${scenario}`);
  }
  const key = req.headers.get("x-goog-api-key") ?? new URL(req.url).searchParams.get("key");
  if (!key)
    return geminiError(
      403,
      "PERMISSION_DENIED",
      "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
    );
  if (!Array.isArray(body?.contents) || body.contents.length === 0) return geminiError(400, "INVALID_ARGUMENT", "* GenerateContentRequest.contents: contents is not specified");
  const parts = body.contents.at(-1)?.parts;
  if (!Array.isArray(parts) || !parts.some((p: any) => typeof p?.text === "string"))
    return geminiError(400, "INVALID_ARGUMENT", "* GenerateContentRequest.contents[0].parts: contents.parts must not be empty.");
  if (body.system_instruction !== undefined && !Array.isArray(body.system_instruction?.parts))
    return geminiError(400, "INVALID_ARGUMENT", 'Invalid JSON payload received. Unknown name "system_instruction"');
  const inline = parts.find((p: any) => p?.inline_data ?? p?.inlineData);
  const data = inline?.inline_data ?? inline?.inlineData;
  const type = data?.mime_type ?? data?.mimeType;
  if (typeof type !== "string" || typeof data?.data !== "string" || !/^[A-Za-z0-9+/=]+$/.test(data.data)) {
    return geminiError(400, "INVALID_ARGUMENT", "* GenerateContentRequest.contents[0].parts[1].inline_data: base64 decoding failed");
  }
  return geminiSuccess(model, fakeDescription(type, Buffer.from(data.data, "base64").length));
}
