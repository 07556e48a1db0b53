// Signatures exactly as the Standard Webhooks specification gives them: the secret is `whsec_` +
// base64 of random bytes; the signed content is `${webhook-id}.${webhook-timestamp}.${body}`;
// webhook-signature is `v1,<base64 HMAC-SHA256>`, several space-separated during a rotation.
import { decodeBase64, encodeBase64 } from "@oslojs/encoding";

const PREFIX = "whsec_";
const enc = new TextEncoder();

/** A fresh secret: whsec_ + base64 of 24 random bytes (the specification asks 24 to 64). */
export function newSecret(): string {
  return PREFIX + encodeBase64(crypto.getRandomValues(new Uint8Array(24)));
}

async function hmac(secret: string, content: string): Promise<string> {
  const raw = decodeBase64(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret);
  const key = await crypto.subtle.importKey("raw", raw as BufferSource, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return encodeBase64(new Uint8Array(await crypto.subtle.sign("HMAC", key, enc.encode(content))));
}

/** The three Standard Webhooks headers of one attempt, signed with every secret given (current first). */
export async function signedHeaders(id: string, timestampSeconds: number, body: string, secrets: readonly string[]): Promise<Record<string, string>> {
  const content = `${id}.${timestampSeconds}.${body}`;
  const signatures = await Promise.all(secrets.map(async (s) => `v1,${await hmac(s, content)}`));
  return { "webhook-id": id, "webhook-timestamp": String(timestampSeconds), "webhook-signature": signatures.join(" ") };
}
