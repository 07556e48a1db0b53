import { z } from "zod";
import { adminOperation, projectOperation } from "../core/operation";
import { canonicalLocale } from "../lib/locales";
import { Empty } from "../lib/schemas";
import { KINDS } from "./kinds";
import { KindOut, ProviderIn, ProviderOut, TranslateIn, TranslateTextOut, UsageOut } from "./model";
import { machineTranslate } from "./pipeline";
import { createProvider, deleteProvider, getProviderForCaller, listProviders, listUsage, providerToWire, revealApiKey, updateProvider } from "./service";

const ProviderRef = { provider_id: z.uuid() };
const CALL_ERRORS = [409, 429, 500, 502, 504] as const;
const byId = (method: "GET" | "PATCH" | "DELETE") => ({ method, path: "/admin/ai/providers/:id", params: { id: "provider_id" }, tag: "ai", errors: CALL_ERRORS }) as const;

const translateTextOp = projectOperation({
  name: "translate_text",
  title: "Translate text",
  description:
    "Translate a piece of text with one of the project's AI providers (its stored key). from defaults to the project's default locale. " +
    "field optionally names the content field the text belongs to (title, seo.description, blocks.<id>.text…) so the translation fits it; markup, placeholders and URLs are kept. Nothing is stored.",
  scopes: ["ai:read"],
  input: TranslateIn,
  output: TranslateTextOut,
  tool: { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  http: {
    method: "POST",
    path: "/admin/p/:ref/ai/translate",
    tag: "ai",
    summary: "Translate text with the project's provider and its stored key",
    description:
      "Dispatches by kind: anthropic to POST {base}/v1/messages, every other kind to POST {base}/chat/completions. Upstream faults: 401/403 → 502 provider_error, 429 → 429 rate_limited with Retry-After, 5xx/invalid/empty → 502, timeout → 504 provider_timeout.",
    errors: CALL_ERRORS,
  },
  run: async ({ deps, project }, args) => {
    // Through the pipeline every caller shares: memory, protected tokens, glossary, checks.
    const from = canonicalLocale(args.from ?? project.defaultLocale) ?? args.from ?? project.defaultLocale;
    const to = canonicalLocale(args.to) ?? args.to;
    const a = await machineTranslate(deps, project, { provider_id: args.provider_id, from, to, text: args.text, field: args.field ?? null, format: null, memory: false });
    return {
      translation: a.text,
      provider: a.origin.kind === "memory" ? "memory" : (a.origin.provider_kind ?? ""),
      model: a.origin.model ?? "",
      status: a.status,
      failures: [...a.failures],
      usage: a.usage,
    };
  },
});

const listKindsOp = adminOperation({
  name: "list_ai_kinds",
  title: "List the provider kinds",
  description: "List the provider kinds with their default base URL and model.",
  scopes: ["ai:read"],
  input: z.object({}),
  output: z.object({ kinds: z.array(KindOut) }),
  http: { method: "GET", path: "/admin/ai/kinds", data: "kinds", tag: "ai", summary: "List the provider kinds with their default base URL and model" },
  run: async () => ({ kinds: KINDS.map((k) => ({ ...k, aliases: [...k.aliases] })) }),
});

const listProvidersOp = projectOperation({
  name: "list_ai_providers",
  title: "List AI providers",
  description: "List a project's AI providers (keys masked as api_key_hint).",
  scopes: ["ai:read"],
  input: z.object({}),
  output: z.object({ providers: z.array(ProviderOut) }),
  http: { method: "GET", path: "/admin/p/:ref/ai/providers", data: "providers", tag: "ai", summary: "List a project's AI providers (keys masked as api_key_hint)" },
  run: async ({ deps, project }) => ({ providers: (await listProviders(deps.db, project.id)).map(providerToWire) }),
});

const createProviderOp = projectOperation({
  name: "create_ai_provider",
  title: "Register an AI provider",
  description: "Register an AI provider; api_key is sealed at rest. The project's first provider becomes its default unless is_default is false.",
  scopes: ["ai:write"],
  input: ProviderIn,
  output: z.object({ provider: ProviderOut }),
  http: {
    method: "POST",
    path: "/admin/p/:ref/ai/providers",
    status: 201,
    data: "provider",
    tag: "ai",
    summary: "Register an AI provider; api_key is sealed at rest",
    description: "The project's first provider becomes its default unless is_default is false.",
    errors: CALL_ERRORS,
  },
  run: async ({ deps, project }, args) => ({ provider: providerToWire(await createProvider(deps, project, args)) }),
});

const readProviderOp = adminOperation({
  name: "read_ai_provider",
  title: "Read a provider with its key",
  description: "Read one provider with its unmasked api_key (edit form). Needs ai:write: the plain key is a secret a reader must not extract.",
  scopes: ["ai:write"],
  input: z.object(ProviderRef),
  output: z.object({ provider: ProviderOut.extend({ api_key: z.string().nullable().describe("the plain key (this read only)") }) }),
  http: {
    ...byId("GET"),
    data: "provider",
    noStore: true,
    summary: "Read one provider with its unmasked api_key (edit form)",
    description: "Needs ai:write: the plain key is a secret a reader must not extract.",
  },
  async run({ deps, caller }, args) {
    const row = await getProviderForCaller(deps.db, args.provider_id, caller);
    return { provider: { ...providerToWire(row), api_key: await revealApiKey(deps, row) } };
  },
});

const updateProviderOp = adminOperation({
  name: "update_ai_provider",
  title: "Update a provider",
  description: "Omitted fields keep their value; api_key null clears the key; is_default true clears the project's other default.",
  scopes: ["ai:write"],
  input: ProviderIn.partial().extend(ProviderRef),
  output: z.object({ provider: ProviderOut }),
  http: { ...byId("PATCH"), data: "provider", description: "Omitted fields keep their value; api_key null clears the key; is_default true clears the project's other default." },
  run: async ({ deps, caller }, { provider_id, ...changes }) => ({ provider: providerToWire(await updateProvider(deps, await getProviderForCaller(deps.db, provider_id, caller), changes)) }),
});

const deleteProviderOp = adminOperation({
  name: "delete_ai_provider",
  title: "Delete a provider",
  description: "Delete a provider.",
  scopes: ["ai:write"],
  input: z.object(ProviderRef),
  output: Empty,
  http: { ...byId("DELETE"), status: 204 },
  async run({ deps, caller }, args) {
    await deleteProvider(deps.db, await getProviderForCaller(deps.db, args.provider_id, caller));
    return {};
  },
});

const usageOp = projectOperation({
  name: "get_ai_usage",
  title: "Read the AI token use",
  description:
    "Tokens and calls per provider and calendar month (UTC), from the vendors' usage fields, newest month first; the project's ai_monthly_token_cap stops new calls once used up (429 quota_exceeded).",
  scopes: ["ai:read"],
  input: z.object({}),
  output: z.object({ usage: z.array(UsageOut) }),
  http: { method: "GET", path: "/admin/p/:ref/ai/usage", data: "usage", tag: "ai", summary: "Token use per provider and month" },
  run: async ({ deps, project }) => ({ usage: await listUsage(deps.db, project.id) }),
});

export const aiOperations = [translateTextOp, usageOp, listKindsOp, listProvidersOp, createProviderOp, readProviderOp, updateProviderOp, deleteProviderOp];
