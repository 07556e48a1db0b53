import { sha256 } from "@oslojs/crypto/sha2";
import { constantTimeEqual } from "@oslojs/crypto/subtle";
import { encodeBase32LowerCaseNoPadding, encodeHexLowerCase } from "@oslojs/encoding";

export type TokenPrefix = "cms_ak_" | "cms_mcp_" | "cms_at_" | "cms_rt_" | "cms_cs_" | "cms_code_" | "cms_pv_";

/** A prefixed bearer secret with 160 bits of randomness. */
export function generateToken(prefix: TokenPrefix): string {
  return prefix + encodeBase32LowerCaseNoPadding(crypto.getRandomValues(new Uint8Array(20)));
}

/** SHA-256 hex of a token: what is stored, never the token itself. */
export function hashToken(token: string): string {
  return encodeHexLowerCase(sha256(new TextEncoder().encode(token)));
}

export function tokenHint(token: string): string {
  const prefixEnd = token.startsWith("cms_") ? token.indexOf("_", 4) + 1 : 0;
  return `${token.slice(0, prefixEnd)}…${token.slice(-4)}`;
}

export function safeEqual(a: string, b: string): boolean {
  const ea = new TextEncoder().encode(a);
  const eb = new TextEncoder().encode(b);
  return ea.length === eb.length && constantTimeEqual(ea, eb);
}

/** SHA-256 of bytes, lower-case hex (media content addresses, S3 payload hashes). */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  return encodeHexLowerCase(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>)));
}
