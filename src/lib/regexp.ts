// Text matched literally by a regular expression.

/** `s` with the characters a regular expression gives a meaning escaped (valid with the `u` flag, in and out of a class but for `-` in one). */
export const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
