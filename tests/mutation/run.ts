/**
 * Mutation testing, our own small runner: `npm run mutate -- <module> [--jobs N] [--tests a,b]
 * [--only file:line] [--pg]`. It copies the repository to a scratch folder per job, applies one
 * mutation at a time to a module's source (tests/mutation/modules.ts), runs the module's test files
 * that execute the mutated line (bun's line coverage, measured once per test file first), fastest
 * first, with `bun test --bail`, and counts the mutant killed when they fail or time out, survived
 * when they pass. A line no test executes is a survivor without a run (no-coverage). The report goes
 * to stdout and `.mutation/<module>.json`.
 *
 * `--every N` runs a deterministic sample: every N-th mutant in source order (the report says so).
 * `--resume` re-runs only the survivors and no-coverage mutants of the previous `.mutation/<module>.json`;
 * `--continue` runs only the mutants that report lacks (a run stopped early).
 * `--only`, `--resume` and `--continue` merge their results into that report instead of replacing it. `--later a,b`
 * runs those test files after the others: a mutant they kill (killedBy in the report) the others let live.
 *
 * Mutations (one per mutant): a comparison or logical operator swapped (=== ↔ !==, < ↔ <=, > ↔ >=,
 * && ↔ ||, ?? → ||, + ↔ -), a `!` dropped, a condition forced true and false (if, while, ?:), a
 * boolean literal flipped, and an expression statement (a call, an assignment, an await) removed.
 * Calls to the logger are not removed (a log line is not a promise the tests keep).
 *
 * A mutant listed in the module's `equivalent` (modules.ts, keyed "file:line kind", with the reason)
 * is not run: it is reported as equivalent and left out of the score.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseSync } from "oxc-parser";
import { MODULES } from "./modules";

interface Mutant {
  readonly file: string;
  readonly line: number;
  /** 1-based, of the changed text: tells apart mutants of one kind on one line. */
  readonly column?: number;
  readonly start: number;
  readonly end: number;
  readonly original: string;
  readonly replacement: string;
  readonly kind: string;
}
type Status = "killed" | "timeout" | "survived" | "no-coverage" | "equivalent";
interface Result extends Mutant {
  readonly status: Status;
  /** The test file that failed first. */
  readonly killedBy?: string;
  /** Why an equivalent mutant cannot be told apart (modules.ts). */
  readonly reason?: string;
}

