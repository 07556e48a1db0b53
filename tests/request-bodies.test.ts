// Issue 36, item 1: bodies are read only once the caller is known. On the real process
// (`bun src/main.ts`, over the suite's database) and raw sockets: a request that sends its headers
// and 1 KB of a declared 25 MB body is answered at once (401, 403, 404 or 413) while the rest is
// never sent; every route but the upload reads at most 1 MiB, whatever the type, declared or
// streamed; an upload of 20 MB is streamed to a temporary file and stored whole; uploads in flight
// are bounded; and 60 anonymous 25 MB bodies leave the process's memory where it was.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freshDatabase, migratedDataDir, waitFor } from "./helpers";
import { type Served, serve } from "./service-process";

const MiB = 1024 * 1024;
const token = `bodies-root-token-${crypto.randomUUID()}`;
const BOUNDARY = "----bodies-test-boundary-9f8e7d";
const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`;
let served: Served;
let port = 0;
let uploadsDir = ""; // the process's TMPDIR: where uploads are received
let dataDir = "";
let drop: () => Promise<void> = async () => {};
let writer = ""; // a key with content:write only
const sockets: Socket[] = [];

const api = async (method: string, path: string, opts: { key?: string | null; type?: string; body?: BodyInit } = {}) => {
  const headers: Record<string, string> = {};
  const key = opts.key === undefined ? token : opts.key;
  if (key) headers.authorization = `Bearer ${key}`;
  if (opts.type) headers["content-type"] = opts.type;
  const res = await fetch(served.url + path, { method, headers, body: opts.body });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, headers: res.headers, text, json };
};

beforeAll(async () => {
  uploadsDir = mkdtempSync(join(tmpdir(), "cms-bodies-tmp-"));
  const env = { TMPDIR: uploadsDir, MEDIA_UPLOADS_IN_FLIGHT: "2", ADMIN_AUTH_FAILURE_LIMIT: "1000000", OAUTH_REGISTER_RATE_LIMIT: "1000000", HTTP_IDLE_TIMEOUT: "60" };
  if (process.env.DATABASE_URL?.startsWith("postgres")) {
    const fresh = await freshDatabase();
    drop = fresh.drop;
    served = await serve(fresh.url!, token, 3, { env });
  } else {
    dataDir = await migratedDataDir();
    served = await serve("", token, 3, { env, dataDir });
  }
  port = Number(new URL(served.url).port);
  for (const slug of ["bodies", "bodies-b", "bodies-c"]) {
    const created = await api("POST", "/admin/projects", { type: "application/json", body: JSON.stringify({ slug, name: slug, default_locale: "en", locales: ["en"] }) });
    expect(created.status).toBe(201);
  }
  const key = await api("POST", "/admin/keys", { type: "application/json", body: JSON.stringify({ name: "writer", scopes: ["content:read", "content:write"] }) });
  writer = key.json.data.key;
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await served?.kill();
  await drop().catch(() => {});
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  rmSync(uploadsDir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  ms: number;
  headers: string;
  body: string;
}

/**
 * A request on a connection of its own: the head and `first` bytes are sent, the rest never (the
 * socket stays open). `answered` is the answer (status, ms since sent, head, body).
 */
function send(head: string, first: Uint8Array | string): { socket: Socket; answered: Promise<Answer> } {
  const socket = connect(port, "127.0.0.1");
  sockets.push(socket);
  const started = performance.now();
  let got = Buffer.alloc(0);
  const answered = new Promise<Answer>((resolve, reject) => {
    socket.on("data", (d: Buffer) => {
      got = Buffer.concat([got, d]);
      const end = got.indexOf("\r\n\r\n");
      if (end === -1) return;
      const headers = got.subarray(0, end).toString("latin1");
      const body = got.subarray(end + 4);
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(headers)?.[1];
      if (length !== undefined ? body.length >= Number(length) : body.includes("0\r\n\r\n"))
        resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1]), ms: performance.now() - started, headers, body: body.toString("utf8") });
    });
    socket.on("error", reject);
    socket.on("close", () => reject(new Error(`closed without a whole answer: ${got.toString("latin1").slice(0, 300)}`)));
  });
  answered.catch(() => {});
  socket.write(head);
  socket.write(first);
  return { socket, answered };
}

/** The answer, or null when none came within `ms` (a bound on the test, not a wait for something to happen). */
const within = <T>(p: Promise<T>, ms: number): Promise<T | null> => Promise.race([p, new Promise<null>((r) => setTimeout(() => r(null), ms))]);

const head = (path: string, type: string, length: number, extra: Record<string, string> = {}): string =>
  `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: ${type}\r\nContent-Length: ${length}\r\n${Object.entries(extra)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("")}\r\n`;

/** The opening of a multipart body whose file part is `filename`, padded to `size` bytes. */
const filePartStart = (size: number, filename = "big.pdf"): string => {
  const start = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4\n`;
  return start + "x".repeat(Math.max(0, size - start.length));
};

