import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ENV_DOCS } from "../src/config";

const readme = readFileSync(join(import.meta.dir, "..", "README.md"), "utf8");

test("README's first screen holds the two commands, and its table lists every variable of src/config.ts", () => {
  const firstScreen = readme.split("\n").slice(0, 25).join("\n");
  expect(firstScreen).toContain("npm install && npm start");
  expect(firstScreen).toContain("npm test");
  for (const [name, def] of ENV_DOCS) expect(readme).toContain(`| \`${name}\` | ${def} |`);
});
