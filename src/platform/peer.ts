// The client address of a request, on each runtime (src/server/serve.ts serves them).
/**
 * The address of the peer that sent `request` (before any proxy header is considered):
 * srvx sets `request.ip` on Node and Deno; on Bun the server knows it.
 */
export function peerAddress(request: Request, server: unknown): string | null {
  const ip = (request as { ip?: unknown }).ip;
  if (typeof ip === "string") return ip;
  const bun = server as { requestIP?: (r: Request) => { address: string } | null } | null | undefined;
  return bun?.requestIP?.(request)?.address ?? null;
}