/** A multipart body of one file part holding `file`, with text `fields` before it. */
function multipart(file: Uint8Array, filename: string, fields: Record<string, string> = {}): Uint8Array<ArrayBuffer> {
  const enc = new TextEncoder();
  const parts = Object.entries(fields).map(([k, v]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`);
  const headBytes = enc.encode(`${parts.join("")}--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  const tail = enc.encode(`\r\n--${BOUNDARY}--\r\n`);
  const out = new Uint8Array(headBytes.length + file.length + tail.length);
  out.set(headBytes, 0);
  out.set(file, headBytes.length);
  out.set(tail, headBytes.length + file.length);
  return out;
}

/** A PDF (sniffed from its first bytes) of `size` bytes of noise: stored as it is, no image work. */
function pdf(size: number): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(size);
  crypto.getRandomValues(bytes.subarray(0, Math.min(size, 65536)));
  for (let i = 65536; i < size; i += 65536) bytes.copyWithin(i, 0, Math.min(65536, size - i));
  bytes.set(new TextEncoder().encode("%PDF-1.4\n"), 0);
  return bytes;
}

/** A body sent in chunks with no declared length (Transfer-Encoding: chunked). */
const chunked = (bytes: Uint8Array, size = 64 * 1024): ReadableStream<Uint8Array> =>
  new ReadableStream({
    start(c) {
      for (let i = 0; i < bytes.length; i += size) c.enqueue(bytes.slice(i, i + size));
      c.close();
    },
  });
const streamed = (body: ReadableStream<Uint8Array>): RequestInit => ({ body, duplex: "half" }) as RequestInit;

const leftInTmp = (): string[] => readdirSync(uploadsDir).filter((f) => f.startsWith("cms-upload-"));

test("headers and 1 KB of a declared 25 MB body are answered at once: 401 anonymous, 403 without the scope, 404 elsewhere, 413 where the caller is the body", async () => {
  const big = 25 * MiB;
  const auth = (key: string) => ({ authorization: `Bearer ${key}` });
  const cases: Array<[what: string, head: string, first: string, status: number, code: string]> = [
    ["nodes, multipart, anonymous", head("/admin/p/bodies/nodes", MULTIPART, big), filePartStart(1024), 401, "unauthorized"],
    ["nodes, JSON, anonymous", head("/admin/p/bodies/nodes", "application/json", big), `{"slug":"x","title":"${"x".repeat(1000)}`, 401, "unauthorized"],
    ["upload, anonymous", head("/admin/p/bodies/media", MULTIPART, big), filePartStart(1024), 401, "unauthorized"],
    ["upload, a key without media:write", head("/admin/p/bodies/media", MULTIPART, big, auth(writer)), filePartStart(1024), 403, "insufficient_scope"],
    ["upload, a project that does not exist", head("/admin/p/no-such-project/media", MULTIPART, big, auth(token)), filePartStart(1024), 404, "not_found"],
    ["nodes, multipart, with the key", head("/admin/p/bodies/nodes", MULTIPART, big, auth(token)), filePartStart(1024), 413, "payload_too_large"],
    ["a route that does not exist", head("/admin/p/bodies/no-such-route", MULTIPART, big), filePartStart(1024), 404, "not_found"],
    ["MCP, anonymous", head("/mcp", "application/json", big), `{"jsonrpc":"2.0","id":1,"method":"${"x".repeat(1000)}`, 401, "unauthorized"],
    ["OAuth token", head("/oauth/token", "application/x-www-form-urlencoded", big), `grant_type=authorization_code&code=${"x".repeat(1000)}`, 413, "invalid_request"],
    ["OAuth register", head("/oauth/register", "application/json", big), `{"client_name":"${"x".repeat(1000)}`, 413, "invalid_client_metadata"],
    ["OAuth token, multipart", head("/oauth/token", MULTIPART, big), filePartStart(1024), 413, "invalid_request"],
  ];
  const sent = cases.map(([, h, first]) => send(h, first).answered);
  for (const [i, [what, , , status, code]] of cases.entries()) {
    // The idle deadline is 60 s: a server waiting for the body would not answer within 10.
    const answer = await within(sent[i] as Promise<Answer>, 10_000);
    expect({ what, answered: answer !== null }).toEqual({ what, answered: true });
    const body = JSON.parse(answer!.body);
    expect({ what, status: answer!.status, code: body.error?.code ?? body.error }).toEqual({ what, status, code });
  }
  // Chunked, with no length declared: the first chunk of 1 KB is sent, never the last.
  const chunkedHead = (path: string, type: string, extra: Record<string, string> = {}): string => head(path, type, 0, extra).replace("Content-Length: 0\r\n", "Transfer-Encoding: chunked\r\n");
  const firstChunk = (text: string): string => `${text.length.toString(16)}\r\n${text}\r\n`;
  const unended: Array<[what: string, head: string, first: string, status: number, code: string]> = [
    ["nodes, chunked, anonymous", chunkedHead("/admin/p/bodies/nodes", MULTIPART), firstChunk(filePartStart(1024)), 401, "unauthorized"],
    ["upload, chunked, a key without media:write", chunkedHead("/admin/p/bodies/media", MULTIPART, auth(writer)), firstChunk(filePartStart(1024)), 403, "insufficient_scope"],
    // A type no OAuth endpoint takes is never read: refused at once.
    ["OAuth token, chunked multipart", chunkedHead("/oauth/token", MULTIPART), firstChunk(filePartStart(1024)), 400, "invalid_request"],
  ];
  const sentChunked = unended.map(([, h, first]) => send(h, first).answered);
  for (const [i, [what, , , status, code]] of unended.entries()) {
    const answer = await within(sentChunked[i] as Promise<Answer>, 10_000);
    expect({ what, answered: answer !== null }).toEqual({ what, answered: true });
    const body = JSON.parse(answer!.body);
    expect({ what, status: answer!.status, code: body.error?.code ?? body.error }).toEqual({ what, status, code });
  }
  // The approval page: a post without the page's CSRF cookie is refused unread.
  for (const h of [head(`/approvals/${crypto.randomUUID()}`, "application/x-www-form-urlencoded", big), chunkedHead(`/approvals/${crypto.randomUUID()}`, "application/x-www-form-urlencoded")]) {
    const approval = await within(send(h, h.includes("chunked") ? firstChunk(`csrf_token=${"x".repeat(1000)}`) : `csrf_token=${"x".repeat(1000)}`).answered, 10_000);
    expect(approval?.status).toBe(403);
    expect(approval?.body).toContain("This form expired");
  }
  expect(leftInTmp()).toEqual([]);
});

test("every route but the upload reads at most 1 MiB, whatever the type, declared or streamed: 413 payload_too_large and nothing written", async () => {
  const before = (await api("GET", "/admin/p/bodies/nodes")).json.data.length;
  const form = multipart(new Uint8Array(2 * MiB).fill(120), "x.bin", { slug: "two-mb", title: "Two" });
  const declared = await api("POST", "/admin/p/bodies/nodes", { type: MULTIPART, body: form });
  expect(declared.status).toBe(413);
  expect(declared.json.error.code).toBe("payload_too_large");
  for (const [type, bytes] of [
    [MULTIPART, form],
    ["application/json", new TextEncoder().encode(JSON.stringify({ slug: "two-mb", title: "x".repeat(2 * MiB) }))],
    ["text/plain", new Uint8Array(2 * MiB).fill(120)],
  ] as const) {
    const res = await fetch(`${served.url}/admin/p/bodies/nodes`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": type }, ...streamed(chunked(bytes)) });
    const json = (await res.json()) as any;
    expect({ type, status: res.status, code: json.error.code }).toEqual({ type, status: 413, code: "payload_too_large" });
  }
  // The upload's own limit is not lent to other routes: a 2 MB form to a JSON route of the media library too.
  const describe = await api("POST", `/admin/p/bodies/media/${crypto.randomUUID()}/describe`, { type: MULTIPART, body: form });
  expect(describe.status).toBe(413);
  expect((await api("GET", "/admin/p/bodies/nodes")).json.data.length).toBe(before);
  // Under the cap, a form on a JSON route is refused for what it is.
  const small = await api("POST", "/admin/p/bodies/nodes", { type: MULTIPART, body: multipart(new Uint8Array(10), "x.bin", { slug: "small", title: "Small" }) });
  expect(small.status).toBe(400);
});

test("the approval page and the OAuth endpoints read at most 1 MiB: 413 for 2 MB, declared or streamed", async () => {
  const id = crypto.randomUUID();
  const page = await fetch(`${served.url}/approvals/${id}`);
  const cookies = page.headers.getSetCookie().map((c) => c.split(";")[0]);
  expect(cookies.some((c) => /csrf/.test(c ?? ""))).toBe(true);
  const form = `csrf_token=x&step=decide&action=approve&pad=${"x".repeat(2 * MiB)}`;
  const post = (path: string, type: string, body: BodyInit | ReadableStream<Uint8Array>, extra: Record<string, string> = {}) =>
    fetch(served.url + path, {
      method: "POST",
      headers: { "content-type": type, ...extra },
      ...(body instanceof ReadableStream ? streamed(body) : { body }),
    });
  const enc = (s: string) => new TextEncoder().encode(s);
  const cookie = { cookie: cookies.join("; ") };
  for (const [what, res] of [
    ["approval, declared", await post(`/approvals/${id}`, "application/x-www-form-urlencoded", form, cookie)],
    ["approval, streamed", await post(`/approvals/${id}`, "application/x-www-form-urlencoded", chunked(enc(form)), cookie)],
    ["approval, multipart", await post(`/approvals/${id}`, MULTIPART, multipart(new Uint8Array(2 * MiB), "x.bin"), cookie)],
  ] as const) {
    const json = (await res.json()) as any;
    expect({ what, status: res.status, code: json.error.code }).toEqual({ what, status: 413, code: "payload_too_large" });
  }
  const tokenForm = `grant_type=authorization_code&client_id=x&code=${"x".repeat(2 * MiB)}`;
  const register = JSON.stringify({ client_name: "x".repeat(2 * MiB), redirect_uris: ["http://127.0.0.1/cb"] });
  for (const [what, res, code] of [
    ["token, declared", await post("/oauth/token", "application/x-www-form-urlencoded", tokenForm), "invalid_request"],
    ["token, streamed", await post("/oauth/token", "application/x-www-form-urlencoded", chunked(enc(tokenForm))), "invalid_request"],
    ["revoke, streamed", await post("/oauth/revoke", "application/x-www-form-urlencoded", chunked(enc(tokenForm))), "invalid_request"],
    ["register, declared", await post("/oauth/register", "application/json", register), "invalid_client_metadata"],
    ["register, streamed", await post("/oauth/register", "application/json", chunked(enc(register))), "invalid_client_metadata"],
    ["authorize, streamed", await post("/oauth/authorize", "application/x-www-form-urlencoded", chunked(enc(tokenForm))), "invalid_request"],
  ] as const) {
    const json = (await res.json()) as any;
    expect({ what, status: res.status, code: json.error }).toEqual({ what, status: 413, code });
  }
});

test("a 20 MB upload, declared or streamed, is stored whole: the bytes read back are the bytes sent, and no temporary file is left", async () => {
  const file = pdf(20 * MiB);
  const declared = await api("POST", "/admin/p/bodies/media", { type: MULTIPART, body: multipart(file, "report.pdf", { title: "Report", alt: "A report" }) });
  expect(declared.status).toBe(201);
  expect(declared.json.data).toMatchObject({ type: "application/pdf", size: file.length, filename: "report.pdf", title: "Report", alt: { en: "A report" } });
  expect(declared.json.data.hash).toBe(new Bun.CryptoHasher("sha256").update(file).digest("hex"));
  const back = await fetch(served.url + new URL(declared.json.data.url).pathname + new URL(declared.json.data.url).search);
  expect(back.status).toBe(200);
  expect(Buffer.from(await back.arrayBuffer()).equals(Buffer.from(file))).toBe(true);
  expect(leftInTmp()).toEqual([]);

  const other = pdf(20 * MiB - 12345);
  const res = await fetch(`${served.url}/admin/p/bodies-b/media`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": MULTIPART },
    ...streamed(chunked(multipart(other, "streamed.pdf"), 7919)),
  });
  const json = (await res.json()) as any;
  expect(res.status).toBe(201);
  expect(json.data).toMatchObject({ size: other.length, filename: "streamed.pdf" });
  const again = await fetch(served.url + new URL(json.data.url).pathname + new URL(json.data.url).search);
  expect(Buffer.from(await again.arrayBuffer()).equals(Buffer.from(other))).toBe(true);
  expect(leftInTmp()).toEqual([]);

  // Past MEDIA_MAX_BYTES (25 MiB), streamed: 413 as soon as the file passes it, and its file removed.
  const tooBig = await fetch(`${served.url}/admin/p/bodies/media`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": MULTIPART },
    ...streamed(chunked(multipart(pdf(25 * MiB + 1), "big.pdf"))),
  });
  expect(tooBig.status).toBe(413);
  expect(((await tooBig.json()) as any).error.code).toBe("payload_too_large");
  expect(leftInTmp()).toEqual([]);
});

