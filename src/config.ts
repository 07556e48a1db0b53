// The only reader of the environment. Every problem is listed at once, at start-up.

export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

export type Config = ReturnType<typeof loadConfig>;

/** Marks a default docs/configuration.md describes in words (computed, generated or absent), not a value. */
const described = (text: string) => ({ described: text }) as const;

/**
 * Every variable with its default and meaning, declared once: loadConfig reads its defaults here
 * and ENV_DOCS (which the table of docs/configuration.md mirrors) is made from it.
 */
const VARIABLES = [
  ["PORT", 3000, "HTTP port"],
  ["HOST", "0.0.0.0", "interface to listen on"],
  ["PUBLIC_URL", described("http://localhost:$PORT"), "public origin of this service (OAuth issuer, MCP resource); no trailing slash"],
  ["DATABASE_URL", described("(unset)"), "postgres://… uses PostgreSQL through postgres.js; unset uses embedded PGlite in DATA_DIR; memory:// for an in-memory PGlite"],
  ["DATA_DIR", "./data", "embedded database and generated secret key file"],
  ["SECRET_KEYS", described("(generated key file)"), "comma-separated key ring for sealing provider keys, `id:base64key` each (32-byte keys), first = current"],
  ["ADMIN_EMAIL", described("(generated)"), "owner user created on first start"],
  ["ADMIN_PASSWORD", described("(generated, printed once)"), "owner password on first start"],
  ["ADMIN_TOKEN", described("(generated, printed once)"), "root admin key (32 to 512 characters) stored hashed on first start"],
  ["AI_ALLOW_PRIVATE_URLS", false, "allow http and private addresses as AI provider base_url (self-hosted models)"],
  ["AI_TIMEOUT_MS", 60_000, "timeout of one AI vendor call"],
  ["AI_MAX_RESPONSE_BYTES", 2 * 1024 * 1024, "largest AI vendor response read"],
  ["AI_MAX_CONCURRENT_PER_PROJECT", 4, "concurrent translate calls per project (per instance)"],
  [
    "ADMIN_ALLOWED_ORIGINS",
    described("(PUBLIC_URL origin)"),
    "comma-separated Origins whose browser pages may call the admin API (CORS), others get none; `*` would let any page holding a key read the answers",
  ],
  ["MCP_ALLOWED_ORIGINS", described("(PUBLIC_URL origin)"), "comma-separated Origins allowed on /mcp; requests without Origin are allowed"],
  [
    "MCP_ALLOWED_HOSTS",
    described("(none)"),
    "comma-separated extra Host header values accepted on /mcp (DNS-rebinding check); the PUBLIC_URL host and localhost/127.0.0.1/[::1] on any port are always accepted",
  ],
  ["LOG_LEVEL", "info", "debug | info | warn | error | silent"],
  ["SEED_DEMO", true, "create the demo project on first start"],
  ["DB_POOL_SIZE", 10, "PostgreSQL connections per instance"],
  [
    "DATABASE_PREPARED_STATEMENTS",
    true,
    "PostgreSQL only: prepare the statements of writes and delivery reads (planned once per connection); false sends every statement unnamed, for pgbouncer before 1.21 in transaction pooling",
  ],
  ["DELIVERY_CACHE_CONTROL", "public, max-age=60, stale-while-revalidate=300", "Cache-Control of delivery answers"],
  ["DELIVERY_ERROR_CACHE_CONTROL", "public, max-age=5", "Cache-Control of delivery error answers (404 included), kept short so a page published now is not held as a 404 by a CDN"],
  ["DELIVERY_CACHE_ENTRIES", 5000, "rendered delivery answers kept in memory per instance"],
  ["DELIVERY_CACHE_MAX_BYTES", 64 * 1024 * 1024, "total size of the cached delivery answers per instance (one answer may use up to an eighth of it)"],
  ["DELIVERY_STALE_IF_ERROR", 86_400, "seconds a CDN may serve a delivery answer it holds while this service fails (`stale-if-error` added to both Cache-Controls above); 0 = not added"],
  ["DELIVERY_STALE_ENTRIES", 5000, "superseded delivery answers kept per instance to be served, marked stale, while the database is down (0 = none)"],
  ["DELIVERY_STALE_MAX_BYTES", 64 * 1024 * 1024, "total size of those stale answers per instance"],
  ["DELIVERY_STORED_ANSWERS", true, "store node answers in the database when rendered (a miss on any instance reads the stored bytes; writes mark what they change); false renders every miss"],
  ["DELIVERY_VERSION_CHECK_MS", 500, "how often an instance re-reads a project's content version even without a NOTIFY (the safety net bounding staleness)"],
  ["OAUTH_ACCESS_TOKEN_TTL", 3600, "OAuth access token lifetime, seconds"],
  ["OAUTH_REFRESH_TOKEN_TTL", 30 * 86_400, "OAuth refresh token lifetime, seconds"],
  [
    "OAUTH_REFRESH_FAMILY_TTL",
    90 * 86_400,
    "absolute lifetime of an OAuth authorization, seconds from the user's consent: no refresh past it, however fresh the refresh token (the user authorizes again)",
  ],
  ["OAUTH_REGISTER_RATE_LIMIT", 20, "OAuth client registrations per client address per hour"],
  ["OAUTH_TOKEN_RATE_LIMIT", 60, "OAuth token requests per client and address per minute"],
  ["OAUTH_SIGNIN_RATE_LIMIT", 10, "sign-in attempts (studio, consent and approval pages) per client address per 15 minutes"],
  ["STUDIO_SESSION_IDLE_TIMEOUT", 12 * 3600, "seconds a studio session lasts without a request before it ends"],
  ["STUDIO_SESSION_MAX_AGE", 7 * 86_400, "seconds a studio session lasts from sign-in, however busy (the person signs in again)"],
  ["OAUTH_CLIENT_METADATA_DOCUMENTS", true, "accept https URLs as OAuth client_id and fetch the client's metadata document (set false without outbound internet access)"],
  ["TRUST_PROXY", false, "take the client address from the last X-Forwarded-For entry (set behind one reverse proxy)"],
  ["SHUTDOWN_GRACE_MS", 10_000, "how long SIGTERM waits for in-flight requests"],
  ["OAUTH_REFRESH_REUSE_GRACE", 0, "seconds a rotated refresh token may be presented again for a sibling pair (clients refreshing in parallel); 0 = strict single use"],
  ["OAUTH_REQUIRE_RESOURCE", true, "authorization requests must name the MCP resource (RFC 8707); false gives clients that omit it a token for /mcp"],
  ["ADMIN_AUTH_FAILURE_LIMIT", 30, "failed admin-key authentications per client address per minute (per instance) before 429"],
  ["INSTANCE_NAME", "Content service", "name of this service on the OAuth sign-in and consent pages (with the PUBLIC_URL host)"],
  [
    "HTTP_IDLE_TIMEOUT",
    10,
    "seconds a connection may stay silent, and a request may take to send its body, before it is closed (headers must arrive within about 10 s whatever this says); a handler that is working is not cut",
  ],
  ["REVISIONS_PER_NODE", 100, "revisions kept per node (the newest is always kept); older ones are pruned by the housekeeping (at start, then hourly)"],
  ["REVISIONS_MAX_AGE_DAYS", 90, "revisions older than this many days are pruned (a node's newest revision is always kept)"],
  [
    "SCHEDULER_INTERVAL_MS",
    1000,
    "how often each instance looks for due publish_at / unpublish_at schedules (a schedule fires within about this long of its time); 0 = this instance never fires them",
  ],
  ["PREVIEW_TOKEN_MAX_TTL", 7 * 86_400, "longest lifetime of a preview token, seconds (the default lifetime is an hour, or this when shorter)"],
  ["TRASH_RETENTION_DAYS", 30, "days a deleted node stays in the trash, restorable; its revisions are pruned after"],
  ["WEBHOOKS_ALLOW_PRIVATE_URLS", false, "allow http and private or loopback addresses as webhook URLs (local receivers, tests); link-local and cloud metadata addresses stay refused"],
  ["WEBHOOKS_TIMEOUT_MS", 15_000, "timeout of one webhook attempt (connection, headers and body)"],
  ["WEBHOOKS_MAX_RESPONSE_BYTES", 64 * 1024, "largest receiver response read (the rest is dropped, the attempt still counts by its status)"],
  ["WEBHOOKS_RETRY_SCHEDULE", "0,5s,5m,30m,2h,5h,10h,10h", "delay before each attempt of an event (ms, s, m, h suffixes; a little jitter added); its length is the number of attempts"],
  ["WEBHOOKS_DISABLE_AFTER", 5 * 86_400, "seconds an endpoint may fail every attempt before it is disabled (its read says so; PATCH status active re-enables it)"],
  ["WEBHOOKS_SECRET_GRACE", 86_400, "seconds the previous secret still signs (beside the new one) after a rotation"],
  ["WEBHOOKS_POLL_MS", 1000, "how often the dispatcher looks for due attempts without a NOTIFY (the safety net; retries falling due)"],
  ["WEBHOOKS_CONCURRENCY", 8, "webhook attempts in flight per instance (one at a time per endpoint, in event order)"],
  [
    "WEBHOOKS_PROJECT_CONCURRENCY",
    4,
    "webhook attempts in flight per project per instance (at most WEBHOOKS_CONCURRENCY): a project whose receivers stall holds no more; a free slot goes to the project with the fewest in flight",
  ],
  ["WEBHOOKS_MAX_ENDPOINTS", 10, "webhook endpoints per project (each event is one request per endpoint); creating one more is 409 conflict"],
  ["WEBHOOKS_DISPATCH", true, "run the webhook dispatcher in this instance (several instances share the outbox)"],
  ["TRANSLATION_JOB_LEASE", 30, "seconds a worker holds a translation job without renewing its lease (it renews before every vendor call); past it another instance resumes the job"],
  ["APPROVAL_TTL", 86_400, "seconds an approval request (an MCP caller without content:publish asking to publish or delete) waits for a person's decision, and an approval for the agent's retry"],
  ["MEDIA_STORAGE", "disk", "where media bytes live: disk (DATA_DIR/media) or s3 (the MEDIA_S3_* settings)"],
  ["MEDIA_MAX_BYTES", 25 * 1024 * 1024, "largest media upload, bytes"],
  ["MEDIA_UPLOADS_IN_FLIGHT", 4, "uploads received at once per instance (each streamed to a temporary file, then checked in memory); one project takes at most half; past it 429 with Retry-After"],
  ["MEDIA_MAX_PIXELS", 100_000_000, "largest image accepted, width × height (read from the header, before decoding: decompression bombs are refused)"],
  ["MEDIA_QUOTA_BYTES", 10 * 1024 ** 3, "media storage per project, bytes (a project's media_quota_bytes setting overrides it)"],
  ["MEDIA_TYPES", "image/jpeg,image/png,image/webp,image/avif,image/gif,image/svg+xml,application/pdf", "comma-separated media types accepted (sniffed from the bytes)"],
  ["MEDIA_WIDTHS", "320,640,800,1024,1280,1600,1920,2560", "comma-separated widths (and heights) delivery renders variants at; any other is refused"],
  ["MEDIA_RENDER_CONCURRENCY", 0, "image variants rendered at once per instance (0: half the cores, at least 1); an upload's image work is not held behind them"],
  ["MEDIA_RENDER_QUEUE", 16, "variant renders waiting per instance (one project at most half of them); past it 503 with Retry-After"],
  [
    "MEDIA_RENDER_RATE",
    60,
    "variant renders one client address may start per minute per instance (stored variants are not counted; behind a proxy or CDN set TRUST_PROXY); past it 429 with Retry-After",
  ],
  ["MEDIA_VARIANTS", "on-demand", "on-demand: any variant of MEDIA_WIDTHS is rendered when first asked for; strict: only MEDIA_VARIANT_SET, rendered after each upload, any other refused (400)"],
  [
    "MEDIA_VARIANT_SET",
    described("(each width of MEDIA_WIDTHS with fm=auto)"),
    "the variants of MEDIA_VARIANTS=strict: query strings separated by spaces, e.g. w=640&fm=auto w=320&h=320&fit=cover&fm=webp",
  ],
  [
    "MEDIA_ALLOW_PRIVATE_URLS",
    false,
    "allow http and private or loopback addresses in upload-from-URL (an intranet's files, tests); link-local and cloud metadata addresses stay refused; AI_ALLOW_PRIVATE_URLS does not open it",
  ],
  ["MEDIA_FETCH_TIMEOUT_MS", 30_000, "how long an upload from a URL may take to answer and send the whole file"],
  ["MEDIA_S3_ENDPOINT", described("(unset)"), "S3 endpoint URL, e.g. https://s3.eu-west-1.amazonaws.com, https://<account>.r2.cloudflarestorage.com, http://minio:9000"],
  ["MEDIA_S3_BUCKET", described("(unset)"), "S3 bucket"],
  ["MEDIA_S3_REGION", "auto", "S3 region signed for (us-east-1 for MinIO and most, auto for R2)"],
  ["MEDIA_S3_ACCESS_KEY_ID", described("(unset)"), "S3 access key id"],
  ["MEDIA_S3_SECRET_ACCESS_KEY", described("(unset)"), "S3 secret access key"],
  ["MEDIA_S3_PREFIX", "", "key prefix inside the bucket, e.g. cms/"],
] as const;

