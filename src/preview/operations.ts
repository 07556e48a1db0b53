import { z } from "zod";
import { projectOperation } from "../core/operation";
import { AppError } from "../errors";
import { Empty } from "../lib/schemas";
import { PreviewTokenIn, PreviewTokenOut } from "./model";
import { createPreviewToken, deletePreviewToken, listPreviewTokens, previewTokenToWire } from "./service";

const BASE = "/admin/p/:ref/preview-tokens";

const createOp = projectOperation({
  name: "create_preview_token",
  title: "Create a preview token",
  description:
    "Create a short-lived, read-only preview token (cms_pv_…) for the delivery API: sent as Authorization: Bearer or ?preview=, delivery answers the latest content (drafts, draft translations, scheduled nodes), never cached. " +
    "The plaintext is in this response only.",
  scopes: ["content:read"],
  input: PreviewTokenIn,
  output: z.object({ token: PreviewTokenOut.extend({ token: z.string().describe("the plaintext bearer (cms_pv_…), shown in this response only") }) }),
  http: { method: "POST", path: BASE, status: 201, data: "token", noStore: true, tag: "preview", summary: "Create a preview token for the delivery API (plaintext in this response only)" },
  async run({ deps, project, now, write }, args) {
    const { row, plaintext } = await createPreviewToken(deps.db, project, args, write.actor, deps.config.previewTokenMaxTtlSeconds, now);
    return { token: { ...previewTokenToWire(row, now), token: plaintext } };
  },
});

const listOp = projectOperation({
  name: "list_preview_tokens",
  title: "List preview tokens",
  description: "List the project's preview tokens, expired ones included (hints only, never the token).",
  scopes: ["content:read"],
  input: z.object({}),
  output: z.object({ tokens: z.array(PreviewTokenOut) }),
  http: { method: "GET", path: BASE, data: "tokens", tag: "preview", summary: "List the project's preview tokens (hints only)" },
  run: async ({ deps, project, now }) => ({ tokens: (await listPreviewTokens(deps.db, project)).map((t) => previewTokenToWire(t, now)) }),
});

const deleteOp = projectOperation({
  name: "delete_preview_token",
  title: "Revoke a preview token",
  description: "Revoke a preview token; it stops working at once on every instance. Needs content:write: a reader may mint its own preview, not end everyone's.",
  // content:read mints a token (it reads drafts already); ending the previews of everyone else is a write.
  scopes: ["content:write"],
  input: z.object({ id: z.string().max(64).optional().describe("token id (or pass { id } as a JSON body)") }),
  output: Empty,
  activity: { kind: "preview_token" },
  http: [
    { method: "DELETE", path: BASE, status: 204, bodyOrQuery: true, tag: "preview", summary: "Revoke a preview token (by ?id= or JSON { id })" },
    { method: "DELETE", path: `${BASE}/:id`, status: 204, tag: "preview", summary: "Revoke a preview token by id" },
  ],
  async run({ deps, project }, args) {
    if (!args.id) throw new AppError("missing_parameter", 'give the token id as ?id= or a JSON body { "id" }', { field: "id" });
    await deletePreviewToken(deps.db, project, args.id);
    return {};
  },
});

export const previewOperations = [createOp, listOp, deleteOp];
