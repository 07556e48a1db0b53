// Signatures exactly as the Standard Webhooks specification gives them: the secret is `whsec_` +
// base64 of random bytes; the signed content is `${webhook-id}.${webhook-timestamp}.${body}`;
// webhook-signature is `v1,<base64 HMAC-SHA256>`, several space-separated during a rotation.
import { hmac } from "@oslojs/crypto/hmac";
import { SHA256 } from "@oslojs/crypto/sha2";
import { decodeBase64, encodeBase64 } from "@oslojs/encoding";

const PREFIX = "whsec_";
const enc = new TextEncoder();

/** A fresh secret: whsec_ + base64 of 24 random bytes (the specification asks 24 to 64). */
export function newSecret(): string {
  return PREFIX + encodeBase64(crypto.getRandomValues(new Uint8Array(24)));
}

// HMAC in JavaScript (@oslojs/crypto), not Web Crypto: a signature is then made at once, without
// waiting for a turn of the event loop, which on a busy embedded instance is a write away.
function sign(secret: string, content: string): string {
  const raw = decodeBase64(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret);
  return encodeBase64(hmac(SHA256, raw, enc.encode(content)));
}

/** The three Standard Webhooks headers of one attempt, signed with every secret given (current first). */
export function signedHeaders(id: string, timestampSeconds: number, body: string, secrets: readonly string[]): Record<string, string> {
  const content = `${id}.${timestampSeconds}.${body}`;
  const signatures = secrets.map((s) => `v1,${sign(s, content)}`);
  return { "webhook-id": id, "webhook-timestamp": String(timestampSeconds), "webhook-signature": signatures.join(" ") };
}
