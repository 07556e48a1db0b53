import { eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { type UserRole, users } from "../../db/schema";
import { AppError, isUniqueViolation } from "../errors";
import { uuidv7 } from "../lib/ids";
import { oneRow } from "../lib/rows";

export type User = typeof users.$inferSelect;

// A real argon2id hash of a random string: verifying against it costs what a real check costs,
// so an unknown email takes as long as a wrong password.
let dummyHash: Promise<string> | null = null;

export async function createUser(db: Db, input: { email: string; password: string; role: UserRole }, now: Date): Promise<User> {
  const email = input.email.trim().toLowerCase();
  if (!/^[^@\s]+@[^@\s]+$/.test(email)) throw new AppError("invalid_request", "email is not an email address", { field: "email" });
  if (input.password.length < 8) throw new AppError("invalid_request", "password must be at least 8 characters", { field: "password" });
  const passwordHash = await Bun.password.hash(input.password, { algorithm: "argon2id" });
  try {
    return oneRow(await db.insert(users).values({ id: uuidv7(now.getTime()), email, passwordHash, role: input.role, createdAt: now }).returning());
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError("conflict", "a user with this email exists", { field: "email" });
    throw err;
  }
}

/** The user when email and password match, else null, in constant time either way. */
export async function verifyUser(db: Db, email: string, password: string): Promise<User | null> {
  const [u] = await db.select().from(users).where(eq(users.email, email.trim().toLowerCase())).limit(1);
  if (!u) {
    dummyHash ??= Bun.password.hash(crypto.randomUUID(), { algorithm: "argon2id" });
    await Bun.password.verify(password, await dummyHash).catch(() => false);
    return null;
  }
  const ok = await Bun.password.verify(password, u.passwordHash).catch(() => false);
  return ok ? u : null;
}

export async function getUser(db: Db, id: string): Promise<User | null> {
  const [u] = await db.select().from(users).where(eq(users.id, id)).limit(1);
  return u ?? null;
}
