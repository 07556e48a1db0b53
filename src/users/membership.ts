import { and, asc, eq, ilike, or, type SQL } from "drizzle-orm";
import type { z } from "zod";
import type { Db } from "../../db/client";
import { type Project, projectMembers, projects, users } from "../../db/schema";
import { AppError, isForeignKeyViolation, notFound } from "../errors";
import type { AdminCaller } from "../lib/caller";
import { isUuid } from "../lib/ids";
import { oneRow } from "../lib/rows";
import { type EffectiveRole, isProjectRole, ROLE_SCOPES } from "../lib/scopes";
import { escapeLike } from "../lib/sql";
import type { MemberOut } from "./model";
import { findVisibleUserByEmail, getVisibleUser } from "./service";

export type ProjectChoice = { id: string; slug: string; name: string; role: EffectiveRole };

/**
 * The projects a user may act in, with the role held in each (an owner: every project), by name:
 * at most `limit`, and with `search` only those whose name or slug contains it (any case).
 */
export async function projectsOfUser(db: Db, user: { id: string; role: string }, opts: { search?: string | null; limit: number }): Promise<ProjectChoice[]> {
  return choices(db, user, opts.search ? or(ilike(projects.name, `%${escapeLike(opts.search)}%`), ilike(projects.slug, `%${escapeLike(opts.search)}%`)) : undefined, opts.limit);
}

/** The project `projectId` when the user may act in it, with the role held there; else null (as if it did not exist). */
export async function projectOfUser(db: Db, user: { id: string; role: string }, projectId: string): Promise<ProjectChoice | null> {
  return isUuid(projectId) ? ((await choices(db, user, eq(projects.id, projectId.toLowerCase()), 1))[0] ?? null) : null;
}

async function choices(db: Db, user: { id: string; role: string }, where: SQL | undefined, limit: number): Promise<ProjectChoice[]> {
  if (user.role === "owner") {
    const all = await db.select({ id: projects.id, slug: projects.slug, name: projects.name }).from(projects).where(where).orderBy(asc(projects.name), asc(projects.id)).limit(limit);
    return all.map((p) => ({ ...p, role: "owner" as const }));
  }
  return db
    .select({ id: projects.id, slug: projects.slug, name: projects.name, role: projectMembers.role })
    .from(projectMembers)
    .innerJoin(projects, eq(projects.id, projectMembers.projectId))
    .where(and(eq(projectMembers.userId, user.id), where))
    .orderBy(asc(projects.name), asc(projects.id))
    .limit(limit);
}

type MemberWire = z.output<typeof MemberOut>;

const memberToWire = (m: typeof projectMembers.$inferSelect, email: string): MemberWire => ({
  user_id: m.userId,
  email,
  role: m.role,
  created_at: m.createdAt.toISOString(),
  updated_at: m.updatedAt.toISOString(),
});

export async function listMembers(db: Db, project: Project): Promise<MemberWire[]> {
  const rows = await db
    .select({ m: projectMembers, email: users.email })
    .from(projectMembers)
    .innerJoin(users, eq(users.id, projectMembers.userId))
    .where(eq(projectMembers.projectId, project.id))
    .orderBy(asc(users.email))
    .limit(10_000);
  return rows.map(({ m, email }) => memberToWire(m, email));
}

/**
 * Gives `userId` `role` in the project (adds or changes the membership). The caller must hold
 * every scope the role carries (with `users:write` too), as a key can only mint keys with scopes it
 * holds: a member it creates would otherwise reach through OAuth what the key cannot. A
 * project-limited caller may only name a user who is already a member of one of its projects
 * (anyone else is 404, as an unknown id): bringing someone new in needs a key without project limit.
 */
export async function setMember(db: Db, project: Project, userId: string, role: string, caller: AdminCaller | null, now: Date): Promise<MemberWire> {
  if (!isProjectRole(role)) throw new AppError("invalid_request", "role must be viewer, editor or admin", { field: "role" });
  if (caller) {
    const missing = ROLE_SCOPES[role].find((s) => !caller.scopes.includes(s));
    if (missing) throw new AppError("insufficient_scope", `cannot make a member ${role}: this key does not hold ${missing}`, { required: missing });
  }
  // A project-limited key reaches only people already in one of its projects: anyone else answers
  // as an id that does not exist, so it can neither add a stranger nor learn that one exists.
  const user = await getVisibleUser(db, userId, caller);
  if (!user) throw notFound("user");
  const rows = await db
    .insert(projectMembers)
    .values({ projectId: project.id, userId: user.id, role, createdAt: now, updatedAt: now })
    .onConflictDoUpdate({ target: [projectMembers.projectId, projectMembers.userId], set: { role, updatedAt: now } })
    .returning()
    .catch((err: unknown) => {
      // The user or the project was deleted since it was read: 404, as if it had never been there.
      if (isForeignKeyViolation(err)) throw notFound("user");
      throw err;
    });
  return memberToWire(oneRow(rows), user.email);
}

/**
 * add_member: the user with `email` (any case) gets `role`, under setMember's rules. A user the
 * caller may not see (a project-limited caller reaches only people in its projects) is 404, as an
 * email nobody has: an instance owner creates accounts.
 */
export async function addMemberByEmail(db: Db, project: Project, email: string, role: string, caller: AdminCaller | null, now: Date): Promise<MemberWire> {
  const user = await findVisibleUserByEmail(db, email, caller);
  if (!user) throw new AppError("not_found", "no user with this email that you can add: the person needs an account first, which an instance owner creates", { field: "email" });
  return setMember(db, project, user.id, role, caller, now);
}

/** Removes the membership: the user's OAuth tokens for this project stop at their next use. */
export async function removeMember(db: Db, project: Project, userId: string): Promise<void> {
  if (!isUuid(userId)) throw notFound("member");
  const deleted = await db
    .delete(projectMembers)
    .where(and(eq(projectMembers.projectId, project.id), eq(projectMembers.userId, userId.toLowerCase())))
    .returning({ userId: projectMembers.userId });
  if (deleted.length === 0) throw notFound("member");
}
