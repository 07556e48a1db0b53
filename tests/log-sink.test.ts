// Log lines are written in batches: one write per event-loop turn, in order, none lost.
import { expect, test } from "bun:test";
import { createLogger } from "../src/lib/log";
import { batchedStdout } from "../src/lib/log-sink";
import { waitFor } from "./helpers";

test("lines of one turn go out in one write, in order; a large batch is written at once", async () => {
  const writes: string[] = [];
  const sink = batchedStdout({ write: (chunk: string) => writes.push(chunk) });
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
});
