import { and, asc, eq, exists, inArray, type SQL, sql } from "drizzle-orm";
import type { z } from "zod";
import type { Db } from "../../db/client";
import { projectMembers, studioSessions, type UserRole, users } from "../../db/schema";
import { AppError, isUniqueViolation, notFound } from "../errors";
import type { AdminCaller } from "../lib/caller";
import { isUuid, uuidv7 } from "../lib/ids";
import { oneRow } from "../lib/rows";
import { ADMIN_SCOPES } from "../lib/scopes";
import { hashPassword as hashSecret, verifyPassword } from "../platform/password";
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, type UserOut } from "./model";

export type User = typeof users.$inferSelect;

// A real argon2id hash of a random string: verifying against it costs what a real check costs,
// so an unknown email takes as long as a wrong password.
let dummyHash: Promise<string> | null = null;

function normaliseEmail(raw: string): string {
  const email = raw.trim().toLowerCase();
  if (email.length > 320 || !/^[^@\s]+@[^@\s]+$/.test(email)) throw new AppError("invalid_request", "email is not an email address", { field: "email" });
  return email;
}

function hashPassword(password: string): Promise<string> {
  if (password.length < MIN_PASSWORD_LENGTH) throw new AppError("invalid_request", `password must be at least ${MIN_PASSWORD_LENGTH} characters`, { field: "password" });
  if (password.length > MAX_PASSWORD_LENGTH) throw new AppError("invalid_request", `password must be at most ${MAX_PASSWORD_LENGTH} characters`, { field: "password" });
  return hashSecret(password);
}

function checkRole(role: string): UserRole {
  if (role !== "owner" && role !== "member") throw new AppError("invalid_request", "role must be owner or member", { field: "role" });
  return role;
}

function rethrowEmailTaken(err: unknown): never {
  if (isUniqueViolation(err)) throw new AppError("conflict", "a user with this email exists", { field: "email" });
  throw err;
}

export async function createUser(db: Db, input: { email: string; password: string; role: UserRole }, now: Date): Promise<User> {
  const row = { id: uuidv7(now.getTime()), email: normaliseEmail(input.email), role: checkRole(input.role), passwordHash: await hashPassword(input.password), createdAt: now };
  return oneRow(await db.insert(users).values(row).returning().catch(rethrowEmailTaken));
}

/** The user when email and password match, else null, in constant time either way. */
export async function verifyUser(db: Db, email: string, password: string): Promise<User | null> {
  const u = await findUserByEmail(db, email);
  const hash = u?.passwordHash ?? (await (dummyHash ??= hashSecret(crypto.randomUUID())));
  const ok = await verifyPassword(password, hash);
  return u && ok ? u : null;
}

const firstUser = async (db: Db, where: SQL | undefined): Promise<User | null> => (await db.select().from(users).where(where).limit(1))[0] ?? null;

export const getUser = async (db: Db, id: string): Promise<User | null> => (isUuid(id) ? firstUser(db, eq(users.id, id.toLowerCase())) : null);

export const findUserByEmail = (db: Db, email: string): Promise<User | null> => firstUser(db, eq(users.email, email.trim().toLowerCase()));

// ---- administration (admin API and CLI; the CLI passes caller null: the operator) ----

type UserWire = z.output<typeof UserOut>;

/** Writing users touches every project they belong to: only a key valid for every project may. */
function requireUnlimited(caller: AdminCaller | null): void {
  if (caller?.projectIds) throw new AppError("insufficient_scope", "managing users needs a key not limited to projects");
}

/**
 * An owner holds every right on every project: making one, or acting on one (email, password,
 * role, deletion), needs a key that holds every scope itself, so `users:write` never leads to more
 * than the key holds.
 */
function requireEveryScope(caller: AdminCaller | null, what: string): void {
  const missing = ADMIN_SCOPES.filter((s) => caller && !caller.scopes.includes(s));
  if (missing.length > 0) throw new AppError("insufficient_scope", `${what} needs a key holding every scope; this key lacks ${missing.join(", ")}`, { required: missing });
}

/** The user to change or delete, after requireUnlimited; a user the caller cannot see is 404 first, like one that does not exist. */
async function userToWrite(db: Db, id: string, caller: AdminCaller | null): Promise<User> {
  if (caller?.projectIds) await getUserWire(db, id, caller);
  requireUnlimited(caller);
  const user = await getUser(db, id);
  if (!user) throw notFound("user");
  return user;
}

/** A project-limited caller sees a user only through a membership in one of its projects. */
function visibleTo(caller: AdminCaller | null) {
  if (!caller?.projectIds) return undefined;
  return exists(sql`(select 1 from ${projectMembers} where ${projectMembers.userId} = ${users.id} and ${inArray(projectMembers.projectId, [...caller.projectIds])})`);
}

