// Real loopback HTTP servers standing in for the AI vendors (this machine reaches none of them),
// each speaking its own wire format and its own error shapes:
//   OpenAI      POST /v1/chat/completions                  Bearer key; { error: { message, type, param, code } }
//   Anthropic   POST /v1/messages                          x-api-key, anthropic-version; { type: "error", error: { type, message }, request_id }
//   Gemini      POST /v1beta/openai/chat/completions       Bearer key; errors as a one-element array [{ error: { code, message, status } }];
//               POST /v1beta/models/{model}:generateContent x-goog-api-key (native: describe_media); { error: { code, message, status } };
//               a rate limit says when to retry in the body (RetryInfo retryDelay), not in a header
//   Mistral     POST /v1/chat/completions                  Bearer key; { object: "error", message, type, param, code }; 401 { message, request_id }
//   Groq        POST /openai/v1/chat/completions           Bearer key; { error: { message, type, code } }
//   OpenRouter  POST /api/v1/chat/completions              Bearer key; { error: { code, message }, user_id }
//   Embeddings  POST {root}/embeddings (OpenAI, Gemini's OpenAI endpoint, Mistral, OpenRouter)  Bearer key;
//               { data: [{ object: "embedding", index, embedding }], model, usage }: fakeEmbedding's vectors
// Two address forms pick who answers and how:
//   /v/<vendor>/<scenario><the vendor's own path>  that vendor (vendorBase gives the base_url);
//   /s/<scenario>/…  the protocol the path names (…/chat/completions: OpenAI; …/v1/messages:
//                    Anthropic; …:generateContent: Gemini's native API), for tests about the protocol only.
// `internet()` stands in for the network between the app and the vendors' public addresses: a fetch
// that records where the app dialled and carries the request to the loopback vendor the name
// belongs to. Every request is recorded.

import { countTokens } from "gpt-tokenizer/encoding/o200k_base";

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
  | "slow-ok"
  | "nul"
  | "only-nul"
  // The pipeline's checks (tests/translation-pipeline.test.ts): a vendor that follows the glossary it
  // is given; one that always loses the first ⟦n⟧ token (markup, a URL) and ignores the glossary; and
  // one that loses it only until it is told its previous answer was refused.
  | "obedient"
  | "sloppy"
  | "sloppy-once";

export type Vendor = "openai" | "anthropic" | "gemini" | "mistral" | "groq" | "openrouter";
type Protocol = "openai" | "anthropic" | "gemini";

/** The vendors' public API hosts, as the kinds' default base URLs name them. */
const VENDOR_HOSTS: Readonly<Record<string, Vendor>> = {
  "api.openai.com": "openai",
  "api.anthropic.com": "anthropic",
  "generativelanguage.googleapis.com": "gemini",
  "api.mistral.ai": "mistral",
  "api.groq.com": "groq",
  "openrouter.ai": "openrouter",
};

/** Each vendor's API root under its host (the path of its default base URL). */
const ROOT: Readonly<Record<Vendor, string>> = { openai: "/v1", anthropic: "", gemini: "/v1beta/openai", mistral: "/v1", groq: "/openai/v1", openrouter: "/api/v1" };

interface RecordedRequest {
  method: string;
  path: string;
  scenario: string;
  protocol: Protocol | "unknown";
  /** Who answered: the vendor of a /v/ address, else the protocol's own vendor. */
  vendor: Vendor;
  headers: Record<string, string>;
  body: any;
  rawBody: string;
}

/** What the app dialled through `internet()`: the URL, and the Host and TLS server name it asked for. */
interface Dialled {
  url: string;
  host: string | null;
  serverName: string | null;
}

interface Internet {
  readonly fetch: typeof fetch;
  readonly dialled: Dialled[];
  /** What the vendors answer from now on (default "ok"). */
  scenario: Scenario;
}

export interface FakeVendors {
  readonly origin: string;
  readonly requests: RecordedRequest[];
  /** base_url for a scenario. */
  base(scenario: Scenario): string;
  /** base_url of one vendor answering as `scenario`, with the vendor's own API root. */
  vendorBase(vendor: Vendor, scenario: Scenario): string;
  /** Requests received for one scenario. */
  received(scenario: Scenario): RecordedRequest[];
  /** The network to the vendors' public hosts, plus `hosts` (other names and the vendor each reaches). */
  internet(hosts?: Record<string, Vendor>): Internet;
  stop(): Promise<void>;
}

