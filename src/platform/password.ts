// Password hashing: argon2id PHC strings ($argon2id$v=19$m=65536,t=2,p=1$salt$hash), the same on
// every runtime, so a database moves between them (tests/runtimes-password.test.ts: a hash made on
// each runtime verifies on the other two). Bun: Bun.password (native, its defaults are the
// parameters below). Node and Deno: hash-wasm, argon2 compiled to WebAssembly: no native addon to
// build or to match to a platform (unlike @node-rs/argon2 or argon2), so it loads the same under
// Node, Deno and inside Bun's single binary; slower than native, which only sign-in pays.
import { runtime } from "./runtime";

// Bun.password's argon2id defaults, written out so hash-wasm produces the same kind of hash.
const MEMORY_KIB = 65536;
const ITERATIONS = 2;
const PARALLELISM = 1;
const SALT_BYTES = 32;
const HASH_BYTES = 32;

export async function hashPassword(password: string): Promise<string> {
  if (runtime === "bun") return Bun.password.hash(password, { algorithm: "argon2id", memoryCost: MEMORY_KIB, timeCost: ITERATIONS });
  const { argon2id } = await import("hash-wasm");
  const salt = crypto.getRandomValues(new Uint8Array(SALT_BYTES));
  return argon2id({ password, salt, parallelism: PARALLELISM, iterations: ITERATIONS, memorySize: MEMORY_KIB, hashLength: HASH_BYTES, outputType: "encoded" });
}

/** Whether `password` matches the PHC string `hash`; false (never a throw) for a malformed hash. */
export async function verifyPassword(password: string, hash: string): Promise<boolean> {
  try {
    if (runtime === "bun") return await Bun.password.verify(password, hash);
    const { argon2Verify } = await import("hash-wasm");
    return await argon2Verify({ password, hash });
  } catch {
    return false;
  }
}
