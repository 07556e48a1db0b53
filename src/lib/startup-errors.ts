// First start explains itself: the errors an operator meets when starting the service or the
// CLI (database unreachable or missing, malformed DATABASE_URL, DATA_DIR unwritable or in use,
// port in use) become one line saying what is wrong and how to fix it. Never a stack trace,
// never the DATABASE_URL password.
import { DataDirLockedError, DataDirUnusableError } from "../../db/lock";

const UNREACHABLE = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "ETIMEDOUT", "CONNECT_TIMEOUT", "ECONNRESET", "EPIPE"]);

/** Where a DATABASE_URL points, without its credentials. */
function target(databaseUrl: string | null): { where: string; database: string } {
  try {
    const u = new URL(databaseUrl ?? "");
    return { where: `${u.hostname || "localhost"}:${u.port || "5432"}`, database: decodeURIComponent(u.pathname.replace(/^\//, "")) || "(default)" };
  } catch {
    return { where: "the configured host", database: "(see DATABASE_URL)" };
  }
}

/**
 * One line for a known start-up failure, or null for anything else (a bug: the caller prints it
 * as one line too, with the stack only at LOG_LEVEL=debug).
 * `who` says what holds the lock in the hint: "service" or "cli".
 */
export function explainStartupError(err: unknown, ctx: { databaseUrl: string | null; port?: number; who: "service" | "cli" }): string | null {
  if (err instanceof DataDirLockedError) {
    return ctx.who === "cli"
      ? `${err.message}. Stop it first, or make this change through the running service's admin API (/admin/...); the CLI never writes under a running service`
      : `${err.message}. Stop it first (on a restart, wait until the old process has exited), or give this instance its own DATA_DIR; to run several instances, use PostgreSQL (DATABASE_URL)`;
  }
  if (err instanceof DataDirUnusableError) return err.message;
  const e = err as { code?: unknown; message?: unknown; name?: unknown; syscall?: unknown };
  const code = typeof e?.code === "string" ? e.code : "";
  const message = typeof e?.message === "string" ? e.message : String(err);
  if (code === "EADDRINUSE" && ctx.port !== undefined) return `PORT ${ctx.port} is in use by another process (another instance of this service?): stop it, or set PORT to a free port`;
  if (code === "EACCES" && e.syscall === "listen" && ctx.port !== undefined) return `PORT ${ctx.port} may not be opened by this user: use a port above 1023, or grant the permission`;
  if (!ctx.databaseUrl?.startsWith("postgres")) return null;
  const { where, database } = target(ctx.databaseUrl);
  if (code === "ERR_INVALID_URL" || e?.name === "URIError" || err instanceof URIError)
    return `DATABASE_URL is malformed (${message}): write it as postgres://user:password@host:5432/database, with special characters in the user and password percent-encoded`;
  if (UNREACHABLE.has(code)) return `cannot reach the PostgreSQL server at ${where} (${code}): start it, or fix the host and port in DATABASE_URL`;
  if (code === "3D000")
    return `database "${database}" does not exist on the PostgreSQL server at ${where}: create it (createdb ${database}, or CREATE DATABASE ${database}), or fix the database name in DATABASE_URL`;
  if (code === "28000" || code === "28P01") return `the PostgreSQL server at ${where} refused the login (${message}): fix the user and password in DATABASE_URL`;
  if (code === "42501") return `the PostgreSQL user in DATABASE_URL lacks a privilege the migrations need (${message}): grant it (e.g. make the user own database "${database}")`;
  if (/TLS|SSL/i.test(message)) return `cannot open a TLS connection to the PostgreSQL server at ${where} (${message}): check sslmode in DATABASE_URL and the server's TLS settings`;
  return null;
}