const OVERSIZE_BYTES = 256 * 1024;
const VENDOR_MODEL_ECHO = "fake-vendor";

/** What the fake "translates" a text to: recognisable and derived from the input. */
export const fakeTranslation = (text: string): string => `[translated] ${text}`;

/** What a vendor says of a model it does not serve, as each says it (the 400 scenario). */
export const unknownModelMessage = (vendor: Vendor, model: string): string =>
  ({
    openai: `The model \`${model}\` does not exist or you do not have access to it.`,
    anthropic: `model: ${model}`,
    gemini: `models/${model} is not found for API version v1beta, or is not supported for generateContent.`,
    mistral: `Invalid model: ${model}`,
    groq: `The model \`${model}\` does not exist or you do not have access to it.`,
    openrouter: `${model} is not a valid model ID`,
  })[vendor];

/** Where the request goes: the vendor, scenario and protocol of its path; null when no vendor serves it. */
function route(pathname: string): { vendor: Vendor; scenario: string; protocol: Protocol | "unknown"; model: string | null } | null {
  const gemini = (rest: string): RegExpExecArray | null => /^(?:\/v1beta)?\/models\/([^/:]+):generateContent$/.exec(rest);
  const legacy = /^\/s\/([^/]+)(\/.*)$/.exec(pathname);
  if (legacy) {
    const rest = legacy[2]!;
    const g = gemini(rest.replace(/^\/v1beta/, ""));
    const protocol = rest.endsWith("/chat/completions") ? "openai" : rest.endsWith("/v1/messages") ? "anthropic" : g ? "gemini" : "unknown";
    return { vendor: protocol === "anthropic" ? "anthropic" : protocol === "gemini" ? "gemini" : "openai", scenario: legacy[1]!, protocol, model: g ? decodeURIComponent(g[1]!) : null };
  }
  const own = /^\/v\/([a-z]+)\/([^/]+)(\/.*)$/.exec(pathname);
  if (!own || !Object.values(VENDOR_HOSTS).includes(own[1] as Vendor)) return null;
  const vendor = own[1] as Vendor;
  const rest = own[3]!;
  const g = vendor === "gemini" ? gemini(rest) : null;
  const protocol = g ? "gemini" : vendor === "anthropic" ? (rest === "/v1/messages" ? "anthropic" : "unknown") : rest === `${ROOT[vendor]}/chat/completions` ? "openai" : "unknown";
  return { vendor, scenario: own[2]!, protocol, model: g ? decodeURIComponent(g[1]!) : null };
}