type Variable = (typeof VARIABLES)[number];
type NameOf<T> = Extract<Variable, readonly [string, T, string]>[0];
const DEFAULT = Object.fromEntries(VARIABLES.map(([name, def]) => [name, def])) as { [V in Variable as V[0]]: V[1] };

export const ENV_DOCS: ReadonlyArray<readonly [name: string, def: string, meaning: string]> = VARIABLES.map(([name, def, meaning]) => [
  name,
  typeof def === "object" ? def.described : String(def),
  meaning,
]);

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n- ${problems.join("\n- ")}`);
  }
}

/** Reads the environment's variables, collecting every problem instead of stopping at the first. */
class EnvReader {
  readonly problems: string[] = [];

  constructor(private readonly env: Record<string, string | undefined>) {}

  str(name: string): string | null {
    return this.env[name]?.trim() || null;
  }

  // The defaults pass these checks themselves.
  int(name: NameOf<number>, min: number, max: number): number {
    const n = Number(this.str(name) ?? DEFAULT[name]);
    if (Number.isInteger(n) && n >= min && n <= max) return n;
    this.problems.push(`${name} must be an integer between ${min} and ${max}`);
    return DEFAULT[name];
  }

  bool(name: NameOf<boolean>): boolean {
    const v = this.str(name) ?? String(DEFAULT[name]);
    if (/^(true|1|yes)$/i.test(v)) return true;
    if (/^(false|0|no)$/i.test(v)) return false;
    this.problems.push(`${name} must be true or false`);
    return DEFAULT[name];
  }

  text(name: NameOf<string>): string {
    return this.str(name) ?? DEFAULT[name];
  }

  list(name: string, normalize = (s: string) => s): readonly string[] | null {
    return (
      this.str(name)
        ?.split(",")
        .map((s) => normalize(s.trim()))
        .filter(Boolean) ?? null
    );
  }

  /** A comma-separated list of durations (`250ms`, `5s`, `5m`, `2h`; a bare number is ms). */
  durations(name: NameOf<string>): readonly number[] {
    const parts = this.text(name)
      .split(",")
      .map((p) => /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(p));
    if (parts.length > 0 && parts.length <= 50 && parts.every((m) => m !== null)) return parts.map((m) => Math.round(Number(m?.[1]) * (DURATION_UNIT[m?.[2] ?? "ms"] ?? 1)));
    this.problems.push(`${name} must be 1 to 50 comma-separated durations such as 0,5s,5m,2h`);
    return [0];
  }
}

const DURATION_UNIT: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Every setting, checked in the order the start-up error lists its problems: the service's own
 * (address, database, secrets, first-start owner, origins, logging), then each feature's.
 */
export function loadConfig(env: Record<string, string | undefined>) {
  const r = new EnvReader(env);
  const config = {
    ...serviceSettings(r),
    ...aiSettings(r),
    seedDemo: r.bool("SEED_DEMO"),
    dbPoolSize: r.int("DB_POOL_SIZE", 1, 500),
    /** Named (prepared) statements on PostgreSQL; the embedded database ignores it. */
    databasePreparedStatements: r.bool("DATABASE_PREPARED_STATEMENTS"),
    ...deliverySettings(r),
    ...oauthSettings(r),
    trustProxy: r.bool("TRUST_PROXY"),
    shutdownGraceMs: r.int("SHUTDOWN_GRACE_MS", 0, 300_000),
    adminAuthFailureLimit: r.int("ADMIN_AUTH_FAILURE_LIMIT", 1, 1_000_000),
    oauthRefreshReuseGraceSeconds: r.int("OAUTH_REFRESH_REUSE_GRACE", 0, 300),
    oauthRequireResource: r.bool("OAUTH_REQUIRE_RESOURCE"),
    /** Shown on the OAuth pages with the PUBLIC_URL host. */
    instanceName: r.text("INSTANCE_NAME").slice(0, 100),
    httpIdleTimeoutSeconds: r.int("HTTP_IDLE_TIMEOUT", 1, 255),
    revisionsPerNode: r.int("REVISIONS_PER_NODE", 1, 1_000_000),
    revisionsMaxAgeDays: r.int("REVISIONS_MAX_AGE_DAYS", 1, 100 * 365),
    trashRetentionDays: r.int("TRASH_RETENTION_DAYS", 1, 100 * 365),
    ...webhookSettings(r),
    schedulerIntervalMs: r.int("SCHEDULER_INTERVAL_MS", 0, 60_000),
    previewTokenMaxTtlSeconds: r.int("PREVIEW_TOKEN_MAX_TTL", 60, 7 * 86_400),
    approvalTtlSeconds: r.int("APPROVAL_TTL", 1, 30 * 86_400),
    translationJobLeaseSeconds: r.int("TRANSLATION_JOB_LEASE", 1, 3600),
    media: mediaConfig(r),
  };
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return Object.freeze(config);
}

/** Where the service listens and who it is, its database, secrets, first-start owner, callers' origins and logging. */
function serviceSettings(r: EnvReader) {
  const port = r.int("PORT", 0, 65535);
  const { publicUrl, publicOrigin } = publicUrlOf(r, port);
  const databaseUrl = r.str("DATABASE_URL");
  if (databaseUrl && !/^(postgres(ql)?:\/\/|memory:\/\/)/.test(databaseUrl)) r.problems.push("DATABASE_URL must start with postgres:// or memory://");
  const secretKeys = secretKeysOf(r);
  const admin = firstOwnerOf(r);
  const logLevel = r.text("LOG_LEVEL").toLowerCase();
  if (!["debug", "info", "warn", "error", "silent"].includes(logLevel)) r.problems.push("LOG_LEVEL must be debug, info, warn, error or silent");
  return {
    port,
    host: r.text("HOST"),
    publicUrl,
    /** PUBLIC_URL's origin: what a browser sends as Origin from this service's own pages. */
    publicOrigin,
    databaseUrl,
    dataDir: r.text("DATA_DIR"),
    secretKeys,
    ...admin,
    adminAllowedOrigins: r.list("ADMIN_ALLOWED_ORIGINS", (s) => s.replace(/\/+$/, "")) ?? [publicOrigin],
    mcpAllowedOrigins: r.list("MCP_ALLOWED_ORIGINS", (s) => s.replace(/\/+$/, "")) ?? [publicOrigin],
    /** Extra Host values /mcp accepts besides the PUBLIC_URL host and loopback names. */
    mcpAllowedHosts: r.list("MCP_ALLOWED_HOSTS", (s) => s.toLowerCase()) ?? [],
    logLevel: logLevel as LogLevel,
  };
}

function publicUrlOf(r: EnvReader, port: number): { publicUrl: string; publicOrigin: string } {
  const publicUrl = r.str("PUBLIC_URL") ?? `http://localhost:${port}`;
  try {
    const u = new URL(publicUrl);
    if (u.protocol !== "http:" && u.protocol !== "https:") r.problems.push("PUBLIC_URL must be http(s)");
    // Canonical form (lower-case host, no default port, no trailing slash): it is the OAuth issuer
    // and the MCP resource, which clients compare as strings.
    return { publicUrl: (u.origin + u.pathname).replace(/\/+$/, ""), publicOrigin: u.origin };
  } catch {
    r.problems.push("PUBLIC_URL must be an absolute URL");
    return { publicUrl, publicOrigin: "" };
  }
}

