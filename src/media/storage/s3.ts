// The S3-compatible driver (AWS S3, Cloudflare R2, MinIO, Ceph): path-style URLs
// (<endpoint>/<bucket>/<prefix><key>), signed with Signature Version 4 by aws4fetch, a small,
// well-kept signer built on fetch and Web Crypto that runs on Bun, Node and Deno alike (the
// AWS SDK's @smithy/signature-v4 would pull its Node-oriented hash and header packages in; it is
// used by the tests as the independent signer our requests are checked against). The payload is
// signed with its SHA-256 (not UNSIGNED-PAYLOAD): the store verifies the bytes it keeps.
import { AwsV4Signer } from "aws4fetch";
import type { MediaStorage, StoredObject } from "../../core/storage";
import { AppError } from "../../errors";
import { sha256Hex } from "../../lib/tokens";

export interface S3Settings {
  readonly endpoint: string;
  readonly bucket: string;
  readonly region: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly prefix: string;
}

/** Bytes fetched per ranged GET while streaming: what one stalled reader can hold at most. */
const CHUNK = 1024 * 1024;

const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/** A signed S3 request (exported for the signature test: the same code path the driver sends). */
export async function signS3(s: S3Settings, method: string, url: string, body: Uint8Array | null, headers: Record<string, string> = {}, datetime?: string): Promise<Request> {
  const signer = new AwsV4Signer({
    method,
    url,
    headers: { ...headers, "x-amz-content-sha256": body ? await sha256Hex(body) : EMPTY_SHA256 },
    body: (body ?? undefined) as BodyInit | undefined,
    accessKeyId: s.accessKeyId,
    secretAccessKey: s.secretAccessKey,
    service: "s3",
    region: s.region,
    datetime,
  });
  const signed = await signer.sign();
  return new Request(signed.url, { method: signed.method, headers: signed.headers, body: (body ?? undefined) as BodyInit | undefined });
}

export function s3Storage(s: S3Settings, fetcher: typeof fetch): MediaStorage {
  const objectUrl = (key: string): string => `${s.endpoint}/${encodeURIComponent(s.bucket)}/${(s.prefix + key).split("/").map(encodeURIComponent).join("/")}`;
  const send = async (method: string, url: string, body: Uint8Array | null = null, headers: Record<string, string> = {}): Promise<Response> => {
    const res = await fetcher(await signS3(s, method, url, body, headers)).catch((err: unknown) => {
      throw new AppError("service_unavailable", "the media storage is not answering", undefined, { "retry-after": "5" }, { cause: err });
    });
    return res;
  };
  const fail = async (res: Response, what: string): Promise<never> => {
    await res.body?.cancel();
    throw new AppError("service_unavailable", `the media storage refused to ${what} (HTTP ${res.status})`, undefined, { "retry-after": "5" });
  };
  const storage: MediaStorage = {
    driver: "s3",
    put: async (key, bytes, type) => {
      if (await storage.has(key)) return;
      const res = await send("PUT", objectUrl(key), bytes, objectHeaders(type));
      if (!res.ok) return fail(res, "store an object");
      await res.body?.cancel();
    },
    get: async (key) => {
      const res = await send("GET", objectUrl(key));
      if (res.status === 404) {
        await res.body?.cancel();
        return null;
      }
      if (!res.ok) return fail(res, "read an object");
      return new Uint8Array(await res.arrayBuffer());
    },
    open: async (key) => {
      const url = objectUrl(key);
      const res = await send("HEAD", url);
      await res.body?.cancel();
      if (res.status === 404) return null;
      if (!res.ok) return fail(res, "look an object up");
      const size = Number(res.headers.get("content-length"));
      if (!Number.isSafeInteger(size) || size < 0) return fail(res, "give an object's size");
      return rangedObject(size, (start, end) => send("GET", url, null, { range: `bytes=${start}-${end}` }));
    },
    has: async (key) => {
      const res = await send("HEAD", objectUrl(key));
      await res.body?.cancel();
      if (res.status === 404) return false;
      if (!res.ok) return fail(res, "look an object up");
      return true;
    },
    removePrefix: async (prefix) => {
      // ListObjectsV2 then one DELETE each: DeleteObjects needs Content-MD5, which Web Crypto lacks.
      for (let round = 0; round < 100; round++) {
        const list = `${s.endpoint}/${encodeURIComponent(s.bucket)}?list-type=2&max-keys=1000&prefix=${encodeURIComponent(s.prefix + prefix)}`;
        const res = await send("GET", list);
        if (!res.ok) return fail(res, "list objects");
        const xml = await res.text();
        const keys = [...xml.matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => unescapeXml(m[1] ?? ""));
        for (const key of keys) {
          const del = await send("DELETE", objectUrl(key.slice(s.prefix.length)));
          await del.body?.cancel();
          if (!del.ok && del.status !== 404) return fail(del, "remove an object");
        }
        if (!/<IsTruncated>true<\/IsTruncated>/.test(xml) || keys.length === 0) return;
      }
    },
  };
  return storage;
}

/**
 * An object read by ranged GETs of CHUNK bytes, one per pull: the HTTP client may buffer a whole
 * response whatever the consumer's pace, so a stalled reader holds one chunk, not the object.
 */
function rangedObject(size: number, get: (start: number, end: number) => Promise<Response>): StoredObject {
  return {
    size,
    read: (start, end) => {
      let at = start;
      return new ReadableStream<Uint8Array>(
        {
          async pull(controller) {
            if (at > end) {
              controller.close();
              return;
            }
            const last = Math.min(end, at + CHUNK - 1);
            const res = await get(at, last);
            if (res.status !== 206 && !(res.status === 200 && at === 0 && last === size - 1)) {
              await res.body?.cancel();
              controller.error(new Error(`the media storage answered a range with HTTP ${res.status}`));
              return;
            }
            const bytes = new Uint8Array(await res.arrayBuffer());
            if (bytes.length !== last - at + 1) {
              controller.error(new Error("the media storage answered a range of another length"));
              return;
            }
            at = last + 1;
            controller.enqueue(bytes);
          },
        },
        { highWaterMark: 0 },
      );
    },
  };
}

/** Raster images a browser only ever shows; anything else (SVG, PDF) can act as a document. */
const INLINE_TYPES = new Set(["image/jpeg", "image/png", "image/gif", "image/webp", "image/avif"]);

/**
 * The headers an object is stored with. A bucket may be served directly (public, or through a CDN
 * in front of it), where the store answers with these: an SVG stored as image/svg+xml would run its
 * scripts on the bucket's origin. Anything not a raster image is stored as bytes to download;
 * delivery through the service answers with its own type and sandboxing headers whatever these say.
 */
function objectHeaders(type: string): Record<string, string> {
  return INLINE_TYPES.has(type) ? { "content-type": type } : { "content-type": "application/octet-stream", "content-disposition": "attachment" };
}

const unescapeXml = (s: string): string => s.replace(/&(lt|gt|quot|apos|amp);/g, (_, e: string) => ({ lt: "<", gt: ">", quot: '"', apos: "'", amp: "&" })[e] ?? "");
