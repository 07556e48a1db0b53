/** Canonical BCP 47 form of a tag (en-us → en-US), or null when it is not a valid tag. */
export function canonicalLocale(tag: string): string | null {
  if (typeof tag !== "string" || tag.length === 0 || tag.length > 35) return null;
  try {
    return Intl.getCanonicalLocales(tag)[0] ?? null;
  } catch {
    return null;
  }
}