function secretKeysOf(r: EnvReader): readonly string[] | null {
  const ring = r.list("SECRET_KEYS");
  for (const k of ring ?? []) {
    const m = /^([A-Za-z0-9_-]{1,32}):([A-Za-z0-9+/=_-]+)$/.exec(k);
    if (!m?.[2] || base64Length(m[2]) !== 32) r.problems.push("SECRET_KEYS entries must be id:base64 of 32 bytes");
  }
  return ring;
}

/** The owner and root key created on first start, when the environment provides them. */
function firstOwnerOf(r: EnvReader): { adminEmail: string | null; adminPassword: string | null; adminToken: string | null } {
  const adminToken = r.str("ADMIN_TOKEN");
  // A bearer longer than 512 characters is refused before it is looked up (src/auth.ts).
  if (adminToken !== null && (adminToken.length < 32 || adminToken.length > 512)) r.problems.push("ADMIN_TOKEN must be 32 to 512 characters");
  const adminEmail = r.str("ADMIN_EMAIL");
  if (adminEmail !== null && !/^[^@\s]+@[^@\s]+$/.test(adminEmail)) r.problems.push("ADMIN_EMAIL must be an email address");
  const adminPassword = r.str("ADMIN_PASSWORD");
  if (adminPassword !== null && adminPassword.length < 12) r.problems.push("ADMIN_PASSWORD must be at least 12 characters");
  return { adminEmail, adminPassword, adminToken };
}

