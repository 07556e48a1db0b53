import { z } from "zod";
import { Id, Timestamp } from "../lib/schemas";
import { PROJECT_ROLES } from "../lib/scopes";

export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 1024;
export const Email = z.string().min(3).max(320).describe("stored lower-case");
export const Password = z.string().min(MIN_PASSWORD_LENGTH).max(MAX_PASSWORD_LENGTH).describe(`at least ${MIN_PASSWORD_LENGTH} characters; stored as an argon2id hash, never returned`);
export const InstanceRole = z.enum(["owner", "member"]).describe("owner: every project, every right; member: only the projects of its memberships");
export const ProjectRole = z.enum(PROJECT_ROLES).describe("viewer: read; editor: read and write content; admin: editor + ai:write and keys:write in this project");
export const UserOut = z.object({
  id: Id,
  email: z.string(),
  role: InstanceRole,
  created_at: Timestamp,
  memberships: z.array(z.object({ project_id: Id, role: ProjectRole })).describe("only the projects the calling key may act on"),
});
export const MemberOut = z.object({ user_id: Id, email: z.string(), role: ProjectRole, created_at: Timestamp, updated_at: Timestamp });