const ROOT = resolve(import.meta.dir, "../..");
const SWAPS: Record<string, string[]> = {
  "===": ["!=="],
  "!==": ["==="],
  "==": ["!="],
  "!=": ["=="],
  "<": ["<="],
  "<=": ["<"],
  ">": [">="],
  ">=": [">"],
  "&&": ["||"],
  "||": ["&&"],
  "??": ["||"],
  "+": ["-"],
  "-": ["+"],
};
const SKIP_NODES = new Set(["TSTypeAnnotation", "TSInterfaceDeclaration", "TSTypeAliasDeclaration", "ImportDeclaration", "TSTypeParameterInstantiation", "TSAsExpression_type"]);
const LOGGER = /^(?:this\.)?(?:deps\.)?(?:log|logger|console)\.|^log\(/;

type Node = { type: string; start: number; end: number; [k: string]: unknown };
const isNode = (v: unknown): v is Node => typeof v === "object" && v !== null && typeof (v as Node).type === "string";

/** Every mutant of one file's source. */
export function mutantsOf(file: string, code: string): Mutant[] {
  const out: Mutant[] = [];
  const lineOf = (offset: number) => code.slice(0, offset).split("\n").length;
  const columnOf = (offset: number) => offset - code.lastIndexOf("\n", offset - 1);
  const add = (kind: string, start: number, end: number, replacement: string) =>
    out.push({ file, line: lineOf(start), column: columnOf(start), start, end, original: code.slice(start, end), replacement, kind });
  const visit = (node: Node) => {
    if (SKIP_NODES.has(node.type)) return;
    mutateNode(node, code, add);
    for (const [key, value] of Object.entries(node)) {
      if (key === "typeAnnotation" || key === "returnType" || key === "typeArguments" || key === "typeParameters") continue;
      if (Array.isArray(value)) for (const v of value) isNode(v) && visit(v);
      else if (isNode(value)) visit(value);
    }
  };
  const parsed = parseSync(file, code);
  if (parsed.errors.length > 0) throw new Error(`${file}: ${parsed.errors[0]?.message}`);
  visit(parsed.program as unknown as Node);
  return out;
}

function mutateNode(node: Node, code: string, add: (kind: string, start: number, end: number, replacement: string) => void): void {
  switch (node.type) {
    case "BinaryExpression":
    case "LogicalExpression": {
      const left = node.left as Node;
      const right = node.right as Node;
      const op = node.operator as string;
      const between = code.slice(left.end, right.start);
      const at = between.indexOf(op);
      if (at < 0) return;
      for (const to of SWAPS[op] ?? []) add(`${op} → ${to}`, left.end + at, left.end + at + op.length, to);
      return;
    }
    case "UnaryExpression":
      if (node.operator === "!") add("! dropped", node.start, node.end, `(${code.slice((node.argument as Node).start, (node.argument as Node).end)})`);
      return;
    case "IfStatement":
    case "WhileStatement":
    case "ConditionalExpression": {
      const test = node.test as Node;
      add("condition → true", test.start, test.end, "true");
      add("condition → false", test.start, test.end, "false");
      return;
    }
    case "Literal":
      if (typeof node.value === "boolean") add(`${node.value} → ${!node.value}`, node.start, node.end, String(!node.value));
      return;
    case "ExpressionStatement": {
      const e = node.expression as Node;
      if (node.directive) return;
      const text = code.slice(e.start, e.end).replace(/^await\s+/, "");
      if (LOGGER.test(text)) return;
      if (["CallExpression", "AwaitExpression", "AssignmentExpression", "UpdateExpression", "ChainExpression"].includes(e.type)) add("statement removed", node.start, node.end, ";");
      return;
    }
  }
}

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};

function scratchCopy(tag: string): string {
  const dir = mkdtempSync(join(tmpdir(), `mutate-${tag}-`));
  for (const entry of ["src", "db", "tests", "package.json", "bunfig.toml", "tsconfig.json", "README.md", "docs"]) cpSync(join(ROOT, entry), join(dir, entry), { recursive: true });
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  return dir;
}

interface Run {
  readonly code: number | null;
  readonly timedOut: boolean;
  readonly ms: number;
  /** The test file of the first failure bun reported, if any. */
  readonly failed?: string;
}
function runTests(dir: string, tests: readonly string[], limitMs: number, extra: string[] = []): Promise<Run> {
  const started = Date.now();
  const env = { ...process.env };
  if (!args.includes("--pg")) delete env.DATABASE_URL;
  return new Promise((done) => {
    const child = spawn(process.execPath, ["test", "--bail", "--timeout", "30000", ...extra, ...tests], { cwd: dir, env, stdio: ["ignore", "ignore", "pipe"], detached: true });
    // bun names each test file ("tests/x.test.ts:") before its results: the file of the first (fail).
    let current = "";
    let failed: string | undefined;
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      for (const line of chunk.split("\n")) {
        if (/^tests\/\S+\.test\.ts:$/.test(line)) current = line.slice(0, -1);
        else if (failed === undefined && line.startsWith("(fail)")) failed = current;
      }
    });
    const timer = setTimeout(() => {
      try {
        process.kill(-(child.pid ?? 0), "SIGKILL");
      } catch {}
      done({ code: null, timedOut: true, ms: Date.now() - started });
    }, limitMs);
    child.on("exit", (code) => {
      clearTimeout(timer);
      // The test processes a file spawned are in the same group: end any left behind.
      try {
        process.kill(-(child.pid ?? 0), "SIGKILL");
      } catch {}
      done({ code, timedOut: false, ms: Date.now() - started, failed });
    });
  });
}