function aiSettings(r: EnvReader) {
  return {
    aiAllowPrivateUrls: r.bool("AI_ALLOW_PRIVATE_URLS"),
    aiTimeoutMs: r.int("AI_TIMEOUT_MS", 1, 600_000),
    aiMaxResponseBytes: r.int("AI_MAX_RESPONSE_BYTES", 1024, 64 * 1024 * 1024),
    aiMaxConcurrentPerProject: r.int("AI_MAX_CONCURRENT_PER_PROJECT", 1, 1000),
  };
}

function deliverySettings(r: EnvReader) {
  return {
    deliveryCacheControl: r.text("DELIVERY_CACHE_CONTROL"),
    deliveryErrorCacheControl: r.text("DELIVERY_ERROR_CACHE_CONTROL"),
    deliveryCacheEntries: r.int("DELIVERY_CACHE_ENTRIES", 0, 10_000_000),
    deliveryCacheMaxBytes: r.int("DELIVERY_CACHE_MAX_BYTES", 0, 2 ** 40),
    deliveryStaleIfErrorSeconds: r.int("DELIVERY_STALE_IF_ERROR", 0, 10 * 365 * 86_400),
    deliveryStaleEntries: r.int("DELIVERY_STALE_ENTRIES", 0, 10_000_000),
    deliveryStaleMaxBytes: r.int("DELIVERY_STALE_MAX_BYTES", 0, 2 ** 40),
    deliveryVersionCheckMs: r.int("DELIVERY_VERSION_CHECK_MS", 0, 60_000),
    deliveryStoredAnswers: r.bool("DELIVERY_STORED_ANSWERS"),
  };
}

