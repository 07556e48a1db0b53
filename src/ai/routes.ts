import { Elysia, t } from "elysia";
import { adminAuth, adminDoc } from "../auth";
import type { AppDeps } from "../deps";
import { ErrorSchema, errorResponses, IdParams, RefParams } from "../lib/model";
import { KINDS } from "./kinds";
import { AiModel } from "./model";
import {
  createProvider,
  deleteProvider,
  getProviderForCaller,
  listProviders,
  providerToWire,
  revealApiKey,
  translateText,
  updateProvider,
} from "./service";

const callErrors = { ...errorResponses, 409: ErrorSchema, 429: ErrorSchema, 500: ErrorSchema, 502: ErrorSchema, 504: ErrorSchema } as const;

export function aiRoutes(deps: AppDeps) {
  const { db } = deps;
  return new Elysia()
    .use(adminAuth(deps))
    .get("/admin/ai/kinds", () => ({ data: KINDS.map((k) => ({ ...k, aliases: [...k.aliases] })) }), {
      scope: "ai:read",
      response: { 200: t.Object({ data: t.Array(AiModel.kind) }), ...errorResponses },
      detail: adminDoc("ai", "List the provider kinds with their default base URL and model"),
    })
    .get("/admin/p/:ref/ai/providers", async ({ project }) => ({ data: (await listProviders(db, project.id)).map(providerToWire) }), {
      projectScope: "ai:read",
      params: RefParams,
      response: { 200: t.Object({ data: t.Array(AiModel.provider) }), ...errorResponses },
      detail: adminDoc("ai", "List a project's AI providers (keys masked as api_key_hint)"),
    })
    .post(
      "/admin/p/:ref/ai/providers",
      async ({ project, body, set }) => {
        set.status = 201;
        return { data: providerToWire(await createProvider(deps, project, body)) };
      },
      {
        projectScope: "ai:write",
        params: RefParams,
        body: AiModel.create,
        response: { 201: t.Object({ data: AiModel.provider }), ...callErrors },
        detail: adminDoc("ai", "Register an AI provider; api_key is sealed at rest", "The project's first provider becomes its default unless is_default is false."),
      },
    )
    .get(
      "/admin/ai/providers/:id",
      async ({ params, caller, set }) => {
        const row = await getProviderForCaller(db, params.id, caller);
        const apiKey = await revealApiKey(deps, row);
        set.headers["cache-control"] = "no-store";
        return { data: { ...providerToWire(row), api_key: apiKey } };
      },
      {
        scope: "ai:write",
        params: IdParams,
        response: { 200: t.Object({ data: AiModel.providerWithKey }), ...callErrors },
        detail: adminDoc("ai", "Read one provider with its unmasked api_key (edit form)", "Needs ai:write: the plain key is a secret a reader must not extract."),
      },
    )
    .patch(
      "/admin/ai/providers/:id",
      async ({ params, caller, body }) => {
        const row = await getProviderForCaller(db, params.id, caller);
        return { data: providerToWire(await updateProvider(deps, row, body)) };
      },
      {
        scope: "ai:write",
        params: IdParams,
        body: AiModel.update,
        response: { 200: t.Object({ data: AiModel.provider }), ...callErrors },
        detail: adminDoc("ai", "Update a provider", "Omitted fields keep their value; api_key null clears the key; is_default true clears the project's other default."),
      },
    )
    .delete(
      "/admin/ai/providers/:id",
      async ({ params, caller, set }) => {
        await deleteProvider(db, await getProviderForCaller(db, params.id, caller));
        set.status = 204;
        return undefined;
      },
      {
        scope: "ai:write",
        params: IdParams,
        detail: adminDoc("ai", "Delete a provider"),
      },
    )
    .post("/admin/p/:ref/ai/translate", async ({ project, body }) => ({ data: await translateText(deps, project, body) }), {
      projectScope: "ai:read",
      params: RefParams,
      body: AiModel.translate,
      response: { 200: AiModel.translation, ...callErrors },
      detail: adminDoc(
        "ai",
        "Translate text with the project's provider and its stored key",
        "Dispatches by kind: anthropic to POST {base}/v1/messages, every other kind to POST {base}/chat/completions. Upstream faults: 401/403 → 502 provider_error, 429 → 429 rate_limited with Retry-After, 5xx/invalid/empty → 502, timeout → 504 provider_timeout.",
      ),
    });
}
