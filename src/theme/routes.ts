import { Elysia, t } from "elysia";
import { adminAuth, adminDoc } from "../auth";
import type { AppDeps } from "../deps";
import { errorResponses, RefParams } from "../lib/model";
import { ThemeModel } from "./model";
import { getTheme, updateTheme } from "./service";

export function themeRoutes(deps: AppDeps) {
  const { db } = deps;
  const res = { 200: t.Object({ data: ThemeModel.theme }), ...errorResponses };
  return new Elysia({ prefix: "/admin/p/:ref/theme" })
    .use(adminAuth(deps))
    .get("", async ({ project }) => ({ data: await getTheme(db, project.id) }), {
      projectScope: "content:read",
      params: RefParams,
      response: res,
      detail: adminDoc("theme", "Read the project's theme"),
    })
    .put("", async ({ project, body }) => ({ data: await updateTheme(db, project, body, deps.now()) }), {
      projectScope: "content:write",
      params: RefParams,
      body: ThemeModel.update,
      response: res,
      detail: adminDoc("theme", "Update the theme (omitted fields kept, null clears)"),
    })
    .patch("", async ({ project, body }) => ({ data: await updateTheme(db, project, body, deps.now()) }), {
      projectScope: "content:write",
      params: RefParams,
      body: ThemeModel.update,
      response: res,
      detail: adminDoc("theme", "Update the theme (alias of PUT)"),
    });
}