test("uploads in flight are bounded (MEDIA_UPLOADS_IN_FLIGHT=2, one project 1): past it 429 with Retry-After; a client gone mid-body frees its slot and leaves no file", async () => {
  const small = multipart(pdf(4096), "small.pdf");
  const upload = (ref: string) => api("POST", `/admin/p/${ref}/media`, { type: MULTIPART, body: small });
  const hold = (ref: string) => send(head(`/admin/p/${ref}/media`, MULTIPART, 5 * MiB, { authorization: `Bearer ${token}` }), filePartStart(64 * 1024));
  const a = hold("bodies");
  await waitFor(() => leftInTmp().length === 1, { what: "the first upload being received" });
  const sameProject = await upload("bodies");
  expect(sameProject.status).toBe(429);
  expect(sameProject.json.error.code).toBe("rate_limited");
  expect(sameProject.headers.get("retry-after")).toBe("1");
  expect((await upload("bodies-b")).status).toBe(201); // another project has a slot of its own
  const b = hold("bodies-b");
  await waitFor(() => leftInTmp().length === 2, { what: "the second upload being received" });
  const third = await upload("bodies-c");
  expect(third.status).toBe(429); // every slot of the instance is taken
  a.socket.destroy();
  await waitFor(() => leftInTmp().length === 1, { what: "the file of the upload whose client left to be removed" });
  expect((await upload("bodies-c")).status).toBe(201);
  b.socket.destroy();
  await waitFor(() => leftInTmp().length === 0, { what: "every temporary file to be removed" });
  expect((await upload("bodies")).status).toBe(201);
});

const rssMb = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) / 1024;

describe.if(process.platform === "linux")("memory", () => {
  test("60 anonymous 25 MB posts to /admin/p/{ref}/nodes grow the process by less than 200 MB", async () => {
    const body = new Uint8Array(25 * MiB);
    body.set(new TextEncoder().encode(filePartStart(1024)), 0);
    const before = rssMb(served.pid);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(served.pid))), 20);
    let statuses: number[] = [];
    try {
      statuses = await Promise.all(
        Array.from({ length: 60 }, () =>
          fetch(`${served.url}/admin/p/bodies/nodes`, { method: "POST", headers: { "content-type": MULTIPART }, body }).then(
            async (r) => (await r.arrayBuffer(), r.status),
            () => 0,
          ),
        ),
      );
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, rssMb(served.pid));
    expect({ growthMb: Math.round(peak - before), statuses: [...new Set(statuses)] }).toEqual({ growthMb: expect.any(Number), statuses: [401] });
    expect(peak - before).toBeLessThan(200);
  }, 120_000);
});
