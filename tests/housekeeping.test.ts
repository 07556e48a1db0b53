import { expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { oauthClients, oauthCodes, oauthGrants, oauthTokens, rateLimits, users } from "../db/schema";
import { purgeExpired } from "../src/housekeeping";
import { uuidv7 } from "../src/lib/ids";
import { harness, seedProject } from "./helpers";

test("purgeExpired deletes codes, tokens and rate-limit windows a day past expiry, and nothing else", async () => {
  const h = await harness();
  const db = h.deps.db;
  const p = await seedProject(h);
  const now = new Date();
  const old = new Date(now.getTime() - 2 * 86_400_000);
  const soon = new Date(now.getTime() + 3_600_000);
  const clientId = `hk-${uuidv7()}`;
  const userId = uuidv7();
  await db.insert(users).values({ id: userId, email: `${userId}@example.com`, passwordHash: "x", role: "owner" });
  await db.insert(oauthClients).values({ id: clientId, redirectUris: ["https://c.example/cb"], tokenEndpointAuthMethod: "none", grantTypes: ["authorization_code"], responseTypes: ["code"] });
  const grantId = uuidv7();
  await db.insert(oauthGrants).values({ id: grantId, clientId, userId, projectId: p.id, scopes: ["content:read"], resource: "http://localhost/mcp" });
  const code = (hash: string, expiresAt: Date) => ({ codeHash: hash, grantId, clientId, redirectUri: "https://c.example/cb", codeChallenge: "x", resource: "r", scopes: [], expiresAt });
  await db.insert(oauthCodes).values([code(`old-${grantId}`, old), code(`new-${grantId}`, soon)]);
  const token = (hash: string, expiresAt: Date) => ({ id: uuidv7(), tokenHash: hash, kind: "access" as const, grantId, clientId, userId, projectId: p.id, scopes: [], resource: "r", expiresAt });
  await db.insert(oauthTokens).values([token(`old-${grantId}`, old), token(`new-${grantId}`, soon)]);
  await db.insert(rateLimits).values([
    { key: `old-${grantId}`, count: 1, windowStart: old },
    { key: `new-${grantId}`, count: 1, windowStart: now },
  ]);

  const purged = await purgeExpired(db, now);
  expect(purged.codes).toBeGreaterThanOrEqual(1);
  expect((await db.select().from(oauthCodes).where(eq(oauthCodes.grantId, grantId))).map((c) => c.codeHash)).toEqual([`new-${grantId}`]);
  expect((await db.select().from(oauthTokens).where(eq(oauthTokens.grantId, grantId))).map((t) => t.tokenHash)).toEqual([`new-${grantId}`]);
  expect(
    await db
      .select()
      .from(rateLimits)
      .where(eq(rateLimits.key, `old-${grantId}`)),
  ).toHaveLength(0);
  expect(
    await db
      .select()
      .from(rateLimits)
      .where(eq(rateLimits.key, `new-${grantId}`)),
  ).toHaveLength(1);
});
