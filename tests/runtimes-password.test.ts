// Password hashes move between runtimes: an argon2id PHC string made under Bun, Node or Deno
// verifies under all three, and a wrong password is refused by all three (tests/runtimes/password-probe.ts).
import { expect, test } from "bun:test";
import { command, type Runtime, run, runtimesMissing } from "./runtimes.helpers";

const RUNTIMES: Runtime[] = ["bun", "node", "deno"];
const PASSWORD = "correct horse battery staple";

test.skipIf(runtimesMissing)(
  "a hash made on each runtime verifies on the other two, and the wrong password on none (needs XRT_NODE and XRT_DENO, the Node and Deno binaries)",
  async () => {
    const made = await Promise.all(
      RUNTIMES.map(async (rt) => {
        const r = await run([...command(rt, "tests/runtimes/password-probe.ts"), "hash", PASSWORD]);
        expect(r.code, r.out).toBe(0);
        const { runtime, hash, ms } = JSON.parse(r.out.trim().split("\n").at(-1) ?? "") as { runtime: string; hash: string; ms: number };
        expect(runtime).toBe(rt);
        expect(hash).toMatch(/^\$argon2id\$v=19\$m=65536,t=2,p=1\$[A-Za-z0-9+/]{43}\$[A-Za-z0-9+/]{43}$/);
        console.log(`argon2id hash on ${rt}: ${ms} ms`);
        return hash;
      }),
    );
    // The runtimes verify side by side (child processes: they use every core).
    await Promise.all(
      RUNTIMES.map(async (rt) => {
        for (const [password, expected] of [
          [PASSWORD, true],
          [`${PASSWORD}!`, false],
        ] as const) {
          const r = await run([...command(rt, "tests/runtimes/password-probe.ts"), "verify", password, ...made]);
          expect(r.code, r.out).toBe(0);
          expect(JSON.parse(r.out.trim().split("\n").at(-1) ?? "")).toEqual({ runtime: rt, results: [expected, expected, expected] });
        }
      }),
    );
  },
  180_000,
);
