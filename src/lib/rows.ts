/**
 * The row a statement always yields (INSERT … RETURNING, an aggregate without GROUP BY).
 * Its absence is a bug of ours, not a client error: it surfaces as a 500.
 */
export function oneRow<T>(rows: readonly T[]): T {
  const row = rows[0];
  if (row === undefined) throw new Error("expected one row, got none");
  return row;
}
