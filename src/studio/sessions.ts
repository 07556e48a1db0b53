// Studio sessions (RFC 10017's same-origin session for a browser app served by the API itself): a
// random id in an HttpOnly cookie, stored only as its SHA-256, with an idle and an absolute
// lifetime. Every request reads the session and the person's role from the database, so a sign-out,
// a removed membership or a deleted user takes effect on the next request, on every instance.
import { encodeBase32LowerCaseNoPadding } from "@oslojs/encoding";
import { and, desc, eq, gt, lt, or } from "drizzle-orm";
import type { Db } from "../../db/client";
import { type MemberRole, projectMembers, studioSessions, type UserRole, users } from "../../db/schema";
import type { Config } from "../config";
import { uuidv7 } from "../lib/ids";
import { type EffectiveRole, effectiveRole } from "../lib/scopes";
import { hashToken } from "../lib/tokens";

type Lifetimes = Pick<Config, "studioSessionIdleSeconds" | "studioSessionMaxAgeSeconds">;

/** The person a session belongs to, as read on this request. */
export interface SessionUser {
  readonly sessionId: string;
  readonly userId: string;
  readonly email: string;
  readonly role: UserRole;
  readonly createdAt: Date;
  readonly expiresAt: Date;
}

export interface SessionRow {
  id: string;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  user_agent: string | null;
}

// The cookie value: 160 random bits, base32; only its hash is stored.
const newSecret = (): string => encodeBase32LowerCaseNoPadding(crypto.getRandomValues(new Uint8Array(20)));
const SECRET_RE = /^[a-z2-7]{32}$/;

/** A new session for the user: the cookie's secret (shown once) and the row. */
export async function createSession(db: Db, userId: string, userAgent: string | null, config: Lifetimes, now: Date): Promise<{ secret: string; row: SessionRow }> {
  const secret = newSecret();
  const row = {
    id: uuidv7(now.getTime()),
    tokenHash: hashToken(secret),
    userId,
    userAgent: userAgent?.slice(0, 300) ?? null,
    createdAt: now,
    lastSeenAt: now,
    expiresAt: new Date(now.getTime() + config.studioSessionMaxAgeSeconds * 1000),
  };
  await db.insert(studioSessions).values(row);
  // Sessions that ended long ago go when their user signs in again (no sweeper needed).
  await db.delete(studioSessions).where(and(eq(studioSessions.userId, userId), or(lt(studioSessions.expiresAt, now), lt(studioSessions.lastSeenAt, idleCutoff(config, now)))));
  return { secret, row: toWire(row) };
}

const idleCutoff = (config: Lifetimes, now: Date): Date => new Date(now.getTime() - config.studioSessionIdleSeconds * 1000);

/**
 * The live session a cookie secret names, else null: unknown, idle past the idle timeout or past
 * its absolute end. Its last use is written at minute precision (one write per minute, not per request).
 */
export async function readSession(db: Db, secret: string | null, config: Lifetimes, now: Date): Promise<SessionUser | null> {
  if (!secret || !SECRET_RE.test(secret)) return null;
  const [row] = await db
    .select({
      id: studioSessions.id,
      lastSeenAt: studioSessions.lastSeenAt,
      createdAt: studioSessions.createdAt,
      expiresAt: studioSessions.expiresAt,
      userId: users.id,
      email: users.email,
      role: users.role,
    })
    .from(studioSessions)
    .innerJoin(users, eq(users.id, studioSessions.userId))
    .where(and(eq(studioSessions.tokenHash, hashToken(secret)), gt(studioSessions.expiresAt, now), gt(studioSessions.lastSeenAt, idleCutoff(config, now))))
    .limit(1);
  if (!row) return null;
  if (now.getTime() - row.lastSeenAt.getTime() > 60_000) await db.update(studioSessions).set({ lastSeenAt: now }).where(eq(studioSessions.id, row.id));
  return { sessionId: row.id, userId: row.userId, email: row.email, role: row.role, createdAt: row.createdAt, expiresAt: row.expiresAt };
}

/** The role the person holds in a project now (an instance owner: owner everywhere), or null. */
export async function roleIn(db: Db, user: SessionUser, projectId: string): Promise<EffectiveRole | null> {
  if (user.role === "owner") return "owner";
  const [m] = await db
    .select({ role: projectMembers.role })
    .from(projectMembers)
    .where(and(eq(projectMembers.userId, user.userId), eq(projectMembers.projectId, projectId)))
    .limit(1);
  return effectiveRole(user.role, m?.role ?? null);
}

/** A member's projects with the role held in each. */
export async function memberRoles(db: Db, user: SessionUser): Promise<Array<{ projectId: string; role: MemberRole }>> {
  return db.select({ projectId: projectMembers.projectId, role: projectMembers.role }).from(projectMembers).where(eq(projectMembers.userId, user.userId));
}

/** The person's live sessions, newest first. */
export async function listSessions(db: Db, userId: string, config: Lifetimes, now: Date): Promise<SessionRow[]> {
  const rows = await db
    .select()
    .from(studioSessions)
    .where(and(eq(studioSessions.userId, userId), gt(studioSessions.expiresAt, now), gt(studioSessions.lastSeenAt, idleCutoff(config, now))))
    .orderBy(desc(studioSessions.createdAt))
    .limit(200);
  return rows.map(toWire);
}

/** Ends one of the person's sessions; false when they have none with that id (another person's is not theirs). */
export async function endSession(db: Db, userId: string, sessionId: string): Promise<boolean> {
  const gone = await db
    .delete(studioSessions)
    .where(and(eq(studioSessions.id, sessionId), eq(studioSessions.userId, userId)))
    .returning({ id: studioSessions.id });
  return gone.length > 0;
}

const toWire = (r: typeof studioSessions.$inferSelect): SessionRow => ({
  id: r.id,
  created_at: r.createdAt.toISOString(),
  last_seen_at: r.lastSeenAt.toISOString(),
  expires_at: r.expiresAt.toISOString(),
  user_agent: r.userAgent,
});
