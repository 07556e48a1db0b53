// The model compiled for frontends: GET /admin/p/{ref}/model/types.ts and /model/schema.json. They
// answer a file (TypeScript, JSON Schema), not the admin API's { data } envelope, so they are HTTP of
// their own rather than declared operations; authentication, the scope check, the project's
// resolution (another project: 404) and the admin CORS policy are the operation routes' own.
import { Elysia } from "elysia";
import { type AdminAuthenticator, adminDoc, requireScopes, resolveProject } from "../auth";
import type { AppDeps } from "../core/deps";
import { ErrorBody } from "../errors";
import { adminCors, corsHeaders, corsPreflight } from "../lib/cors";
import { compiledModel } from "./cache";
import { modelJsonSchema, modelTypeScript } from "./types";

const TYPES_PATH = "/admin/p/:ref/model/types.ts";
const SCHEMA_PATH = "/admin/p/:ref/model/schema.json";

const REF = { name: "ref", in: "path", required: true, schema: { type: "string", maxLength: 64, description: "project id or slug" } } as const;
const ERRORS = Object.fromEntries([400, 401, 403, 404].map((s) => [String(s), { description: `Error ${s}`, content: { "application/json": { schema: ErrorBody } } }]));
const doc = (summary: string, description: string, type: string) => ({
  ...adminDoc("model", summary, `${description} Scope content:read.`),
  parameters: [REF],
  responses: { 200: { description: summary, content: { [type]: { schema: { type: "string" as const } } } }, ...ERRORS },
});

export function modelFileRoutes(deps: AppDeps, authenticate: AdminAuthenticator) {
  const cors = adminCors(deps.config);
  type Ctx = { request: Request; server: unknown; params: Record<string, string>; set: { headers: Record<string, string | number> } };
  /** The project's model definition, for a caller allowed to read it; the answer's headers set. */
  const modelOf = async (ctx: Ctx, contentType: string) => {
    Object.assign(ctx.set.headers, corsHeaders(cors, ctx.request.headers.get("origin")));
    const caller = await authenticate(ctx.request, ctx.server, ctx.params?.ref);
    requireScopes(caller, ["content:read"]);
    const project = await resolveProject(deps.db, ctx.params.ref ?? "", caller);
    // Compiled once per version and process (the same cache the writes use): the definition as parsed.
    const model = await compiledModel(deps.db, project.id, project.modelVersion);
    ctx.set.headers["content-type"] = contentType;
    ctx.set.headers["cache-control"] = "no-store";
    return { definition: model.definition, for: { project: project.slug, version: model.version } };
  };
  return new Elysia()
    .get(
      TYPES_PATH,
      async (ctx) => {
        const m = await modelOf(ctx, "text/plain; charset=utf-8");
        return modelTypeScript(m.definition, m.for);
      },
      { detail: doc("TypeScript types of the delivery answers", "Nodes as a union by node type, blocks by block type, fields typed from the content model.", "text/plain") },
    )
    .get(
      SCHEMA_PATH,
      async (ctx) => {
        const m = await modelOf(ctx, "application/schema+json");
        return JSON.stringify(modelJsonSchema(m.definition, m.for), null, 2);
      },
      { detail: doc("JSON Schema of the delivery answers", "JSON Schema 2020-12: $defs/NodeAnswer and $defs/EntriesAnswer, with a definition per node and block type.", "application/schema+json") },
    )
    .options(TYPES_PATH, ({ request }) => corsPreflight(cors, request), { detail: { hide: true } })
    .options(SCHEMA_PATH, ({ request }) => corsPreflight(cors, request), { detail: { hide: true } });
}
