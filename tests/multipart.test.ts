// The upload's multipart reader (src/lib/multipart.ts) through the real app: a form that arrives in
// chunks of any size is read as sent; a malformed one is 400 invalid_request, an oversized field or
// file 413 as soon as it passes its limit; a repeated file or an undeclared field is refused; and
// every temporary file is removed whatever the outcome.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { media } from "../db/schema";
import { BASE, harness, readReply, seedProject, waitFor } from "./helpers";
import { concatBytes } from "./media.helpers";

const dataDir = mkdtempSync(join(tmpdir(), "multipart-disk-"));
// Uploads are received in TMPDIR: this file's own while its tests run, so another worker's uploads
// (the suite runs files side by side) never show in its count of temporary files left behind.
const uploadsDir = mkdtempSync(join(tmpdir(), "multipart-tmp-"));
const tmpBefore = process.env.TMPDIR;
beforeAll(() => {
  process.env.TMPDIR = uploadsDir;
});
afterAll(() => {
  if (tmpBefore === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = tmpBefore;
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(uploadsDir, { recursive: true, force: true });
});
const MAX = 256 * 1024;

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
/** Sends `bytes` in chunks whose sizes cycle through `sizes`. */
const inChunks = (bytes: Uint8Array, sizes: readonly number[]): ReadableStream<Uint8Array> =>
  new ReadableStream({
    start(c) {
      for (let i = 0, k = 0; i < bytes.length; k++) {
        const n = sizes[k % sizes.length] as number;
        c.enqueue(bytes.slice(i, i + n));
        i += n;
      }
      c.close();
    },
  });
const ours = (): string[] => readdirSync(uploadsDir).filter((f) => f.startsWith("cms-upload-"));

describe("multipart uploads", async () => {
  const h = await harness({ DATA_DIR: dataDir, MEDIA_MAX_BYTES: String(MAX) });
  const p = await seedProject(h);
  const post = async (body: Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array>, type: string) =>
    readReply(
      await h.app.handle(
        new Request(`${BASE}/admin/p/${p.slug}/media`, { method: "POST", headers: { authorization: `Bearer ${h.rootKey}`, "content-type": type }, body, duplex: "half" } as RequestInit),
      ),
    );
  const stored = async () => (await h.deps.db.select({ id: media.id }).from(media).where(eq(media.projectId, p.id))).length;

  test("read in chunks of 1 to 13 bytes, with a preamble, a quoted boundary, padding and bytes that nearly make a boundary: the file and fields as sent", async () => {
    const boundary = "a'b(c)+_,-./:=? z";
    // Bytes that begin a delimiter and stop short of it, at every length, then a lone CR and LF.
    const near = [...Array(boundary.length).keys()].map((n) => `\r\n--${boundary.slice(0, n)}#`).join("");
    const file = concatBytes(
      enc("%PDF-1.4\n"),
      enc(near),
      enc("\r\r\n\n--\r\n-"),
      new Uint8Array(3000).map((_, i) => (i * 31) & 0xff),
    );
    const body = concatBytes(
      enc("This is a preamble, ignored.\r\n"),
      enc(`--${boundary} \t\r\nContent-Disposition: form-data; name="title"\r\n\r\nCafé ☕ "quoted"\r\n`),
      enc(`--${boundary}\r\ncontent-disposition: form-data; name="alt"\r\n\r\nline one\r\nline two\r\n`),
      enc(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="r\\"é port.pdf"\r\nContent-Type: application/pdf\r\n\r\n`),
      file,
      enc(`\r\n--${boundary}--\r\nan epilogue, ignored`),
    );
    for (const sizes of [[1], [2, 3, 5, 7, 11, 13], [4096]]) {
      const res = await post(inChunks(body, sizes), `multipart/form-data; boundary="${boundary}"`);
      expect({ sizes, status: res.status }).toEqual({ sizes, status: 201 });
      expect(res.json.data).toMatchObject({ type: "application/pdf", size: file.length, title: 'Café ☕ "quoted"', alt: { en: "line one\r\nline two" } });
      expect(res.json.data.filename).toMatch(/^r-.*port\.pdf$/);
      const back = await h.app.handle(new Request(res.json.data.url));
      expect(new Uint8Array(await back.arrayBuffer())).toEqual(file);
    }
    expect(ours()).toEqual([]);
    // The count above can fail: a form held open mid-file leaves its temporary file in this folder.
    let release = (): void => {};
    const held = new ReadableStream<Uint8Array>({
      async start(c) {
        c.enqueue(body.slice(0, body.length - 100));
        await new Promise<void>((r) => {
          release = r;
        });
        c.enqueue(body.slice(body.length - 100));
        c.close();
      },
    });
    const pending = post(held, `multipart/form-data; boundary="${boundary}"`);
    expect(await waitFor(() => ours().length, { what: "the held form's temporary file" })).toBe(1);
    release();
    expect((await pending).status).toBe(201);
    expect(ours()).toEqual([]);
  });

  test("malformed forms are 400 invalid_request and store nothing", async () => {
    const b = "xyz";
    const type = `multipart/form-data; boundary=${b}`;
    const part = `--${b}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\n%PDF-1.4\n`;
    const n = await stored();
    for (const [what, body, t] of [
      ["no closing boundary", part, type],
      ["a part without a name", `--${b}\r\nContent-Disposition: form-data; filename="a.pdf"\r\n\r\n%PDF\r\n--${b}--\r\n`, type],
      ["a part that is not form-data", `--${b}\r\nContent-Disposition: attachment; name="file"\r\n\r\n%PDF\r\n--${b}--\r\n`, type],
      ["a part without headers", `--${b}\r\n\r\n%PDF\r\n--${b}--\r\n`, type],
      ["text after the boundary", `--${b}junk\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\n%PDF\r\n--${b}--\r\n`, type],
      ["no boundary in the type", `${part}\r\n--${b}--\r\n`, "multipart/form-data"],
      ["headers that never end", `--${b}\r\nContent-Disposition: form-data; name="file"; x="${"y".repeat(20_000)}`, type],
      ["65 parts", `${`--${b}\r\nContent-Disposition: form-data; name="f"\r\n\r\nx\r\n`.repeat(65)}--${b}--\r\n`, type],
    ] as const) {
      const res = await post(enc(body) as Uint8Array<ArrayBuffer>, t);
      expect({ what, status: res.status, code: res.json?.error?.code }).toEqual({ what, status: 400, code: "invalid_request" });
    }
    expect(await stored()).toBe(n);
    expect(ours()).toEqual([]);
  });

  test("text fields past 1 MiB, and a file past MEDIA_MAX_BYTES, are 413 payload_too_large as soon as they pass it", async () => {
    const b = "xyz";
    const type = `multipart/form-data; boundary=${b}`;
    const n = await stored();
    // Neither body ends: the answer comes from the limit, not from the end of the body.
    const endless = (head: string, fill: number) =>
      new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(enc(head));
        },
        pull(c) {
          c.enqueue(new Uint8Array(64 * 1024).fill(fill));
        },
      });
    const fields = await post(endless(`--${b}\r\nContent-Disposition: form-data; name="alt"\r\n\r\n`, 97), type);
    expect(fields.status).toBe(413);
    expect(fields.json.error.code).toBe("payload_too_large");
    const file = await post(endless(`--${b}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\n%PDF-1.4\n`, 0), type);
    expect(file.status).toBe(413);
    expect(file.json.error).toMatchObject({ code: "payload_too_large", details: { max_bytes: MAX } });
    expect(await stored()).toBe(n);
    expect(ours()).toEqual([]);
  });

  test("two files, or a field the upload does not take, are refused; their files removed", async () => {
    const b = "xyz";
    const type = `multipart/form-data; boundary=${b}`;
    const file = `--${b}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\n%PDF-1.4\nabc\r\n`;
    const twice = await post(enc(`${file}${file}--${b}--\r\n`) as Uint8Array<ArrayBuffer>, type);
    expect(twice.status).toBe(400);
    expect(twice.json.error.code).toBe("invalid_request");
    const proto = await post(enc(`--${b}\r\nContent-Disposition: form-data; name="__proto__"\r\n\r\nx\r\n${file}--${b}--\r\n`) as Uint8Array<ArrayBuffer>, type);
    expect(proto.status).toBe(400);
    expect(proto.json.error).toMatchObject({ code: "invalid_input", details: { fields: ["__proto__"] } });
    expect(ours()).toEqual([]);
  });
});