export async function startFakeVendors(): Promise<FakeVendors> {
  const requests: RecordedRequest[] = [];
  const hanging = new Set<() => void>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 30,
    async fetch(req) {
      const url = new URL(req.url);
      const rawBody = await req.text();
      const emb = embeddingsRoute(url.pathname);
      if (emb) return embeddingsAnswer(emb, req, rawBody, requests);
      const to = route(url.pathname);
      let body: any = null;
      try {
        body = JSON.parse(rawBody);
      } catch {
        body = null;
      }
      const vendor = to?.vendor ?? "openai";
      const protocol = to?.protocol ?? "unknown";
      requests.push({ method: req.method, path: url.pathname, scenario: to?.scenario ?? "", protocol, vendor, headers: Object.fromEntries(req.headers), body, rawBody });
      const v = { vendor, native: protocol === "gemini" };
      if (protocol === "unknown" || req.method !== "POST") return vendorError(v, 404, "not_found", `unknown route ${req.method} ${url.pathname}`);
      if (protocol === "gemini") return geminiAnswer(to!.scenario, req, body, to!.model ?? "");
      return answer(to!.scenario, { vendor, protocol }, req, body, url, hanging);
    },
  });
  const origin = `http://127.0.0.1:${server.port}`;
  return {
    origin,
    requests,
    base: (scenario) => `${origin}/s/${scenario}`,
    vendorBase: (vendor, scenario) => `${origin}/v/${vendor}/${scenario}${ROOT[vendor]}`,
    received: (scenario) => requests.filter((r) => r.scenario === scenario),
    internet: (hosts = {}) => internet(origin, { ...VENDOR_HOSTS, ...hosts }),
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

/** The stand-in for the network: the name (Host header, else the URL's) picks the loopback vendor; the path is kept. */
function internet(origin: string, hosts: Record<string, Vendor>): Internet {
  const net: Internet = {
    dialled: [],
    scenario: "ok",
    fetch: (async (input: string | URL | Request, init?: RequestInit & { tls?: { serverName?: string } }) => {
      const url = new URL(String(input));
      const host = new Headers(init?.headers).get("host");
      net.dialled.push({ url: url.href, host, serverName: init?.tls?.serverName ?? null });
      const name = (host ?? url.host).replace(/:\d+$/, "").replace(/\.$/, "");
      const vendor = hosts[name];
      // A name no vendor answers to: as a connection nobody accepts.
      if (!vendor) throw Object.assign(new TypeError(`fetch failed: nothing answers at ${name}`), { code: "ConnectionRefused" });
      const { tls: _tls, ...rest } = init ?? {};
      return fetch(`${origin}/v/${vendor}/${net.scenario}${url.pathname}${url.search}`, rest);
    }) as typeof fetch,
  };
  return net;
}

type Who = { vendor: Vendor; protocol: "openai" | "anthropic" };

async function answer(scenario: string, who: Who, req: Request, body: any, url: URL, hanging: Set<() => void>): Promise<Response> {
  const key = who.protocol === "openai" ? (/^Bearer (.+)$/.exec(req.headers.get("authorization") ?? "")?.[1] ?? null) : req.headers.get("x-api-key");
  const fault = faultAnswer(scenario, who, key, body, url);
  if (fault) return fault;
  switch (scenario) {
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
      // The slowness is the scenario: calls in flight long enough to meet the concurrency limit.
      await new Promise((r) => setTimeout(r, 500)); // fixed wait: the slow vendor is the scenario
      return validated(who, req, body, key);
    case "ok":
      return validated(who, req, body, key);
    case "obedient":
    case "sloppy":
    case "sloppy-once":
      return pipelineAnswer(scenario, who, body);
    default:
      return vendorError(who, 404, "not_found", `unknown scenario ${scenario}`);
  }
}

/** The pipeline scenarios' answers (OpenAI-compatible or Anthropic wire, as "ok" answers). */
function pipelineAnswer(scenario: "obedient" | "sloppy" | "sloppy-once", who: Who, body: any): Response {
  const system: string = who.protocol === "anthropic" ? String(body.system ?? "") : String(body.messages?.find((m: any) => m.role === "system")?.content ?? "");
  const user = String(body.messages?.filter((m: any) => m.role === "user").pop()?.content ?? "");
  let out = fakeTranslation(user);
  const told = system.includes("A previous answer was refused");
  if (scenario === "sloppy" || (scenario === "sloppy-once" && !told)) out = out.replace("⟦1⟧", "https://changed.example/");
  if (scenario === "obedient") for (const [, from, to] of system.matchAll(/"([^"]+)" as "([^"]+)"/g)) out = out.split(from as string).join(to as string);
  return success(who, body, out);
}

/** The scenarios answered at once, without looking at the request (errors, odd bodies); null for the others. */
function faultAnswer(scenario: string, who: Who, key: string | null, body: any, url: URL): Response | null {
  const json = (text: string, status = 200, type = "application/json"): Response => new Response(text, { status, headers: { "content-type": type } });
  switch (scenario) {
    case "401":
      return vendorError(
        who,
        401,
        "auth",
        who.vendor === "openai" ? `Incorrect API key provided: ${mask(key)}. You can find your API key at https://platform.openai.com/account/api-keys.` : "invalid x-api-key",
      );
    case "403":
      return vendorError(who, 403, "permission", "Your API key does not have permission to use the specified resource.");
    case "429":
      return vendorError(who, 429, "rate", "Rate limit reached for requests", 17);
    case "429-date":
      return vendorError(who, 429, "rate", "Rate limit reached", new Date(Date.now() + 42_000).toUTCString());
    case "500":
      return vendorError(who, 500, "server", "Internal server error");
    case "503":
      return vendorError(who, 503, "overloaded", "Overloaded");
    case "400":
      return vendorError(who, 400, "bad_request", unknownModelMessage(who.vendor, "no-such-model"));
    case "400-echo-key":
      return vendorError(who, 400, "bad_request", `Malformed key ${key} in request`);
    case "malformed":
      return json('{"id":"x","choices":[{"message":{"content":"unterminated');
    case "html":
      return json("<html><body>Welcome to nginx</body></html>", 200, "text/html");
    case "empty":
      return success(who, body, "");
    case "nul":
      return success(who, body, "Bon\u0000jour \ud800<b>{name}</b>");
    case "only-nul":
      return success(who, body, "\u0000\u0000 ");
    case "no-choices":
      return Response.json(who.protocol === "openai" ? { id: "chatcmpl-1", object: "chat.completion", choices: [] } : { id: "msg_1", type: "message", role: "assistant", content: [] });
    case "length":
      return success(who, body, "partial", true);
    case "redirect":
      return new Response(null, { status: 302, headers: { location: `${url.origin}${url.pathname.replace(/^\/(s|v\/[a-z]+)\/[^/]+/, "/$1/ok")}` } });
    case "oversize":
      return json(JSON.stringify({ padding: "x".repeat(OVERSIZE_BYTES) }));
    default:
      return null;
  }
}

// The "ok" vendor checks what the real APIs require before answering.
function validated(who: Who, req: Request, body: any, key: string | null): Response {
  if (!key) return vendorError(who, 401, "auth", who.protocol === "openai" ? "You didn't provide an API key." : "x-api-key header is required");
  if (!body || typeof body.model !== "string" || !Array.isArray(body.messages) || body.messages.length === 0) {
    return vendorError(who, 400, "bad_request", "model and messages are required");
  }
  if (who.protocol === "anthropic") {
    if (req.headers.get("anthropic-version") !== "2023-06-01") return vendorError(who, 400, "bad_request", "anthropic-version header is required");
    if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) return vendorError(who, 400, "bad_request", "max_tokens: Field required");
    if (body.messages.some((m: any) => m.role === "system")) return vendorError(who, 400, "bad_request", "messages: system role is not allowed; use the top-level system parameter");
  }
  const user = body.messages.filter((m: any) => m.role === "user").pop();
  // A message with an image (describe_media): the image part checked as the vendor's API wants it.
  if (Array.isArray(user?.content)) {
    const image = imagePart(who.protocol, user.content);
    if (typeof image === "string") return vendorError(who, 400, "bad_request", image);
    return success(who, body, fakeDescription(image.type, image.bytes));
  }
  return success(who, body, fakeTranslation(typeof user?.content === "string" ? user.content : ""));
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

/**
 * The usage a vendor reports, counted as OpenAI counts (the o200k tokenizer, gpt-tokenizer): the
 * system and user messages and a few tokens of framing per message in; the answer out. What the
 * app's estimates are held to (tests/translation-jobs.test.ts).
 */
function usageOf(body: any, text: string): { input: number; output: number } {
  const messages: string[] = [
    ...(typeof body?.system === "string" ? [body.system] : []),
    ...(Array.isArray(body?.messages) ? body.messages.map((m: any) => (typeof m.content === "string" ? m.content : "")) : []),
  ];
  // In slices: the tokenizer's merges are quadratic in one long run without spaces (32,000 emoji).
  const count = (s: string): number => {
    let n = 0;
    for (let i = 0; i < s.length; i += 2000) n += countTokens(s.slice(i, i + 2000));
    return n;
  };
  return { input: messages.reduce((n, m) => n + count(m) + 4, 3), output: count(text) };
}

function success(who: Who, body: any, text: string, truncated = false): Response {
  const model = typeof body?.model === "string" ? body.model : VENDOR_MODEL_ECHO;
  const used = usageOf(body, text);
  if (who.protocol === "openai") {
    return Response.json({
      id: who.vendor === "openrouter" ? "gen-fake" : "chatcmpl-fake",
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model,
      ...(who.vendor === "openrouter" ? { provider: "Fake" } : {}),
      choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: truncated ? "length" : "stop" }],
      usage: { prompt_tokens: used.input, completion_tokens: used.output, total_tokens: used.input + used.output },
      ...(who.vendor === "groq" ? { x_groq: { id: "req_fake" } } : {}),
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
    usage: { input_tokens: used.input, output_tokens: used.output },
  });
}

