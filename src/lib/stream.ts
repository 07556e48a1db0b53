/**
 * Reads a body stream as UTF-8 text, stopping (and cancelling the stream) as soon as it passes
 * `limit` bytes, whether or not a length was declared. null means "over the limit".
 */
export async function readCappedText(body: ReadableStream<Uint8Array> | null, limit: number): Promise<string | null> {
  const bytes = await readCappedBytes(body, limit);
  return bytes === null ? null : new TextDecoder("utf-8").decode(bytes);
}

/** As readCappedText, the bytes themselves. */
export async function readCappedBytes(body: ReadableStream<Uint8Array> | null, limit: number): Promise<Uint8Array | null> {
  if (!body) return new Uint8Array(0);
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