/** Which test files execute each line of the module ("file:line" → tests, fastest first), and each test file's time. */
interface Coverage {
  readonly testsOf: Map<string, string[]>;
  readonly ms: Map<string, number>;
}

/**
 * Runs each test file alone under bun's line coverage: it must pass, and it tells which lines it runs.
 * Kept per test file in `.mutation/<module>.coverage.json` and reused while the module's sources and
 * that test file are unchanged (a re-run with `--only`, `--resume` or one more test file starts soon).
 */
async function measure(dir: string, name: string, files: readonly string[], tests: readonly string[]): Promise<Coverage> {
  const digestOf = (test: string) => {
    const hash = createHash("sha256");
    for (const f of [...files, test]) hash.update(`${f}\n${readFileSync(join(ROOT, f), "utf8")}`);
    return hash.digest("hex");
  };
  const path = join(ROOT, ".mutation", `${name}.coverage.json`);
  type Saved = Record<string, { digest: string; ms: number; lines: string[] }>;
  const saved: Saved = existsSync(path) ? JSON.parse(readFileSync(path, "utf8")) : {};
  for (const test of tests) {
    const digest = digestOf(test);
    if (saved[test]?.digest === digest) continue;
    saved[test] = { digest, ...(await measureOne(dir, files, test)) };
    mkdirSync(join(ROOT, ".mutation"), { recursive: true });
    writeFileSync(path, JSON.stringify(saved));
  }
  const testsOf = new Map<string, string[]>();
  const ms = new Map(tests.map((t) => [t, saved[t]?.ms ?? 0]));
  for (const test of tests) for (const line of saved[test]?.lines ?? []) testsOf.set(line, [...(testsOf.get(line) ?? []), test]);
  for (const list of testsOf.values()) list.sort((a, b) => (ms.get(a) ?? 0) - (ms.get(b) ?? 0));
  return { testsOf, ms };
}

/** One test file under coverage: its time and the module's lines ("file:line") it executes. */
async function measureOne(dir: string, files: readonly string[], test: string): Promise<{ ms: number; lines: string[] }> {
  const out = join(dir, ".coverage", test.replaceAll("/", "_"));
  const run = await runTests(dir, [test], 30 * 60_000, ["--coverage", "--coverage-reporter=lcov", `--coverage-dir=${out}`]);
  if (run.code !== 0) throw new Error(`${test} fails without a mutant (exit ${run.code}); fix it first`);
  console.log(`  coverage of ${test}: ${(run.ms / 1000).toFixed(1)} s`);
  const lcov = join(out, "lcov.info");
  if (!existsSync(lcov)) throw new Error(`${test}: bun wrote no coverage`);
  const lines: string[] = [];
  let current: string | null = null;
  for (const line of readFileSync(lcov, "utf8").split("\n")) {
    if (line.startsWith("SF:")) {
      const name = line.slice(3).replace(`${dir}/`, "");
      current = files.includes(name) ? name : null;
    } else if (current && line.startsWith("DA:")) {
      const [n, hits] = line.slice(3).split(",").map(Number);
      if ((hits ?? 0) > 0) lines.push(`${current}:${n}`);
    }
  }
  return { ms: run.ms, lines };
}