function oauthSettings(r: EnvReader) {
  return {
    oauthAccessTokenTtlSeconds: r.int("OAUTH_ACCESS_TOKEN_TTL", 60, 86_400),
    oauthRefreshTokenTtlSeconds: r.int("OAUTH_REFRESH_TOKEN_TTL", 300, 365 * 86_400),
    oauthRefreshFamilyTtlSeconds: r.int("OAUTH_REFRESH_FAMILY_TTL", 3600, 10 * 365 * 86_400),
    oauthRegisterRateLimit: r.int("OAUTH_REGISTER_RATE_LIMIT", 1, 1_000_000),
    oauthTokenRateLimit: r.int("OAUTH_TOKEN_RATE_LIMIT", 1, 1_000_000),
    oauthSignInRateLimit: r.int("OAUTH_SIGNIN_RATE_LIMIT", 1, 1_000_000),
    oauthClientMetadataDocuments: r.bool("OAUTH_CLIENT_METADATA_DOCUMENTS"),
    studioSessionIdleSeconds: r.int("STUDIO_SESSION_IDLE_TIMEOUT", 60, 30 * 86_400),
    studioSessionMaxAgeSeconds: r.int("STUDIO_SESSION_MAX_AGE", 300, 365 * 86_400),
  };
}

function webhookSettings(r: EnvReader) {
  return {
    webhooksAllowPrivateUrls: r.bool("WEBHOOKS_ALLOW_PRIVATE_URLS"),
    webhooksTimeoutMs: r.int("WEBHOOKS_TIMEOUT_MS", 1, 600_000),
    webhooksMaxResponseBytes: r.int("WEBHOOKS_MAX_RESPONSE_BYTES", 0, 64 * 1024 * 1024),
    /** Delay (ms) before attempt n+1 of an event; its length is the number of attempts. */
    webhooksRetrySchedule: r.durations("WEBHOOKS_RETRY_SCHEDULE"),
    webhooksDisableAfterSeconds: r.int("WEBHOOKS_DISABLE_AFTER", 1, 365 * 86_400),
    webhooksSecretGraceSeconds: r.int("WEBHOOKS_SECRET_GRACE", 0, 30 * 86_400),
    webhooksPollMs: r.int("WEBHOOKS_POLL_MS", 10, 600_000),
    webhooksConcurrency: r.int("WEBHOOKS_CONCURRENCY", 1, 1000),
    webhooksProjectConcurrency: r.int("WEBHOOKS_PROJECT_CONCURRENCY", 1, 1000),
    webhooksMaxEndpoints: r.int("WEBHOOKS_MAX_ENDPOINTS", 1, 1000),
    webhooksDispatch: r.bool("WEBHOOKS_DISPATCH"),
  };
}

