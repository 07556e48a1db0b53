/** Canonical BCP 47 form of a tag (en-us → en-US), or null when it is not a valid tag. */
export function canonicalLocale(tag: string): string | null {
  if (typeof tag !== "string" || tag.length === 0 || tag.length > 35) return null;
  try {
    const [c] = Intl.getCanonicalLocales(tag);
    return c ?? null;
  } catch {
    return null;
  }
}