async function main(): Promise<void> {
  const name = args[0];
  const mod = name ? MODULES[name] : undefined;
  if (!name || !mod) {
    console.error(
      `usage: npm run mutate -- <${Object.keys(MODULES).join("|")}> [--jobs N] [--tests a.test.ts,b.test.ts] [--only file:line] [--every N] [--resume] [--continue] [--later a.test.ts] [--pg]`,
    );
    process.exit(2);
  }
  const tests = flag("--tests")?.split(",") ?? [...mod.tests];
  const only = flag("--only");
  const jobs = Math.max(1, Number(flag("--jobs") ?? 1));
  const every = Math.max(1, Number(flag("--every") ?? 1));
  let mutants = mod.files.flatMap((f) => mutantsOf(f, readFileSync(join(ROOT, f), "utf8"))).filter((_, i) => i % every === 0);
  if (only) mutants = mutants.filter((m) => `${m.file}:${m.line}` === only || m.file === only);
  const merge = only !== undefined || args.includes("--resume") || args.includes("--continue");
  const equivalent = mod.equivalent ?? {};
  // A survivor of an earlier run since judged equivalent is reported so.
  const previous = (merge ? previousResults(name) : []).map((r): Result => {
    const reason = equivalentReason(equivalent, r);
    return reason !== undefined && r.status !== "killed" && r.status !== "timeout" ? { ...r, status: "equivalent", reason } : r;
  });
  if (args.includes("--resume")) {
    const again = new Set(previous.filter((r) => r.status === "survived" || r.status === "no-coverage").map(keyOf));
    mutants = mutants.filter((m) => again.has(keyOf(m)));
  }
  if (args.includes("--continue")) {
    const done = new Set(previous.map(keyOf));
    mutants = mutants.filter((m) => !done.has(keyOf(m)));
  }
  const dirs = Array.from({ length: jobs }, (_, i) => scratchCopy(`${name}-${i}`));
  try {
    const coverage = await measure(dirs[0] as string, name, mod.files, tests);
    const total = [...coverage.ms.values()].reduce((a, b) => a + b, 0);
    console.log(`${name}: ${mutants.length} mutants, ${tests.length} test files (${(total / 1000).toFixed(1)} s alone, each under coverage)`);
    // Saved after every mutant: a run stopped early leaves the report of what it ran.
    // A survivor the new test files do not even run stays a survivor (not "no coverage").
    const before = new Map(previous.map((r) => [keyOf(r), r]));
    const withPrevious = (results: Result[]) => {
      const ran = new Set(results.map(keyOf));
      const merged = results.map((r) => (r.status === "no-coverage" && before.get(keyOf(r))?.status === "survived" ? (before.get(keyOf(r)) as Result) : r));
      return [...previous.filter((r) => !ran.has(keyOf(r))), ...merged];
    };
    const results = await runAll(mutants, dirs, coverage, equivalent, (partial) => save(name, withPrevious(partial), every));
    report(name, withPrevious(results), every);
  } finally {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

async function runAll(mutants: Mutant[], dirs: string[], coverage: Coverage, equivalent: Record<string, string>, progress: (partial: Result[]) => void): Promise<Result[]> {
  const results: Result[] = [];
  let next = 0;
  const worker = async (dir: string) => {
    while (next < mutants.length) {
      const m = mutants[next++] as Mutant;
      const reason = equivalentReason(equivalent, m);
      results.push(reason === undefined ? { ...m, ...(await runMutant(dir, m, coverage)) } : { ...m, status: "equivalent", reason });
      const r = results[results.length - 1] as Result;
      console.log(`[${results.length}/${mutants.length}] ${r.status.padEnd(11)} ${placeOf(r)}  ${r.kind}  ${JSON.stringify(r.original.slice(0, 60))}${r.killedBy ? `  (${r.killedBy})` : ""}`);
      progress([...results]);
    }
  };
  await Promise.all(dirs.map(worker));
  return results.sort((a, b) => a.file.localeCompare(b.file) || a.start - b.start);
}

/**
 * The reason a mutant is equivalent (modules.ts): keyed "file:line kind", or "file:line:column kind"
 * when one line has two mutants of the same kind and only one is equivalent (the column is the
 * changed text's, as the report prints it).
 */
const equivalentReason = (equivalent: Record<string, string>, m: Mutant): string | undefined =>
  (m.column === undefined ? undefined : equivalent[`${m.file}:${m.line}:${m.column} ${m.kind}`]) ?? equivalent[`${m.file}:${m.line} ${m.kind}`];

/** "file:line:column" (reports written before the column was kept: "file:line"). */
const placeOf = (m: Mutant): string => `${m.file}:${m.line}${m.column === undefined ? "" : `:${m.column}`}`;

const keyOf = (m: Mutant): string => `${m.file}:${m.start}:${m.end}:${m.replacement}`;
function previousResults(name: string): Result[] {
  const path = join(ROOT, ".mutation", `${name}.json`);
  return existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")).results as Result[]) : [];
}

const pristine = new Map<string, string>();
/** One mutant against the test files that run its line, fastest first; none → no coverage, no run. */
/** `--later a,b`: these test files run after the others (what they add to the others' kills shows). */
const later = new Set(flag("--later")?.split(",") ?? []);

async function runMutant(dir: string, m: Mutant, coverage: Coverage): Promise<Pick<Result, "status" | "killedBy">> {
  const rank = (t: string) => (later.has(t) ? 1 : 0);
  const tests = [...(coverage.testsOf.get(`${m.file}:${m.line}`) ?? [])].sort((a, b) => rank(a) - rank(b) || (coverage.ms.get(a) ?? 0) - (coverage.ms.get(b) ?? 0));
  if (tests.length === 0) return { status: "no-coverage" };
  const limitMs = 2 * tests.reduce((sum, t) => sum + (coverage.ms.get(t) ?? 0), 0) + 20_000;
  const path = join(dir, m.file);
  // The scratch copy's own text: the repository may change while a run goes on.
  const code = pristine.get(m.file) ?? readFileSync(path, "utf8");
  pristine.set(m.file, code);
  writeFileSync(path, code.slice(0, m.start) + m.replacement + code.slice(m.end));
  try {
    const run = await runTests(dir, tests, limitMs);
    return run.timedOut ? { status: "timeout" } : run.code === 0 ? { status: "survived" } : { status: "killed", killedBy: run.failed };
  } finally {
    writeFileSync(path, code);
  }
}

/** Killed (or timed out) of the mutants that can be told apart: equivalent ones are left out. */
const score = (all: Result[]) => {
  const rs = all.filter((r) => r.status !== "equivalent");
  const killed = rs.filter((r) => r.status === "killed" || r.status === "timeout").length;
  const noCoverage = rs.filter((r) => r.status === "no-coverage").length;
  return { killed, total: rs.length, equivalent: all.length - rs.length, noCoverage, score: rs.length === 0 ? 100 : Math.round((1000 * killed) / rs.length) / 10 };
};
const perFileOf = (results: Result[]) => Object.fromEntries([...new Set(results.map((r) => r.file))].map((f) => [f, score(results.filter((r) => r.file === f))]));

function save(name: string, unsorted: Result[], every: number): Result[] {
  const results = unsorted.sort((a, b) => a.file.localeCompare(b.file) || a.start - b.start);
  mkdirSync(join(ROOT, ".mutation"), { recursive: true });
  writeFileSync(join(ROOT, ".mutation", `${name}.json`), JSON.stringify({ module: name, every, ...score(results), perFile: perFileOf(results), results }, null, 2));
  return results;
}

function report(name: string, unsorted: Result[], every: number): void {
  const results = save(name, unsorted, every);
  const perFile = perFileOf(results);
  const all = score(results);
  const sample = every > 1 ? `, sample: one mutant in ${every}` : "";
  console.log(`\n${name}: mutation score ${all.score} % (${all.killed} of ${all.total} killed, ${all.noCoverage} without coverage, ${all.equivalent} equivalent left out${sample})`);
  for (const [f, s] of Object.entries(perFile)) console.log(`  ${f}: ${s.score} % (${s.killed}/${s.total}, ${s.noCoverage} without coverage)`);
  const survivors = results.filter((r) => r.status === "survived" || r.status === "no-coverage");
  if (survivors.length > 0) console.log("\nsurvivors:");
  for (const r of survivors) console.log(`  ${placeOf(r)} [${r.status}] ${r.kind}: ${JSON.stringify(r.original.slice(0, 80))} → ${JSON.stringify(r.replacement)}`);
  for (const r of results.filter((x) => x.status === "equivalent")) console.log(`  ${r.file}:${r.line} [equivalent] ${r.kind}: ${r.reason}`);
}

if (import.meta.main) await main();
