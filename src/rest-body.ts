// The admin routes' request bodies, read by the route's handler once the caller is authenticated,
// its scope checked and its project resolved (src/rest.ts): an anonymous or unauthorised request is
// answered without its body being read. Every route reads at most MAX_BODY_BYTES (1 MiB) whatever
// the content type; only a route declared multipart (the upload) takes more, streamed to a
// temporary file, with a bounded number of uploads in flight.
import type { HttpBinding } from "./core/operation";
import { AppError } from "./errors";
import { MAX_BODY_BYTES, parseBody, readBodyText, refuseDeclaredOver } from "./lib/json";
import { type FileSink, memorySink, readMultipart } from "./lib/multipart";
import type { Slots } from "./lib/slots";
import { createTempFile, type TempFile } from "./platform/temp-file";

/** A body as the route's input reads it, and what to do once the request is answered (remove its files). */
export interface ReceivedBody {
  readonly body: unknown;
  release(): Promise<void>;
}

export interface UploadLimits {
  /** The largest file (MEDIA_MAX_BYTES); the body may hold 1 MiB of fields besides. */
  readonly maxFileBytes: number;
  /** Uploads in flight in this app (MEDIA_UPLOADS_IN_FLIGHT); one project holds at most half of them (at least one). */
  readonly inFlight: number;
  readonly slots: Slots;
}

const NOTHING: ReceivedBody = { body: undefined, release: async () => {} };
// Parts of one form: the upload takes a file and five text fields.
const MAX_PARTS = 64;

export const isMultipart = (contentType: string | null | undefined): boolean => /^multipart\/form-data\b/i.test(contentType ?? "");

/**
 * The body of an admin request: nothing for GET and HEAD (never read); a multipart body on the
 * upload route through `receiveUpload`; any other body, of any type, up to 1 MiB: JSON and forms
 * parsed, a small multipart form parsed in memory (the route then refuses it), text as a string.
 */
export async function receiveBody(request: Request, binding: HttpBinding, upload: UploadLimits, projectId: string | null): Promise<ReceivedBody> {
  if (request.method === "GET" || request.method === "HEAD" || request.body === null) return NOTHING;
  const type = request.headers.get("content-type") ?? "";
  if (binding.multipart && isMultipart(type)) return receiveUpload(request, type, upload, projectId ?? "");
  refuseDeclaredOver(request, MAX_BODY_BYTES);
  if (isMultipart(type)) {
    const limits = { maxBytes: MAX_BODY_BYTES, maxFileBytes: MAX_BODY_BYTES, maxFieldBytes: MAX_BODY_BYTES, maxParts: MAX_PARTS };
    return { body: await readMultipart(request.body, type, limits, async (part) => memorySink(part)), release: NOTHING.release };
  }
  const parsed = await parseBody(request, type);
  if (parsed !== undefined) return { body: parsed, release: NOTHING.release };
  // A body without a type is not read: no route takes one.
  return type === "" ? NOTHING : { body: await readBodyText(request), release: NOTHING.release };
}

/**
 * An upload: one of the app's upload slots (429 with Retry-After when they are all taken), then the
 * body streamed, each file part to a temporary file; the files are removed and the slots given back
 * by `release`, or at once when the body is refused.
 */
async function receiveUpload(request: Request, type: string, upload: UploadLimits, projectId: string): Promise<ReceivedBody> {
  const maxBytes = upload.maxFileBytes + MAX_BODY_BYTES;
  refuseDeclaredOver(request, maxBytes);
  const slots = takeUploadSlots(upload, projectId);
  const files: TempFile[] = [];
  const release = async (): Promise<void> => {
    await Promise.all(files.map((f) => f.remove()));
    for (const free of slots) free();
  };
  try {
    const limits = { maxBytes, maxFileBytes: upload.maxFileBytes, maxFieldBytes: MAX_BODY_BYTES, maxParts: MAX_PARTS };
    const body = await readMultipart(request.body, type, limits, async (part): Promise<FileSink> => {
      const file = await createTempFile("cms-upload-");
      files.push(file);
      return { write: (chunk) => file.write(chunk), close: () => file.close(part.filename, part.type) };
    });
    return { body, release };
  } catch (err) {
    await release();
    throw err;
  }
}

function takeUploadSlots(upload: UploadLimits, projectId: string): Array<() => void> {
  const { inFlight, slots } = upload;
  const all = slots.acquire("*", inFlight);
  const mine = all === null ? null : slots.acquire(`p:${projectId}`, Math.max(1, Math.floor(inFlight / 2)));
  if (all === null || mine === null) {
    all?.();
    throw new AppError("rate_limited", "too many uploads are being received; retry shortly", { limit: inFlight, retry_after: 1 }, { "retry-after": "1" });
  }
  return [all, mine];
}
