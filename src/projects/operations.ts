import { z } from "zod";
import { adminOperation, projectOperation, READ_ONLY } from "../core/operation";
import { Empty } from "../lib/schemas";
import { ProjectIn, ProjectOut } from "./model";
import { createProject, deleteProject, listProjects, projectToWire, updateProject } from "./service";

const route = (method: "GET" | "PATCH" | "DELETE") => ({ method, path: "/admin/projects/:ref", tag: "projects" }) as const;

/**
 * Reading a project's settings: get_project (the MCP tool) asked content:read and read_project
 * (GET /admin/projects/{ref}) projects:read, so an admin key holding content:read could not read
 * the locales it writes content in, which the tool gives every content reader. Both now take
 * content:read (the settings hold no secret and every content reader needs them); the REST route
 * also takes projects:read, which MCP credentials never hold (MCP_SCOPES), so the tool keeps the
 * one scope its callers can have. The project list and every project write keep projects:*.
 */
const getProjectOp = projectOperation({
  name: "get_project",
  title: "Read the project settings",
  description: "Read the settings of the project this token is bound to: id, slug, name, default_locale, locales (valid values for every locale argument) and public_base_url.",
  scopes: ["content:read"],
  input: z.object({}),
  output: z.object({ project: ProjectOut }),
  tool: READ_ONLY,
  run: async ({ project }) => ({ project: projectToWire(project) }),
});

const readProjectOp = projectOperation({
  name: "read_project",
  title: "Read a project",
  description: "Read a project by id or slug.",
  scopes: { anyOf: ["projects:read", "content:read"] },
  input: z.object({}),
  output: getProjectOp.output,
  http: { ...route("GET"), data: "project", summary: "Read a project by id or slug" },
  run: getProjectOp.run,
});

const listProjectsOp = adminOperation({
  name: "list_projects",
  title: "List projects",
  description: "List the projects this key may act on.",
  scopes: ["projects:read"],
  input: z.object({}),
  output: z.object({ projects: z.array(ProjectOut) }),
  http: { method: "GET", path: "/admin/projects", data: "projects", tag: "projects", summary: "List the projects this key may act on" },
  run: async ({ deps, caller }) => ({ projects: (await listProjects(deps.db, caller)).map(projectToWire) }),
});

const createProjectOp = adminOperation({
  name: "create_project",
  title: "Create a project",
  description: "Create a project.",
  scopes: ["projects:write"],
  input: ProjectIn,
  output: z.object({ project: ProjectOut }),
  http: { method: "POST", path: "/admin/projects", status: 201, data: "project", tag: "projects", summary: "Create a project" },
  run: async ({ deps, caller, now }, args) => ({ project: projectToWire(await createProject(deps.db, args, caller, now)) }),
});

const updateProjectOp = projectOperation({
  name: "update_project",
  title: "Update a project",
  description: "Update a project's settings.",
  scopes: ["projects:write"],
  input: ProjectIn.partial(),
  output: z.object({ project: ProjectOut }),
  http: { ...route("PATCH"), data: "project", summary: "Update a project's settings" },
  run: async ({ deps, project, now, write }, args) => ({ project: projectToWire(await updateProject(deps.db, write, project, args, now)) }),
});

const deleteProjectOp = projectOperation({
  name: "delete_project",
  title: "Delete a project",
  description: "Delete a project and everything in it.",
  scopes: ["projects:write"],
  input: z.object({}),
  output: Empty,
  http: { ...route("DELETE"), status: 204, summary: "Delete a project and everything in it" },
  run: ({ deps, project }) => deleteProject(deps.db, project).then(() => ({})),
});

export const projectOperations = [getProjectOp, readProjectOp, listProjectsOp, createProjectOp, updateProjectOp, deleteProjectOp];
