// Errors raised around outbound fetches keep the underlying failure as `cause` (for whoever
// debugs with a stack), while answers and logs keep showing only our own message.
import { describe, expect, test } from "bun:test";
import { jsonPoster } from "../src/ai/drivers/request";
import { AppError, describeError, isDatabaseUnavailable } from "../src/errors";

const req = { url: "https://vendor.example/v1/chat", headers: {}, body: { hello: "world" } };
const opts = (fetch: typeof globalThis.fetch) => ({ fetch, timeoutMs: 2000, maxBytes: 1 << 20, secret: "sk-secret" });
const caught = async (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => "resolved",
    (e: unknown) => e,
  );

describe("fetch errors keep their cause", () => {
  test("a connection failure: provider_error whose cause is the fetch error (last address tried)", async () => {
    const refused = Object.assign(new TypeError("connect ECONNREFUSED 10.0.0.1:443"), { code: "ECONNREFUSED" });
    const post = jsonPoster({ ...opts((() => Promise.reject(refused)) as unknown as typeof fetch), addresses: ["10.0.0.2", "10.0.0.1"] });
    const err = await caught(post(req));
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe("provider_error");
    expect((err as AppError).message).toBe("could not reach the provider (connection failed)");
    expect((err as AppError).cause).toBe(refused);
    // The log line is ours: name and message, never the cause's text.
    expect(JSON.stringify(describeError(err))).not.toContain("ECONNREFUSED");
    // A vendor's refused connection is not the database being down.
    expect(isDatabaseUnavailable(err)).toBe(false);
  });

  test("a body that is not JSON: provider_error whose cause is the SyntaxError", async () => {
    const post = jsonPoster(opts((async () => new Response("<html>oops</html>", { status: 200 })) as unknown as typeof fetch));
    const err = await caught(post(req));
    expect((err as AppError).code).toBe("provider_error");
    expect((err as AppError).cause).toBeInstanceOf(SyntaxError);
  });

  test("a body that breaks while read: provider_error whose cause is the stream error", async () => {
    const broken = new Error("socket hang up");
    const body = new ReadableStream({
      pull(c) {
        c.error(broken);
      },
    });
    const post = jsonPoster(opts((async () => new Response(body, { status: 200 })) as unknown as typeof fetch));
    const err = await caught(post(req));
    expect((err as AppError).code).toBe("provider_error");
    expect((err as AppError).message).toBe("the provider's response could not be read");
    expect((err as AppError).cause).toBe(broken);
  });

  test("a timeout: provider_timeout whose cause is the abort", async () => {
    const hang = ((_: unknown, init: RequestInit) => new Promise((_, reject) => init.signal?.addEventListener("abort", () => reject(init.signal?.reason)))) as unknown as typeof fetch;
    const post = jsonPoster({ ...opts(hang), timeoutMs: 50 });
    const err = await caught(post(req));
    expect((err as AppError).code).toBe("provider_timeout");
    expect((err as AppError).cause).toBeInstanceOf(DOMException);
  });
});
