// What a project's media takes in the storage, for its quota: each distinct original once, and the
// variants delivery rendered for its items (media_variants).
import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { type MediaRow, mediaVariants } from "../../db/schema";

/** Bytes the project stores: originals (each distinct object once) and its rendered variants. */
export async function mediaBytesUsed(db: Db, projectId: string): Promise<number> {
  const res = await db.execute<{ used: string | number | null }>(
    sql`select (select coalesce(sum(size), 0) from (select distinct hash, size from media where project_id = ${projectId}) o)
      + (select coalesce(sum(size), 0) from media_variants where project_id = ${projectId}) as used`,
  );
  return Number(rowsOf<{ used: string | number | null }>(res)[0]?.used ?? 0);
}

/** The project's quota: its media_quota_bytes, else MEDIA_QUOTA_BYTES; null when the project is gone. */
export async function mediaQuota(db: Db, projectId: string, fallback: number): Promise<number | null> {
  const res = await db.execute<{ quota: string | number | null }>(sql`select media_quota_bytes as quota from projects where id = ${projectId}`);
  const row = rowsOf<{ quota: string | number | null }>(res)[0];
  if (row === undefined) return null;
  return row.quota === null ? fallback : Number(row.quota);
}

/** Counts a rendered variant against the item's project; false when the item is gone (deleted while it rendered). */
export async function chargeVariant(db: Db, row: Pick<MediaRow, "id" | "projectId">, name: string, size: number, now: Date): Promise<boolean> {
  const res = await db.execute<{ n: number }>(
    sql`insert into ${mediaVariants} (media_id, project_id, name, size, created_at)
      select m.id, m.project_id, ${name}, ${size}, ${now.toISOString()}::timestamptz from media m where m.id = ${row.id}
      on conflict do nothing returning 1 as n`,
  );
  if (rowsOf(res).length > 0) return true;
  return rowsOf(await db.execute(sql`select 1 from media where id = ${row.id}`)).length > 0;
}

/** The rows of db.execute: an array on postgres.js, `{ rows }` on PGlite. */
const rowsOf = <T>(res: unknown): T[] => (Array.isArray(res) ? res : (res as { rows: T[] }).rows) as T[];
