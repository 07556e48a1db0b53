// The pinned outbound fetch on every runtime: tests/xrt/pinned-fetch.check.ts runs as a child
// process under Bun (this one), Node (XRT_NODE, with tsx) and Deno (XRT_DENO) and must report every
// case ok, through the runtime's own means (Bun's fetch, or undici on Node and Deno).
// Without XRT_NODE / XRT_DENO the runtime is skipped with a notice, except in CI, where it fails.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PIN_CERT } from "./xrt/pin-cert";

const SCRIPT = "tests/xrt/pinned-fetch.check.ts";
const CASES = [
  "path",
  "a name the guard resolved to a public address, resolving to loopback at connect time, is not reached on loopback",
  "the connection goes to the checked address, not the name's own",
  "a name no DNS knows is reached through its checked address, Host kept",
  "IPv6 checked address",
  "no address (a literal IP host): connects as written, through the app's fetch",
  "https: the certificate is verified against the name",
  "https: a certificate for another name is refused",
  "POST: method, headers and body arrive",
  "redirects are not followed",
  "the caller's signal bounds the time",
  "the caller's size cap reads the body stream",
  "the guard refuses private, loopback, link-local, mapped and encoded addresses and names resolving to them",
];

const dir = mkdtempSync(join(tmpdir(), "pinned-fetch-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const caFile = join(dir, "ca.pem");
writeFileSync(caFile, PIN_CERT);

const runtimes: Array<{ name: string; env: string | null; bin: string | undefined; args: string[]; path: string }> = [
  { name: "Bun", env: null, bin: process.execPath, args: [SCRIPT], path: "bun-fetch" },
  { name: "Node", env: "XRT_NODE", bin: process.env.XRT_NODE, args: ["--import", "tsx", SCRIPT], path: "undici" },
  { name: "Deno", env: "XRT_DENO", bin: process.env.XRT_DENO, args: ["run", "-A", "--sloppy-imports", "--node-modules-dir=manual", SCRIPT], path: "undici" },
];

describe("pinned outbound fetch on each runtime", () => {
  for (const rt of runtimes) {
    const needs = rt.env ? ` (needs ${rt.env}, the ${rt.name} binary)` : "";
    const title = `${rt.name}: connects to the checked address, verifies the name, follows no redirect; the guard refuses the same addresses${needs}`;
    const bin = rt.bin;
    if (!bin) {
      if (process.env.CI) {
        test(title, () => {
          throw new Error(`${rt.env} is not set: CI must run this check on ${rt.name} (the path of its binary)`);
        });
      } else {
        console.warn(`pinned-fetch: ${rt.name} skipped, ${rt.env} is not set (npm install --prefix /tmp/rt node@22 deno@2; ${rt.env}=/tmp/rt/node_modules/.bin/${rt.name.toLowerCase()})`);
        test.skip(title, () => {});
      }
      continue;
    }
    test(title, async () => {
      const child = Bun.spawn([bin, ...rt.args], {
        cwd: join(import.meta.dir, ".."),
        env: { ...process.env, NODE_EXTRA_CA_CERTS: caFile, NO_COLOR: "1" },
        stdout: "pipe",
        stderr: "pipe",
      });
      const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
      if (code !== 0) throw new Error(`${rt.name} exited ${code}: ${err.slice(-2000)}`);
      const line = out.trim().split("\n").at(-1) ?? "";
      const results = JSON.parse(line) as Record<string, string>;
      expect(Object.keys(results)).toEqual(CASES);
      expect(results).toEqual(Object.fromEntries(CASES.map((c) => [c, c === "path" ? rt.path : "ok"])));
    });
  }
});
