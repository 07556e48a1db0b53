import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { rateLimits } from "../../db/schema";
import { oneRow } from "./rows";

/**
 * Counts one hit on a fixed window kept in PostgreSQL, so the limit holds across instances.
 * One upsert: a window that has ended restarts at this hit. `retryAfter`: seconds until the
 * current window ends (for Retry-After).
 */
export async function hitRateLimit(db: Db, key: string, limit: number, windowSeconds: number, now: Date): Promise<{ allowed: boolean; retryAfter: number }> {
  const nowIso = now.toISOString();
  const windowEnded = sql`${rateLimits.windowStart} <= ${nowIso}::timestamptz - make_interval(secs => ${windowSeconds})`;
  const row = oneRow(
    await db
      .insert(rateLimits)
      .values({ key, count: 1, windowStart: now })
      .onConflictDoUpdate({
        target: rateLimits.key,
        set: {
          count: sql`CASE WHEN ${windowEnded} THEN 1 ELSE ${rateLimits.count} + 1 END`,
          windowStart: sql`CASE WHEN ${windowEnded} THEN ${nowIso}::timestamptz ELSE ${rateLimits.windowStart} END`,
        },
      })
      .returning({ count: rateLimits.count, windowStart: rateLimits.windowStart }),
  );
  const endsAt = row.windowStart.getTime() + windowSeconds * 1000;
  return { allowed: row.count <= limit, retryAfter: Math.max(1, Math.ceil((endsAt - now.getTime()) / 1000)) };
}

/** The caller's address: the socket's, or with TRUST_PROXY the nearest proxy's X-Forwarded-For entry. */
export function clientAddress(request: Request, socketAddress: string | null, trustProxy: boolean): string {
  if (trustProxy) {
    const entries = request.headers.get("x-forwarded-for")?.split(",") ?? [];
    const last = entries.findLast((s) => s.trim() !== "")?.trim();
    if (last && last.length <= 64) return last;
  }
  return socketAddress ?? "unknown";
}
