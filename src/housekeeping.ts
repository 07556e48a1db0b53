import { lt } from "drizzle-orm";
import type { Db } from "../db/client";
import { oauthCodes, oauthTokens, rateLimits } from "../db/schema";

const DAY_MS = 86_400_000;

/**
 * Deletes state that can no longer matter: OAuth codes and tokens a day past their expiry
 * (an expired token is refused whether or not its row exists) and rate-limit windows a day old
 * (the longest window is an hour). Safe to run on several instances at once.
 */
export async function purgeExpired(db: Db, now: Date): Promise<{ codes: number; tokens: number; rateLimits: number }> {
  const cutoff = new Date(now.getTime() - DAY_MS);
  const codes = await db.delete(oauthCodes).where(lt(oauthCodes.expiresAt, cutoff)).returning({ k: oauthCodes.codeHash });
  const tokens = await db.delete(oauthTokens).where(lt(oauthTokens.expiresAt, cutoff)).returning({ k: oauthTokens.id });
  const limits = await db.delete(rateLimits).where(lt(rateLimits.windowStart, cutoff)).returning({ k: rateLimits.key });
  return { codes: codes.length, tokens: tokens.length, rateLimits: limits.length };
}
