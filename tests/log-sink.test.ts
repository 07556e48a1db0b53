// Log lines are written in batches: one write per event-loop turn, in order, none lost.
import { expect, test } from "bun:test";
import { createLogger } from "../src/lib/log";
import { batchedStdout } from "../src/lib/log-sink";
import { waitFor } from "./helpers";

test("lines of one turn go out in one write, in order; a large batch is written at once", async () => {
  const writes: string[] = [];
  const sink = batchedStdout({ write: (chunk: Uint8Array) => writes.push(new TextDecoder().decode(chunk)) });
  const log = createLogger("info", (l) => sink.write(l));
  for (let i = 0; i < 100; i++) log.info("request", { n: i, token: "secret-value" });
  expect(writes).toHaveLength(0); // nothing on the request path
  await waitFor(() => writes.length > 0, { interval: 1, what: "the batch written" });
  expect(writes).toHaveLength(1);
  const lines = writes[0]!.split("\n");
  expect(lines.pop()).toBe("");
  expect(lines.map((l) => JSON.parse(l).n)).toEqual([...Array(100).keys()]);
  expect(writes[0]).not.toContain("secret-value");
  expect(JSON.parse(lines[0]!)).toMatchObject({ level: "info", msg: "request", n: 0, token: "[redacted]" });
  // Past 64 KiB pending, the batch is written synchronously.
  writes.length = 0;
  const big = "x".repeat(1000);
  for (let i = 0; i < 70; i++) sink.write(big);
  expect(writes).toHaveLength(1);
  sink.flush();
  expect(writes).toHaveLength(2);
  expect(writes.join("")).toBe(`${big}\n`.repeat(70));
  // Any text, in order: lines of several bytes per character, and one longer than the whole buffer.
  writes.length = 0;
  const wide = 'é€𝄞\u0000"'.repeat(5000);
  const huge = "y".repeat(100_000);
  for (const line of ["a", wide, "b", huge, "c"]) sink.write(line);
  sink.flush();
  expect(writes.join("")).toBe(`a\n${wide}\nb\n${huge}\nc\n`);
});

test("the access line built as one string is the line info() writes, to the byte; absent when info lines are not written", () => {
  const lines: string[] = [];
  const log = createLogger("info", (l) => lines.push(l));
  const cases: [string, string, string, number, number][] = [
    ["0190d2c4-7a8b-7c3d-9e0f-123456789abc", "GET", "/api/p/demo/nodes/by-path/a%22b/c", 200, 0.07],
    ["req.1_x-Y", "HEAD", '/odd/"quoted"\\path', 304, 12],
    ["id", "GET", "/", 404, 1234.56],
  ];
  for (const [request_id, method, path, status, ms] of cases) {
    log.request?.(request_id, method, path, status, ms);
    log.info("request", { request_id, method, path, status, ms });
    const [fast, slow] = lines.splice(0, 2);
    // Same second: the timestamps agree unless the clock turned between the two calls.
    expect(fast?.replace(/"time":"[^"]+"/, "")).toBe(slow?.replace(/"time":"[^"]+"/, "") ?? "");
    expect(JSON.parse(fast ?? "")).toMatchObject({ level: "info", msg: "request", request_id, method, path, status, ms });
  }
  expect(createLogger("warn", () => {}).request).toBeUndefined();
  expect(typeof createLogger("debug", () => {}).request).toBe("function");
});
