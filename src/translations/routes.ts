import { Elysia, t } from "elysia";
import { adminAuth, adminDoc } from "../auth";
import type { AppDeps } from "../deps";
import { errorResponses, RefIdParams } from "../lib/model";
import { TranslationModel } from "./model";
import { deleteTranslation, getTranslation, listTranslations, translationToWire, upsertTranslation } from "./service";

export function translationRoutes(deps: AppDeps) {
  const { db } = deps;
  const one = { 200: t.Object({ data: TranslationModel.translation }), ...errorResponses };
  return new Elysia({ prefix: "/admin/p/:ref/nodes/:id/translations" })
    .use(adminAuth(deps))
    .get("", async ({ project, params }) => ({ data: (await listTranslations(db, project, params.id)).map(translationToWire) }), {
      projectScope: "content:read",
      params: RefIdParams,
      response: { 200: t.Object({ data: t.Array(TranslationModel.translation) }), ...errorResponses },
      detail: adminDoc("translations", "List a node's translations"),
    })
    .get("/:locale", async ({ project, params }) => ({ data: translationToWire(await getTranslation(db, project, params.id, params.locale)) }), {
      projectScope: "content:read",
      params: TranslationModel.params,
      response: one,
      detail: adminDoc("translations", "Read a node's translation into one locale"),
    })
    .put(
      "/:locale",
      async ({ project, params, body }) => ({ data: translationToWire(await upsertTranslation(db, project, params.id, params.locale, body, deps.now())) }),
      {
        projectScope: "content:write",
        params: TranslationModel.params,
        body: TranslationModel.upsert,
        response: one,
        detail: adminDoc("translations", "Create or replace a node's translation (meta and per-block overrides)"),
      },
    )
    .delete(
      "/:locale",
      async ({ project, params, set }) => {
        await deleteTranslation(db, project, params.id, params.locale);
        set.status = 204;
        return undefined;
      },
      { projectScope: "content:write", params: TranslationModel.params, detail: adminDoc("translations", "Delete a node's translation") },
    );
}