type ErrorKind = "auth" | "permission" | "rate" | "server" | "overloaded" | "bad_request" | "not_found";

const OPENAI_TYPES: Record<ErrorKind, [type: string, code: string | null]> = {
  auth: ["invalid_request_error", "invalid_api_key"],
  permission: ["invalid_request_error", "insufficient_permissions"],
  rate: ["requests", "rate_limit_exceeded"],
  server: ["server_error", null],
  overloaded: ["server_error", "overloaded"],
  bad_request: ["invalid_request_error", "model_not_found"],
  not_found: ["invalid_request_error", "unknown_url"],
};
const ANTHROPIC_TYPES: Record<ErrorKind, string> = {
  auth: "authentication_error",
  permission: "permission_error",
  rate: "rate_limit_error",
  server: "api_error",
  overloaded: "overloaded_error",
  bad_request: "invalid_request_error",
  not_found: "not_found_error",
};
const GOOGLE_STATUS: Record<ErrorKind, string> = {
  auth: "UNAUTHENTICATED",
  permission: "PERMISSION_DENIED",
  rate: "RESOURCE_EXHAUSTED",
  server: "INTERNAL",
  overloaded: "UNAVAILABLE",
  bad_request: "INVALID_ARGUMENT",
  not_found: "NOT_FOUND",
};