async function toWire(db: Db, rows: User[], caller: AdminCaller | null): Promise<UserWire[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((u) => u.id);
  const members = await db
    .select()
    .from(projectMembers)
    .where(and(inArray(projectMembers.userId, ids), caller?.projectIds ? inArray(projectMembers.projectId, [...caller.projectIds]) : undefined))
    .orderBy(asc(projectMembers.projectId));
  return rows.map((u) => ({
    id: u.id,
    email: u.email,
    role: u.role,
    created_at: u.createdAt.toISOString(),
    memberships: members.filter((m) => m.userId === u.id).map((m) => ({ project_id: m.projectId, role: m.role })),
  }));
}

export async function listUsers(db: Db, caller: AdminCaller | null): Promise<UserWire[]> {
  const rows = await db.select().from(users).where(visibleTo(caller)).orderBy(asc(users.email)).limit(1000);
  return toWire(db, rows, caller);
}

/**
 * The user when it exists and the caller may see it (a project-limited caller: a member of one of
 * its projects), else null: an unknown id and a user outside those projects look the same.
 */
export const getVisibleUser = async (db: Db, id: string, caller: AdminCaller | null): Promise<User | null> =>
  isUuid(id) ? firstUser(db, and(eq(users.id, id.toLowerCase()), visibleTo(caller))) : null;

export const findVisibleUserByEmail = (db: Db, email: string, caller: AdminCaller | null): Promise<User | null> => firstUser(db, and(eq(users.email, email.trim().toLowerCase()), visibleTo(caller)));

/** One user; 404 when unknown or outside a project-limited caller's projects. */
export async function getUserWire(db: Db, id: string, caller: AdminCaller | null): Promise<UserWire> {
  const u = await getVisibleUser(db, id, caller);
  if (!u) throw notFound("user");
  return oneRow(await toWire(db, [u], caller));
}

export async function addUser(db: Db, input: { email: string; password: string; role?: UserRole }, caller: AdminCaller | null, now: Date): Promise<UserWire> {
  requireUnlimited(caller);
  if (input.role === "owner") requireEveryScope(caller, "creating an owner");
  const u = await createUser(db, { email: input.email, password: input.password, role: input.role ?? "member" }, now);
  return oneRow(await toWire(db, [u], caller));
}

/**
 * Runs `fn` holding a lock on every owner row, so that two requests cannot each remove a
 * different one of the last two owners; refused when `fn` leaves none of the owners there were.
 */
async function keepingAnOwner<T>(db: Db, fn: (tx: Db) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    const before = await tx.select({ id: users.id }).from(users).where(eq(users.role, "owner")).for("update");
    const result = await fn(tx);
    const { n } = oneRow(await tx.select({ n: sql<number>`count(*)::int` }).from(users).where(eq(users.role, "owner")));
    if (n === 0 && before.length > 0) throw new AppError("conflict", "the last owner cannot be deleted or demoted; make another user owner first");
    return result;
  });
}

export type UserPatch = { email?: string; password?: string; role?: UserRole };

/** Changes email, password or instance role. A new password ends the user's consent-page sign-ins (see oauth/session.ts). */
export async function updateUser(db: Db, id: string, patch: UserPatch, caller: AdminCaller | null): Promise<UserWire> {
  const existing = await userToWrite(db, id, caller);
  if (existing.role === "owner" || patch.role === "owner") requireEveryScope(caller, "changing an owner or making one");
  const set: Partial<typeof users.$inferInsert> = {};
  if (patch.email !== undefined) set.email = normaliseEmail(patch.email);
  if (patch.role !== undefined) set.role = checkRole(patch.role);
  if (patch.password !== undefined) set.passwordHash = await hashPassword(patch.password);
  if (Object.keys(set).length === 0) return oneRow(await toWire(db, [existing], caller));
  const [u] = await keepingAnOwner(db, async (tx) => {
    const updated = await tx.update(users).set(set).where(eq(users.id, existing.id)).returning();
    // A new password ends the person's studio sessions: whoever knew the old one is signed out too.
    if (set.passwordHash !== undefined) await tx.delete(studioSessions).where(eq(studioSessions.userId, existing.id));
    return updated;
  }).catch(rethrowEmailTaken);
  if (!u) throw notFound("user");
  return oneRow(await toWire(db, [u], caller));
}

/** Deletes a user; memberships, consents and OAuth tokens go with it (foreign keys cascade). */
export async function deleteUser(db: Db, id: string, caller: AdminCaller | null): Promise<void> {
  const existing = await userToWrite(db, id, caller);
  if (existing.role === "owner") requireEveryScope(caller, "deleting an owner");
  const deleted = await keepingAnOwner(db, (tx) => tx.delete(users).where(eq(users.id, existing.id)).returning({ id: users.id }));
  if (deleted.length === 0) throw notFound("user");
}
