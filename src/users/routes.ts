import { Elysia, t } from "elysia";
import { adminAuth, adminDoc } from "../auth";
import type { AppDeps } from "../deps";
import { ErrorSchema, errorResponses, IdParams } from "../lib/model";
import { listMembers, removeMember, setMember } from "./membership";
import { UserModel } from "./model";
import { addUser, deleteUser, getUserWire, listUsers, updateUser } from "./service";

const MemberParams = t.Object({ ref: t.String({ maxLength: 64 }), userId: t.String({ format: "uuid" }) });
const withConflict = { ...errorResponses, 409: ErrorSchema };

export function userRoutes(deps: AppDeps) {
  const { db } = deps;
  return new Elysia()
    .use(adminAuth(deps))
    .get("/admin/users", async ({ caller }) => ({ data: await listUsers(db, caller) }), {
      scope: "users:write",
      response: { 200: t.Object({ data: t.Array(UserModel.user) }), ...errorResponses },
      detail: adminDoc("users", "List users", "By email, at most 1000. A project-limited key sees only members of its projects."),
    })
    .post(
      "/admin/users",
      async ({ body, caller, set }) => {
        set.status = 201;
        return { data: await addUser(db, body, caller, deps.now()) };
      },
      {
        scope: "users:write",
        body: UserModel.create,
        response: { 201: t.Object({ data: UserModel.user }), ...withConflict },
        detail: adminDoc("users", "Create a user", "role defaults to member (no project until added to one). Needs a key not limited to projects."),
      },
    )
    .get("/admin/users/:id", async ({ params, caller }) => ({ data: await getUserWire(db, params.id, caller) }), {
      scope: "users:write",
      params: IdParams,
      response: { 200: t.Object({ data: UserModel.user }), ...errorResponses },
      detail: adminDoc("users", "Read a user", "404 for a user outside a project-limited key's projects."),
    })
    .patch("/admin/users/:id", async ({ params, body, caller }) => ({ data: await updateUser(db, params.id, body, caller) }), {
      scope: "users:write",
      params: IdParams,
      body: UserModel.update,
      response: { 200: t.Object({ data: UserModel.user }), ...withConflict },
      detail: adminDoc(
        "users",
        "Change a user's email, password or instance role",
        "A new password ends the user's consent-page sign-ins. The last owner cannot be demoted (409). Needs a key not limited to projects.",
      ),
    })
    .delete(
      "/admin/users/:id",
      async ({ params, caller, set }) => {
        await deleteUser(db, params.id, caller);
        set.status = 204;
        return undefined;
      },
      {
        scope: "users:write",
        params: IdParams,
        response: { 204: t.Void(), ...withConflict },
        detail: adminDoc("users", "Delete a user", "Memberships, consents and OAuth tokens go with it. The last owner cannot be deleted (409)."),
      },
    )
    .get("/admin/p/:ref/members", async ({ project }) => ({ data: await listMembers(db, project) }), {
      projectScope: ["keys:write", "users:write"],
      params: t.Object({ ref: t.String({ maxLength: 64 }) }),
      response: { 200: t.Object({ data: t.Array(UserModel.member) }), ...errorResponses },
      detail: adminDoc("users", "List a project's members", "Needs keys:write or users:write. Instance owners act in every project and are not listed."),
    })
    .put("/admin/p/:ref/members/:userId", async ({ project, params, body, caller }) => ({ data: await setMember(db, project, params.userId, body.role, caller, deps.now()) }), {
      projectScope: ["keys:write", "users:write"],
      params: MemberParams,
      body: UserModel.setMember,
      response: { 200: t.Object({ data: UserModel.member }), ...errorResponses },
      detail: adminDoc(
        "users",
        "Add a user to a project or change the user's role there",
        "Needs keys:write on the project or users:write; without users:write the key must hold every scope the role carries. The user's OAuth tokens for this project follow the new role on their next use.",
      ),
    })
    .delete(
      "/admin/p/:ref/members/:userId",
      async ({ project, params, set }) => {
        await removeMember(db, project, params.userId);
        set.status = 204;
        return undefined;
      },
      {
        projectScope: ["keys:write", "users:write"],
        params: MemberParams,
        response: { 204: t.Void(), ...errorResponses },
        detail: adminDoc("users", "Remove a user from a project", "The user's OAuth tokens for this project stop at their next use; refresh is refused."),
      },
    );
}
