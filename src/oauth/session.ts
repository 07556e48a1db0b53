import { hmac } from "@oslojs/crypto/hmac";
import { SHA256 } from "@oslojs/crypto/sha2";
import { decodeBase64urlIgnorePadding, encodeBase64urlNoPadding } from "@oslojs/encoding";
import { eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { systemState } from "../../db/schema";
import { oneRow } from "../lib/rows";
import { safeEqual } from "../lib/tokens";
import { getUser, type User } from "../users/service";

// The consent page keeps no server-side session: a CSRF nonce cookie, a form token that is an HMAC
// of that nonce, and a short signed sign-in cookie bound to the same nonce. The HMAC key lives in
// PostgreSQL (system_state), so every instance verifies what another one signed.

const KEY_NAME = "oauth_page_key";
export const SIGN_IN_TTL_MS = 15 * 60_000;
const CSRF_TTL_S = 60 * 60;
const NONCE_RE = /^[A-Za-z0-9_-]{22}$/;

// The page key is a row of the database: loaded once per database (every app and the CLI over it share it).
const keys = new WeakMap<Db, Promise<Uint8Array>>();

export function pageKey(db: Db): Promise<Uint8Array> {
  let k = keys.get(db);
  if (!k) {
    k = loadKey(db);
    keys.set(db, k);
    k.catch(() => keys.delete(db));
  }
  return k;
}

async function loadKey(db: Db): Promise<Uint8Array> {
  const fresh = crypto.getRandomValues(new Uint8Array(32));
  await db
    .insert(systemState)
    .values({ key: KEY_NAME, value: { key: encodeBase64urlNoPadding(fresh) } })
    .onConflictDoNothing();
  const row = oneRow(await db.select().from(systemState).where(eq(systemState.key, KEY_NAME)).limit(1));
  return decodeBase64urlIgnorePadding((row.value as { key: string }).key);
}

const mac = (key: Uint8Array, purpose: string, message: string): string => encodeBase64urlNoPadding(hmac(SHA256, key, new TextEncoder().encode(`${purpose}\n${message}`)));

type CookieNames = ReturnType<typeof cookieNames>;

/** `__Host-` names (Secure, Path=/, no Domain) when the service is served over https. */
export function cookieNames(publicUrl: string) {
  const secure = publicUrl.startsWith("https:");
  return secure ? { csrf: "__Host-cms_oauth_csrf", signIn: "__Host-cms_oauth_session", secure } : { csrf: "cms_oauth_csrf", signIn: "cms_oauth_session", secure };
}

export const setCookie = (names: CookieNames, name: string, value: string, maxAgeSeconds: number): string =>
  `${name}=${value}; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${names.secure ? "; Secure" : ""}`;

export const newNonce = (): string => encodeBase64urlNoPadding(crypto.getRandomValues(new Uint8Array(16)));

export const validNonce = (value: string | null): value is string => value !== null && NONCE_RE.test(value);

export const csrfCookie = (names: CookieNames, nonce: string): string => setCookie(names, names.csrf, nonce, CSRF_TTL_S);

export const csrfToken = (key: Uint8Array, nonce: string): string => mac(key, "csrf", nonce);

export const checkCsrf = (key: Uint8Array, nonce: string | null, token: unknown): boolean => validNonce(nonce) && typeof token === "string" && safeEqual(token, csrfToken(key, nonce));

/**
 * `<user id>.<expiry ms>.<mac>`, the mac covering the CSRF nonce too (the cookie works only in this
 * browser's flow) and the user's password hash (a changed password ends every sign-in at once).
 */
export function signInValue(key: Uint8Array, userId: string, passwordHash: string, nonce: string, now: Date): string {
  const body = `${userId}.${now.getTime() + SIGN_IN_TTL_MS}`;
  return `${body}.${mac(key, "sign-in", `${body}.${nonce}.${passwordHash}`)}`;
}

/**
 * The user a sign-in cookie names, when it has not expired and its mac checks against this flow's nonce
 * and the user's current password hash: a deleted user or a changed password ends the sign-in.
 */
export async function signedInUser(db: Db, key: Uint8Array, value: string | null, nonce: string, now: Date): Promise<User | null> {
  const [, userId, exp, sig = ""] = /^([^.]*)\.(\d{1,16})\.([^.]*)$/.exec(value ?? "") ?? [];
  if (!userId || Number(exp) <= now.getTime()) return null;
  const user = await getUser(db, userId);
  return user && validNonce(nonce) && safeEqual(sig, mac(key, "sign-in", `${userId}.${exp}.${nonce}.${user.passwordHash}`)) ? user : null;
}