/**
 * An error answer in the vendor's own shape. `retryAfter` (a rate limit): seconds or an HTTP date,
 * sent as the Retry-After header by the vendors that send one; Gemini says it in the body
 * (RetryInfo), Mistral and OpenRouter not at all.
 */
function vendorError(who: { vendor: Vendor; native?: boolean }, status: number, kind: ErrorKind, message: string, retryAfter?: number | string): Response {
  const header = retryAfter !== undefined && ["openai", "anthropic", "groq"].includes(who.vendor) ? { "retry-after": String(retryAfter) } : undefined;
  const google = { code: status, message, status: GOOGLE_STATUS[kind] };
  const retryInfo = typeof retryAfter === "number" ? [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: `${retryAfter}s` }] : undefined;
  const bodies: Record<Vendor, unknown> = {
    openai: { error: { message, type: OPENAI_TYPES[kind][0], param: null, code: OPENAI_TYPES[kind][1] } },
    anthropic: { type: "error", error: { type: ANTHROPIC_TYPES[kind], message }, request_id: "req_fake" },
    // Gemini's OpenAI-compatible endpoint wraps Google's error in an array; its native API does not.
    gemini: who.native ? { error: { ...google, details: retryInfo } } : [{ error: { ...google, details: retryInfo } }],
    mistral: kind === "auth" ? { message: "Unauthorized", request_id: "fake" } : { object: "error", message, type: "invalid_request_error", param: null, code: null },
    groq: { error: { message, type: kind === "rate" ? "tokens" : "invalid_request_error", code: OPENAI_TYPES[kind][1] } },
    openrouter: { error: { code: status, message }, user_id: "user_fake" },
  };
  return Response.json(bodies[who.vendor], { status, headers: header });
}

function mask(key: string | null): string {
  if (!key) return "(none)";
  return `${key.slice(0, 5)}${"*".repeat(Math.max(0, key.length - 9))}${key.slice(-4)}`;
}

// ---- Gemini's native API (generateContent), as Google documents its wire format and errors ----

const nativeError = (status: number, kind: ErrorKind, message: string, retryAfter?: number): Response => vendorError({ vendor: "gemini", native: true }, status, kind, message, retryAfter);
const UNREGISTERED = "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.";

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
      return nativeError(403, "permission", UNREGISTERED);
    case "400":
      return nativeError(400, "bad_request", `models/${model} is not found for API version v1beta, or is not supported for generateContent.`);
    case "429":
      return nativeError(429, "rate", "You exceeded your current quota, please check your plan and billing details.", 17);
    case "500":
      return nativeError(500, "server", "An internal error has occurred.");
    case "empty":
      // A prompt blocked by safety settings: no candidates at all.
      return Response.json({ promptFeedback: { blockReason: "SAFETY" }, usageMetadata: { promptTokenCount: 270, totalTokenCount: 270 }, modelVersion: model });
    case "length":
      return geminiSuccess(model, "A partial", "MAX_TOKENS");
    case "ok":
      break;
    default:
      return nativeError(404, "not_found", `unknown scenario ${scenario}`);
  }
  const key = req.headers.get("x-goog-api-key") ?? new URL(req.url).searchParams.get("key");
  if (!key) return nativeError(403, "permission", UNREGISTERED);
  if (!Array.isArray(body?.contents) || body.contents.length === 0) return nativeError(400, "bad_request", "* GenerateContentRequest.contents: contents is not specified");
  const parts = body.contents.at(-1)?.parts;
  if (!Array.isArray(parts) || !parts.some((p: any) => typeof p?.text === "string"))
    return nativeError(400, "bad_request", "* GenerateContentRequest.contents[0].parts: contents.parts must not be empty.");
  if (body.system_instruction !== undefined && !Array.isArray(body.system_instruction?.parts))
    return nativeError(400, "bad_request", 'Invalid JSON payload received. Unknown name "system_instruction"');
  const inline = parts.find((p: any) => p?.inline_data ?? p?.inlineData);
  const data = inline?.inline_data ?? inline?.inlineData;
  const type = data?.mime_type ?? data?.mimeType;
  if (typeof type !== "string" || typeof data?.data !== "string" || !/^[A-Za-z0-9+/=]+$/.test(data.data)) {
    return nativeError(400, "bad_request", "* GenerateContentRequest.contents[0].parts[1].inline_data: base64 decoding failed");
  }
  return geminiSuccess(model, fakeDescription(type, Buffer.from(data.data, "base64").length));
}

