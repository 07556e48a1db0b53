import { Elysia, t } from "elysia";
import { adminAuth, adminDoc } from "../auth";
import type { AppDeps } from "../deps";
import { errorResponses, RefParams } from "../lib/model";
import { ProjectModel } from "./model";
import { createProject, deleteProject, listProjects, projectToWire, updateProject } from "./service";

export function projectRoutes(deps: AppDeps) {
  const { db } = deps;
  return new Elysia({ prefix: "/admin/projects" })
    .use(adminAuth(deps))
    .get("", async ({ caller }) => ({ data: (await listProjects(db, caller)).map(projectToWire) }), {
      scope: "projects:read",
      response: { 200: t.Object({ data: t.Array(ProjectModel.project) }), ...errorResponses },
      detail: adminDoc("projects", "List the projects this key may act on"),
    })
    .post("",
      async ({ body, caller, set }) => {
        set.status = 201;
        return { data: projectToWire(await createProject(db, body, caller, deps.now())) };
      },
      {
        scope: "projects:write",
        body: ProjectModel.create,
        response: { 201: t.Object({ data: ProjectModel.project }), ...errorResponses },
        detail: adminDoc("projects", "Create a project"),
      },
    )
    .get("/:ref", ({ project }) => ({ data: projectToWire(project) }), {
      projectScope: "projects:read",
      params: RefParams,
      response: { 200: t.Object({ data: ProjectModel.project }), ...errorResponses },
      detail: adminDoc("projects", "Read a project by id or slug"),
    })
    .patch("/:ref", async ({ project, body }) => ({ data: projectToWire(await updateProject(db, project, body, deps.now())) }), {
      projectScope: "projects:write",
      params: RefParams,
      body: ProjectModel.update,
      response: { 200: t.Object({ data: ProjectModel.project }), ...errorResponses },
      detail: adminDoc("projects", "Update a project's settings"),
    })
    .delete(
      "/:ref",
      async ({ project, set }) => {
        await deleteProject(db, project);
        set.status = 204;
        return undefined;
      },
      {
        projectScope: "projects:write",
        params: RefParams,
        detail: adminDoc("projects", "Delete a project and everything in it"),
      },
    );
}