/** The media library's settings: limits, accepted types, variant widths, storage. */
function mediaConfig(r: EnvReader) {
  const storage = r.text("MEDIA_STORAGE");
  if (storage !== "disk" && storage !== "s3") r.problems.push("MEDIA_STORAGE must be disk or s3");
  const widths = r
    .text("MEDIA_WIDTHS")
    .split(",")
    .map((w) => Number(w.trim()));
  if (widths.length === 0 || widths.some((w) => !Number.isInteger(w) || w < 1 || w > 8192)) r.problems.push("MEDIA_WIDTHS must be comma-separated integers from 1 to 8192");
  const types = r
    .text("MEDIA_TYPES")
    .split(",")
    .map((t) => t.trim().toLowerCase())
    .filter(Boolean);
  const s3 = storage === "s3" ? s3Config(r) : null;
  const sorted = [...new Set(widths)].sort((a, b) => a - b);
  return {
    storage: storage as "disk" | "s3",
    maxBytes: r.int("MEDIA_MAX_BYTES", 1, 2 ** 40),
    uploadsInFlight: r.int("MEDIA_UPLOADS_IN_FLIGHT", 1, 1024),
    maxPixels: r.int("MEDIA_MAX_PIXELS", 1, 2 ** 40),
    quotaBytes: r.int("MEDIA_QUOTA_BYTES", 0, 2 ** 50),
    allowPrivateUrls: r.bool("MEDIA_ALLOW_PRIVATE_URLS"),
    fetchTimeoutMs: r.int("MEDIA_FETCH_TIMEOUT_MS", 1, 600_000),
    types,
    widths: sorted,
    s3,
    ...renderConfig(r, sorted),
  };
}

