import { type SQL, sql } from "drizzle-orm";

/** A LIKE pattern's literal part: backslash, % and _ escaped (PostgreSQL's default escape character). */
export const escapeLike = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** A PostgreSQL array literal of strings, each quoted and escaped (null: NULL): one parameter, whatever the list. */
export const arrayText = (list: Iterable<string | null>): string => `{${[...list].map((s) => (s === null ? "NULL" : `"${s.replace(/["\\]/g, "\\$&")}"`)).join(",")}}`;

/** A list bound as one parameter cast to `uuid[]` or `text[]`. */
export const sqlArray = (list: Iterable<string | null>, type: "uuid" | "text"): SQL => sql`${arrayText(list)}::${sql.raw(type)}[]`;
