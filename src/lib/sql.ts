/** A LIKE pattern's literal part: backslash, % and _ escaped (PostgreSQL's default escape character). */
export const escapeLike = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`);
