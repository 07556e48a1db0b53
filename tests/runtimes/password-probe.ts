// Run by tests/runtimes-password.test.ts under Bun, Node and Deno. `hash PW` prints a PHC string;
// `verify PW HASH...` prints one true/false per hash.
import { hashPassword, verifyPassword } from "../../src/platform/password";
import { runtime } from "../../src/platform/runtime";

const [command, password = "", ...hashes] = process.argv.slice(2);
if (command === "hash") {
  const started = performance.now();
  const hash = await hashPassword(password);
  console.log(JSON.stringify({ runtime, hash, ms: Math.round(performance.now() - started) }));
} else {
  const results: boolean[] = [];
  for (const h of hashes) results.push(await verifyPassword(password, h));
  console.log(JSON.stringify({ runtime, results }));
}
