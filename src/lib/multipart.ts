// A multipart/form-data body (RFC 7578) read as it arrives: text fields kept (bounded), each file
// part handed chunk by chunk to a sink the caller opens (a temporary file), so an upload is never
// held whole in memory while it is received. Every byte read is counted against a limit, whatever
// the body declared; a part's headers, a text field and the number of parts are bounded too.
import { AppError } from "../errors";
import { isStorableText } from "./json";

export interface MultipartLimits {
  /** The whole body, bytes. */
  readonly maxBytes: number;
  /** One file part, bytes: past it, 413 as soon as it is passed. */
  readonly maxFileBytes: number;
  /** All text fields together, bytes. */
  readonly maxFieldBytes: number;
  readonly maxParts: number;
}

/** Where a file part's bytes go: written in order, then closed into what the form holds for it. */
export interface FileSink {
  write(chunk: Uint8Array): Promise<void>;
  close(): Promise<Blob>;
}

export interface FilePart {
  readonly name: string;
  readonly filename: string;
  readonly type: string;
}

/** Opens the sink of a file part (the caller removes what it opened, whatever the outcome). */
export type OpenFile = (part: FilePart) => Promise<FileSink>;

/** A file part's bytes kept in memory (a small body): the form holds a File of them. */
export const memorySink = (part: FilePart): FileSink => {
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  return {
    write: async (chunk) => void chunks.push(chunk.slice()),
    close: async () => new File(chunks, part.filename, { type: part.type }),
  };
};

const CRLF = new Uint8Array([13, 10]);
const CRLFCRLF = new Uint8Array([13, 10, 13, 10]);
const MAX_HEADER_BYTES = 16 * 1024;

/** The boundary of a multipart Content-Type (RFC 2046 §5.1.1: 1 to 70 characters), or null. */
function boundaryOf(contentType: string): string | null {
  const m = /;\s*boundary\s*=\s*(?:"([^"\r\n]{1,70})"|([^\s;",]{1,70}))/i.exec(contentType);
  return m?.[1] ?? m?.[2] ?? null;
}

/** The first index of `needle` in `hay` at or after `from`, or -1. */
function indexOf(hay: Uint8Array, needle: Uint8Array, from = 0): number {
  const first = needle[0] as number;
  const last = hay.length - needle.length;
  // Only a byte equal to the needle's first (CR) starts a comparison. The delimiter (CR LF "--"
  // boundary) holds no other CR, so a comparison never runs past the next candidate, and the other
  // needles are at most 4 bytes: linear in the body, whatever bytes a sender chooses.
  for (let i = hay.indexOf(first, from); i !== -1 && i <= last; i = hay.indexOf(first, i + 1)) {
    let j = 1;
    while (j < needle.length && hay[i + j] === needle[j]) j++;
    if (j === needle.length) return i;
  }
  return -1;
}

const concat = (a: Uint8Array, b: Uint8Array): Uint8Array => {
  if (a.length === 0) return b;
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
};

const malformed = (why: string): AppError => new AppError("invalid_request", `the multipart body could not be parsed: ${why}`);

/** A header parameter's value (name="…" or name=token), unquoted; null when absent. */
function param(header: string, name: string): string | null {
  for (const m of header.matchAll(/;\s*([A-Za-z0-9_*.-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;]*)/g)) {
    if ((m[1] ?? "").toLowerCase() !== name) continue;
    const v = (m[2] ?? "").trim();
    return v.startsWith('"') ? v.slice(1, -1).replace(/\\(.)/g, "$1") : v;
  }
  return null;
}

/** A part's headers: its field name, and its file name and type when it is a file. */
function partHeaders(bytes: Uint8Array): { name: string; filename: string | null; type: string } {
  const text = new TextDecoder("utf-8", { fatal: false }).decode(bytes);
  let disposition: string | null = null;
  let type = "";
  for (const line of text.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const key = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (key === "content-disposition") disposition = value;
    else if (key === "content-type") type = value;
  }
  if (disposition === null || !/^form-data\s*(;|$)/i.test(disposition)) throw malformed("a part is not form-data");
  const name = param(disposition, "name");
  if (name === null) throw malformed("a part has no name");
  return { name, filename: param(disposition, "filename"), type };
}

type State = "preamble" | "boundary" | "headers" | "body" | "done";
const EMPTY = new Uint8Array(0);
const tooLarge = (what: string, max: number): AppError => new AppError("payload_too_large", `${what} exceeds ${max} bytes`, { max_bytes: max });

interface Current {
  readonly name: string;
  readonly sink: FileSink | null;
  readonly text: Uint8Array[];
  size: number;
}

/** The parser's state between chunks: what it waits for, the bytes kept for it, the part being read. */
class Parser {
  state: State = "preamble";
  // The first boundary may open the body without the CR LF every later one follows.
  private pending: Uint8Array = CRLF;
  private part: Current | null = null;
  private parts = 0;
  private fieldBytes = 0;
  readonly form: Record<string, unknown> = {};

  constructor(
    private readonly delimiter: Uint8Array,
    private readonly limits: MultipartLimits,
    private readonly openFile: OpenFile,
  ) {}

  async push(chunk: Uint8Array): Promise<void> {
    let buf = concat(this.pending, chunk);
    for (let wait = false; !wait && this.state !== "done"; ) [buf, wait] = await this.step(buf);
    this.pending = buf;
  }