/** How variants are rendered: how many at once, how many waiting, how often per client, and which (MEDIA_VARIANTS). */
function renderConfig(r: EnvReader, widths: readonly number[]) {
  const mode = r.text("MEDIA_VARIANTS");
  if (mode !== "on-demand" && mode !== "strict") r.problems.push("MEDIA_VARIANTS must be on-demand or strict");
  const set = (r.str("MEDIA_VARIANT_SET") ?? widths.map((w) => `w=${w}&fm=auto`).join(" ")).split(/\s+/).filter(Boolean);
  for (const entry of set) if (!/^[a-z]+=[a-z0-9]+(&[a-z]+=[a-z0-9]+)*$/.test(entry)) r.problems.push(`MEDIA_VARIANT_SET: "${entry}" is not a query string such as w=640&fm=auto`);
  const concurrency = r.int("MEDIA_RENDER_CONCURRENCY", 0, 256);
  return {
    renderConcurrency: concurrency === 0 ? Math.max(1, Math.floor((globalThis.navigator?.hardwareConcurrency ?? 2) / 2)) : concurrency,
    renderQueue: r.int("MEDIA_RENDER_QUEUE", 0, 100_000),
    renderRate: r.int("MEDIA_RENDER_RATE", 1, 1_000_000),
    variants: mode as "on-demand" | "strict",
    variantSet: set,
    // The widths delivery's srcset lists: under strict, those the set serves as w=N&fm=auto.
    srcsetWidths: mode === "strict" ? widths.filter((w) => set.includes(`w=${w}&fm=auto`)) : widths,
  };
}

