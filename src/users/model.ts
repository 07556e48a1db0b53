import { t } from "elysia";
import { Timestamp, Uuid } from "../lib/model";
import { MIN_PASSWORD_LENGTH } from "./service";

const Email = t.String({ minLength: 3, maxLength: 320, description: "stored lower-case" });
const Password = t.String({ minLength: MIN_PASSWORD_LENGTH, maxLength: 1024, description: `at least ${MIN_PASSWORD_LENGTH} characters; stored as an argon2id hash, never returned` });
const InstanceRole = t.Union([t.Literal("owner"), t.Literal("member")], { description: "owner: every project, every right; member: only the projects of its memberships" });
const ProjectRoleSchema = t.Union([t.Literal("viewer"), t.Literal("editor"), t.Literal("admin")], { description: "viewer: read; editor: read and write content; admin: editor + ai:write and keys:write in this project" });

export const UserModel = {
  user: t.Object({
    id: Uuid,
    email: t.String(),
    role: InstanceRole,
    created_at: Timestamp,
    memberships: t.Array(t.Object({ project_id: Uuid, role: ProjectRoleSchema }), { description: "only the projects the calling key may act on" }),
  }),
  create: t.Object({ email: Email, password: Password, role: t.Optional(InstanceRole) }),
  update: t.Object({ email: t.Optional(Email), password: t.Optional(Password), role: t.Optional(InstanceRole) }),
  member: t.Object({ user_id: Uuid, email: t.String(), role: ProjectRoleSchema, created_at: Timestamp, updated_at: Timestamp }),
  setMember: t.Object({ role: ProjectRoleSchema }),
};
