import type { LogLevel } from "../config";
import { stdoutSink } from "./log-sink";

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };
// Values of these keys never reach a log line, whatever a caller passes.
const SECRET_KEY_RE = /(authorization|api_?key|token|secret|password|cookie|code_verifier|^code$)/i;

export type Logger = Record<"debug" | "info" | "warn" | "error", (msg: string, fields?: Record<string, unknown>) => void> & {
  /**
   * The access-log line, `info("request", { request_id, method, path, status, ms })` to the byte,
   * built as one string (the hot read's: no object, no key checks; its keys are no secrets).
   * Absent when info lines are not written.
   */
  readonly request?: (requestId: string, method: string, path: string, status: number, ms: number) => void;
};

/** One JSON line per event; by default to stdout, in batches (./log-sink.ts). */
export function createLogger(level: LogLevel, write: (line: string) => void = (l) => stdoutSink().write(l)): Logger {
  const min = ORDER[level];
  const emit = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>): void => {
    if (ORDER[lvl] < min) return;
    const line: Record<string, unknown> = { time: isoNow(), level: lvl, msg };
    if (fields !== undefined) for (const k of Object.keys(fields)) line[k] = isSecretKey(k) ? "[redacted]" : fields[k];
    write(JSON.stringify(line));
  };
  const logger: Logger = {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
  };
  if (ORDER.info < min) return logger;
  const request = (requestId: string, method: string, path: string, status: number, ms: number): void =>
    write(`{"time":"${isoNow()}","level":"info","msg":"request","request_id":${jsonString(requestId)},"method":${jsonString(method)},"path":${jsonString(path)},"status":${status},"ms":${ms}}`);
  return { ...logger, request };
}

// What JSON.stringify would escape (and anything past ASCII): a string without any is quoted as it is.
const NEEDS_ESCAPE = /["\\\u0000-\u001f\u007f-\uffff]/;
const jsonString = (s: string): string => (NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`);

// Per-line costs matter (one access line per request): the key test and the timestamp are memoised.
const secretKeys = new Map<string, boolean>();
function isSecretKey(k: string): boolean {
  let secret = secretKeys.get(k);
  if (secret === undefined) {
    secret = SECRET_KEY_RE.test(k);
    if (secretKeys.size < 1000) secretKeys.set(k, secret);
  }
  return secret;
}

let lastMs = -1;
let lastIso = "";
function isoNow(): string {
  const now = Date.now();
  if (now !== lastMs) {
    lastMs = now;
    lastIso = new Date(now).toISOString();
  }
  return lastIso;
}

export const silentLogger: Logger = createLogger("silent");