// ---- Embeddings (semantic search): deterministic vectors where texts sharing words, or words of
// one meaning (SYNONYMS), are near: a hashed bag of words in 1024 dimensions. ----

const EMBEDDING_DIMENSIONS = 1024;
/** Words of one meaning share a dimension: what makes the fake "semantic". */
const SYNONYMS: Readonly<Record<string, string>> = { automobile: "car", vehicle: "car", cars: "car", motorcar: "car", inexpensive: "cheap", affordable: "cheap" };

function wordDimension(word: string): number {
  let h = 2166136261;
  for (const c of word) h = Math.imul(h ^ (c.codePointAt(0) ?? 0), 16777619);
  return (h >>> 0) % EMBEDDING_DIMENSIONS;
}

/** The fake vendor's vector of a text: each word (synonyms folded) adds 1 to its dimension. */
function fakeEmbedding(text: string): number[] {
  const v = new Array<number>(EMBEDDING_DIMENSIONS).fill(0);
  for (const raw of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const w = SYNONYMS[raw] ?? raw;
    v[wordDimension(w)] = (v[wordDimension(w)] as number) + 1;
  }
  return v;
}

function embeddingsRoute(pathname: string): { vendor: Vendor; scenario: string } | null {
  if (!pathname.endsWith("/embeddings")) return null;
  const own = /^\/v\/([a-z]+)\/([^/]+)\//.exec(pathname);
  if (own && Object.values(VENDOR_HOSTS).includes(own[1] as Vendor)) return { vendor: own[1] as Vendor, scenario: own[2] as string };
  const legacy = /^\/s\/([^/]+)\//.exec(pathname);
  return legacy ? { vendor: "openai", scenario: legacy[1] as string } : null;
}

function embeddingsAnswer(to: { vendor: Vendor; scenario: string }, req: Request, rawBody: string, requests: RecordedRequest[]): Response {
  let body: any = null;
  try {
    body = JSON.parse(rawBody);
  } catch {
    body = null;
  }
  const url = new URL(req.url);
  requests.push({ method: req.method, path: url.pathname, scenario: to.scenario, protocol: "openai", vendor: to.vendor, headers: Object.fromEntries(req.headers), body, rawBody });
  const who: Who = { vendor: to.vendor, protocol: "openai" };
  const key = /^Bearer (.+)$/.exec(req.headers.get("authorization") ?? "")?.[1] ?? null;
  if (to.scenario === "500") return vendorError(who, 500, "server", "Internal server error");
  if (to.scenario === "429") return vendorError(who, 429, "rate", "Rate limit reached for requests", 17);
  if (to.scenario === "wrong-dimensions") return Response.json({ object: "list", data: [{ object: "embedding", index: 0, embedding: [0.1, 0.2] }], model: body?.model });
  if (!key) return vendorError(who, 401, "auth", "You didn't provide an API key.");
  const input: unknown = body?.input;
  const texts = typeof input === "string" ? [input] : Array.isArray(input) && input.every((t) => typeof t === "string") ? (input as string[]) : null;
  if (!body || typeof body.model !== "string" || texts === null || texts.length === 0) return vendorError(who, 400, "bad_request", "model and input are required");
  // Mistral's API takes no `dimensions` (mistral-embed is 1024 as it is); the others are asked for 1024.
  if (to.vendor === "mistral" ? body.dimensions !== undefined : body.dimensions !== EMBEDDING_DIMENSIONS) return vendorError(who, 400, "bad_request", `unexpected dimensions: ${body.dimensions}`);
  return Response.json({
    object: "list",
    data: texts.map((t, index) => ({ object: "embedding", index, embedding: fakeEmbedding(t) })),
    model: body.model,
    usage: { prompt_tokens: texts.join(" ").split(/\s+/).length, total_tokens: texts.join(" ").split(/\s+/).length },
  });
}