  /** One step of the state machine over the bytes at hand: what is left, and whether more bytes are needed. */
  private async step(buf: Uint8Array): Promise<[rest: Uint8Array, wait: boolean]> {
    const d = this.delimiter;
    if (this.state === "preamble" || this.state === "body") {
      const at = indexOf(buf, d);
      // Everything but a tail that could begin the delimiter is the part's (or the preamble's, dropped).
      const upTo = at === -1 ? Math.max(0, buf.length - d.length + 1) : at;
      if (this.state === "body" && upTo > 0) await this.data(buf.subarray(0, upTo));
      if (at === -1) return [buf.subarray(upTo), true];
      if (this.state === "body") await this.finish();
      this.state = "boundary";
      return [buf.subarray(at + d.length), false];
    }
    if (this.state === "boundary") {
      if (buf.length < 2) return [buf, true];
      if (buf[0] === 45 && buf[1] === 45) {
        this.state = "done";
        return [EMPTY, true];
      }
      const eol = indexOf(buf, CRLF);
      if (eol === -1) {
        if (buf.length > 256) throw malformed("a boundary line is not ended");
        return [buf, true];
      }
      if (buf.subarray(0, eol).some((b) => b !== 32 && b !== 9)) throw malformed("a boundary line carries more than the boundary");
      this.state = "headers";
      return [buf.subarray(eol + 2), false];
    }
    const end = indexOf(buf, CRLFCRLF);
    if (end === -1) {
      if (buf.length > MAX_HEADER_BYTES) throw malformed("a part's headers are too long");
      return [buf, true];
    }
    await this.begin(buf.subarray(0, end));
    this.state = "body";
    return [buf.subarray(end + 4), false];
  }

  private async begin(headerBytes: Uint8Array): Promise<void> {
    this.parts += 1;
    if (this.parts > this.limits.maxParts) throw new AppError("invalid_request", `a multipart body holds at most ${this.limits.maxParts} parts`);
    const h = partHeaders(headerBytes);
    if (!isStorableText(h.name) || (h.filename !== null && !isStorableText(h.filename))) throw new AppError("invalid_request", "form fields must not contain NUL characters or unpaired surrogates");
    const sink = h.filename === null ? null : await this.openFile({ name: h.name, filename: h.filename, type: h.type });
    this.part = { name: h.name, sink, text: [], size: 0 };
  }

  private async data(bytes: Uint8Array): Promise<void> {
    const part = this.part as Current;
    part.size += bytes.byteLength;
    if (part.sink !== null) {
      if (part.size > this.limits.maxFileBytes) throw tooLarge("a file", this.limits.maxFileBytes);
      await part.sink.write(bytes);
      return;
    }
    this.fieldBytes += bytes.byteLength;
    if (this.fieldBytes > this.limits.maxFieldBytes) throw tooLarge("the form's text fields", this.limits.maxFieldBytes);
    part.text.push(bytes.slice());
  }

  private async finish(): Promise<void> {
    const part = this.part as Current;
    this.part = null;
    let value: unknown;
    if (part.sink !== null) value = await part.sink.close();
    else {
      const text = new TextDecoder().decode(concatAll(part.text, part.size));
      if (!isStorableText(text)) throw new AppError("invalid_request", "form fields must not contain NUL characters or unpaired surrogates");
      value = text;
    }
    // A repeated field is an array, which the operation's schema refuses; defined, never assigned (__proto__ is a field like any other).
    const prev = Object.hasOwn(this.form, part.name) ? this.form[part.name] : undefined;
    Object.defineProperty(this.form, part.name, { value: prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value], enumerable: true, writable: true, configurable: true });
  }
}

const concatAll = (chunks: readonly Uint8Array[], size: number): Uint8Array => {
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
};

/**
 * Reads a multipart/form-data body as it arrives: text fields as strings, file parts through the
 * sinks `openFile` gives (the form holds what each sink closes into). Past `limits.maxBytes` read
 * (declared or not), a file past `maxFileBytes` or text fields past `maxFieldBytes`: 413
 * payload_too_large at once, the rest never read; a malformed or cut body: 400 invalid_request.
 */
export async function readMultipart(body: ReadableStream<Uint8Array> | null, contentType: string, limits: MultipartLimits, openFile: OpenFile): Promise<Record<string, unknown>> {
  const boundary = boundaryOf(contentType);
  if (boundary === null) throw malformed("its Content-Type names no boundary");
  if (body === null) throw malformed("the body is empty");
  const parser = new Parser(new TextEncoder().encode(`\r\n--${boundary}`), limits, openFile);
  const reader = body.getReader();
  let total = 0;
  try {
    while (parser.state !== "done") {
      const { done, value } = await reader.read().catch((err: unknown) => {
        throw new AppError("invalid_request", "the body could not be read", undefined, undefined, { cause: err });
      });
      if (done) throw malformed("the body ends before its last boundary");
      total += value.byteLength;
      if (total > limits.maxBytes) throw tooLarge("request body", limits.maxBytes);
      await parser.push(value);
    }
  } finally {
    // What follows the last boundary (an epilogue) is never read; neither is the rest after an error.
    await reader.cancel().catch(() => {});
  }
  return parser.form;
}