/** The S3 bucket media bytes live in (MEDIA_STORAGE=s3). */
function s3Config(r: EnvReader): { endpoint: string; bucket: string; region: string; accessKeyId: string; secretAccessKey: string; prefix: string } {
  const endpoint = r.str("MEDIA_S3_ENDPOINT");
  const bucket = r.str("MEDIA_S3_BUCKET");
  const accessKeyId = r.str("MEDIA_S3_ACCESS_KEY_ID");
  const secretAccessKey = r.str("MEDIA_S3_SECRET_ACCESS_KEY");
  if (!endpoint || !/^https?:\/\//.test(endpoint)) r.problems.push("MEDIA_S3_ENDPOINT must be an http(s) URL when MEDIA_STORAGE=s3");
  if (!bucket) r.problems.push("MEDIA_S3_BUCKET is required when MEDIA_STORAGE=s3");
  if (!accessKeyId || !secretAccessKey) r.problems.push("MEDIA_S3_ACCESS_KEY_ID and MEDIA_S3_SECRET_ACCESS_KEY are required when MEDIA_STORAGE=s3");
  return {
    endpoint: (endpoint ?? "").replace(/\/+$/, ""),
    bucket: bucket ?? "",
    region: r.text("MEDIA_S3_REGION"),
    accessKeyId: accessKeyId ?? "",
    secretAccessKey: secretAccessKey ?? "",
    prefix: r.text("MEDIA_S3_PREFIX"),
  };
}

const base64Length = (s: string): number => Math.floor((s.replace(/=+$/, "").length * 3) / 4);
