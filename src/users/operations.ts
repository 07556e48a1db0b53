import { z } from "zod";
import { asAdminCaller } from "../auth";
import { adminOperation, type HttpBinding, projectOperation } from "../core/operation";
import { Empty } from "../lib/schemas";
import { addMemberByEmail, listMembers, removeMember, setMember } from "./membership";
import { Email, InstanceRole, MemberOut, Password, ProjectRole, UserOut } from "./model";
import { addUser, deleteUser, getUserWire, listUsers, updateUser } from "./service";

const UserRef = { id: z.uuid() };
const route = (method: HttpBinding["method"], path: string) => ({ method, path, tag: "users" });
const userRoute = (method: "GET" | "PATCH" | "DELETE") => route(method, "/admin/users/:id");
const memberRoute = (method: "PUT" | "DELETE") => ({ ...route(method, "/admin/p/:ref/members/:userId"), params: { userId: "user_id" } });
const MEMBER_SCOPES = { anyOf: ["keys:write", "users:write"] } as const;

const listUsersOp = adminOperation({
  name: "list_users",
  title: "List users",
  description: "List users by email, at most 1000. A project-limited key sees only members of its projects.",
  scopes: ["users:write"],
  input: z.object({}),
  output: z.object({ users: z.array(UserOut) }),
  http: { ...route("GET", "/admin/users"), data: "users", description: "By email, at most 1000. A project-limited key sees only members of its projects." },
  run: async ({ deps, caller }) => ({ users: await listUsers(deps.db, caller) }),
});

const createUserOp = adminOperation({
  name: "create_user",
  title: "Create a user",
  description: "Create a user; role defaults to member (no project until added to one). Needs a key not limited to projects.",
  scopes: ["users:write"],
  input: z.object({ email: Email, password: Password, role: InstanceRole.optional() }),
  output: z.object({ user: UserOut }),
  http: { ...route("POST", "/admin/users"), status: 201, data: "user", description: "role defaults to member (no project until added to one). Needs a key not limited to projects.", errors: [409] },
  run: async ({ deps, caller, now }, args) => ({ user: await addUser(deps.db, args, caller, now) }),
});

const readUserOp = adminOperation({
  name: "read_user",
  title: "Read a user",
  description: "Read a user; 404 for a user outside a project-limited key's projects.",
  scopes: ["users:write"],
  input: z.object(UserRef),
  output: z.object({ user: UserOut }),
  http: { ...userRoute("GET"), data: "user", description: "404 for a user outside a project-limited key's projects." },
  run: async ({ deps, caller }, args) => ({ user: await getUserWire(deps.db, args.id, caller) }),
});

const updateUserOp = adminOperation({
  name: "update_user",
  title: "Change a user",
  description: "Change a user's email, password or instance role. A new password ends the user's consent-page sign-ins. The last owner cannot be demoted (409).",
  scopes: ["users:write"],
  input: z.object({ ...UserRef, email: Email.optional(), password: Password.optional(), role: InstanceRole.optional() }),
  output: z.object({ user: UserOut }),
  http: {
    ...userRoute("PATCH"),
    data: "user",
    summary: "Change a user's email, password or instance role",
    description: "A new password ends the user's consent-page sign-ins. The last owner cannot be demoted (409). Needs a key not limited to projects.",
    errors: [409],
  },
  run: async ({ deps, caller }, { id, ...patch }) => ({ user: await updateUser(deps.db, id, patch, caller) }),
});

const deleteUserOp = adminOperation({
  name: "delete_user",
  title: "Delete a user",
  description: "Delete a user; memberships, consents and OAuth tokens go with it. The last owner cannot be deleted (409).",
  scopes: ["users:write"],
  input: z.object(UserRef),
  output: Empty,
  http: { ...userRoute("DELETE"), status: 204, description: "Memberships, consents and OAuth tokens go with it. The last owner cannot be deleted (409).", errors: [409] },
  async run({ deps, caller }, args) {
    await deleteUser(deps.db, args.id, caller);
    return {};
  },
});

const listMembersOp = projectOperation({
  name: "list_members",
  title: "List a project's members",
  description: "List a project's members. Instance owners act in every project and are not listed.",
  scopes: MEMBER_SCOPES,
  input: z.object({}),
  output: z.object({ members: z.array(MemberOut) }),
  http: { ...route("GET", "/admin/p/:ref/members"), data: "members", description: "Needs keys:write or users:write. Instance owners act in every project and are not listed." },
  run: async ({ deps, project }) => ({ members: await listMembers(deps.db, project) }),
});

const setMemberOp = projectOperation({
  name: "set_member",
  title: "Add a user to a project or change the user's role there",
  description: "Needs keys:write on the project or users:write; without users:write the key must hold every scope the role carries.",
  scopes: MEMBER_SCOPES,
  input: z.object({ user_id: z.uuid(), role: ProjectRole }),
  output: z.object({ member: MemberOut }),
  http: {
    ...memberRoute("PUT"),
    data: "member",
    description:
      "Needs keys:write on the project or users:write; without users:write the key must hold every scope the role carries. The user's OAuth tokens for this project follow the new role on their next use.",
  },
  run: async ({ deps, project, caller, now }, args) => ({ member: await setMember(deps.db, project, args.user_id, args.role, asAdminCaller(caller), now) }),
});

const addMemberOp = projectOperation({
  name: "add_member",
  title: "Add a person to a project by email",
  description:
    "Give the user with this email (any case) a role in the project (an existing member gets the new role), under set_member's rules. 404 when no user has it or the caller may not see them: accounts are created by an instance owner.",
  scopes: MEMBER_SCOPES,
  input: z.object({ email: Email, role: ProjectRole }),
  output: z.object({ member: MemberOut }),
  http: { ...route("POST", "/admin/p/:ref/members"), status: 201, data: "member", description: "Needs keys:write on the project or users:write. 404 when no user you can see has this email." },
  run: async ({ deps, project, caller, now }, args) => ({ member: await addMemberByEmail(deps.db, project, args.email, args.role, asAdminCaller(caller), now) }),
});

const removeMemberOp = projectOperation({
  name: "remove_member",
  title: "Remove a user from a project",
  description: "Remove a user from a project; the user's OAuth tokens for this project stop at their next use; refresh is refused.",
  scopes: MEMBER_SCOPES,
  input: z.object({ user_id: z.uuid() }),
  output: Empty,
  http: { ...memberRoute("DELETE"), status: 204, description: "The user's OAuth tokens for this project stop at their next use; refresh is refused." },
  async run({ deps, project }, args) {
    await removeMember(deps.db, project, args.user_id);
    return {};
  },
});

export const userOperations = [listUsersOp, createUserOp, readUserOp, updateUserOp, deleteUserOp, listMembersOp, addMemberOp, setMemberOp, removeMemberOp];
