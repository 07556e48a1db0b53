import { and, lt, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { oauthCodes, oauthTokens, rateLimits, webhookEvents } from "../db/schema";
import { expireApprovals } from "./approvals/service";
import { purgeUnreadable } from "./delivery/stored";
import { pruneRevisions, type Retention } from "./history/service";

const DAY_MS = 86_400_000;
const WEBHOOK_LOG_DAYS = 30;

/**
 * Deletes state that can no longer matter: OAuth codes and tokens a day past their expiry
 * (an expired token is refused whether or not its row exists) and rate-limit windows a day old
 * (the longest window is an hour). Safe to run on several instances at once.
 */
export async function purgeExpired(
  db: Db,
  now: Date,
  retention?: Retention,
): Promise<{ codes: number; tokens: number; rateLimits: number; webhookEvents: number; approvals: number; storedAnswers: number; revisions?: number; trashed?: number }> {
  const cutoff = new Date(now.getTime() - DAY_MS);
  const codes = await db.delete(oauthCodes).where(lt(oauthCodes.expiresAt, cutoff)).returning({ k: oauthCodes.codeHash });
  const tokens = await db.delete(oauthTokens).where(lt(oauthTokens.expiresAt, cutoff)).returning({ k: oauthTokens.id });
  const limits = await db.delete(rateLimits).where(lt(rateLimits.windowStart, cutoff)).returning({ k: rateLimits.key });
  // Webhook events (with their deliveries log) a month old, once nothing of them is pending.
  const events = await db
    .delete(webhookEvents)
    .where(
      and(
        lt(webhookEvents.createdAt, new Date(now.getTime() - WEBHOOK_LOG_DAYS * DAY_MS)),
        sql`not exists (select 1 from webhook_outbox o where o.event_id = ${webhookEvents.id} and o.status = 'pending')`,
      ),
    )
    .returning({ k: webhookEvents.id });
  const out = {
    codes: codes.length,
    tokens: tokens.length,
    rateLimits: limits.length,
    webhookEvents: events.length,
    // Approval requests past APPROVAL_TTL: expired, with their activity entries.
    approvals: await expireApprovals(db, null, now),
    // Stored delivery answers no read can use (an older epoch or model of their project).
    storedAnswers: await purgeUnreadable(db),
  };
  // Revisions past the retention (REVISIONS_PER_NODE, REVISIONS_MAX_AGE_DAYS, TRASH_RETENTION_DAYS), in bounded batches.
  return retention ? { ...out, ...(await pruneRevisions(db, retention, now)) } : out;
}
