import { and, asc, desc, eq, isNotNull, ne, type SQL, sql } from "drizzle-orm";
import type { z } from "zod";
import type { Db } from "../../db/client";
import { aiProviders, aiUsage, type Project, projects } from "../../db/schema";
import type { AppDeps } from "../core/deps";
import { AppError, isUniqueViolation, notFound } from "../errors";
import type { AdminCaller } from "../lib/caller";
import { isUuid, uuidv7 } from "../lib/ids";
import { canonicalLocale } from "../lib/locales";
import { oneRow } from "../lib/rows";
import { SealError, sealedKeyId } from "../lib/seal";
import { Slots } from "../lib/slots";
import { checkOutboundUrl } from "../lib/ssrf";
import { DRIVERS, geminiGenerateContent, type Usage } from "./drivers/protocols";
import { jsonPoster } from "./drivers/request";
import { checkApiKey, checkBaseUrl, checkCapabilities, checkKind, checkModel, checkName, urlPolicy } from "./input";
import { kindInfo } from "./kinds";
import type { ProviderIn, ProviderOut, TranslateIn, TranslateTextOut } from "./model";
import { altTextPrompt, translationPrompt } from "./prompt";

export type ProviderRow = typeof aiProviders.$inferSelect;

export type ProviderInput = Partial<z.output<typeof ProviderIn>>;

const MAX_TEXT_CHARS = 32_000;
const FIELD_RE = /^[A-Za-z0-9_.:[\]-]{1,200}$/;

/** The masked read: never the key itself. */
export function providerToWire(p: ProviderRow): z.output<typeof ProviderOut> {
  const info = kindInfo(p.kind);
  return {
    id: p.id,
    project_id: p.projectId,
    name: p.name,
    kind: p.kind,
    model: p.model,
    base_url: p.baseUrl,
    effective_model: p.model ?? info.default_model,
    effective_base_url: p.baseUrl ?? info.default_base_url,
    api_key_hint: p.apiKeyHint,
    capabilities: p.capabilities,
    is_default: p.isDefault,
    created_at: p.createdAt.toISOString(),
    updated_at: p.updatedAt.toISOString(),
  };
}

/**
 * The sealed key and its hint, both null without a key. The hint is `sk-…a1b2`: a short vendor
 * prefix and at most the last 4 characters, fewer for short keys.
 */
async function sealKey(deps: AppDeps, id: string, projectId: string, key: string | null): Promise<Pick<ProviderRow, "apiKeySealed" | "apiKeyHint">> {
  if (!key) return { apiKeySealed: null, apiKeyHint: null };
  const tail = key.length >= 16 ? 4 : key.length >= 8 ? 2 : 0;
  const prefix = key.length >= 16 ? (/^[A-Za-z]{2,4}[-_]/.exec(key)?.[0] ?? "") : "";
  return { apiKeySealed: await deps.keyRing.seal(key, aadOf(id, projectId)), apiKeyHint: `${prefix}…${tail ? key.slice(-tail) : ""}` };
}

const aadOf = (providerId: string, projectId: string): string => `ai_providers.api_key:${providerId}:${projectId}`;

export async function listProviders(db: Db, projectId: string): Promise<ProviderRow[]> {
  return db.select().from(aiProviders).where(eq(aiProviders.projectId, projectId)).orderBy(asc(aiProviders.createdAt), asc(aiProviders.id));
}

const firstProvider = async (db: Db, where: SQL | undefined): Promise<ProviderRow | undefined> => (await db.select().from(aiProviders).where(where).limit(1))[0];

/** A provider the admin key may act on; another project's provider is 404 like a missing one. */
export async function getProviderForCaller(db: Db, id: string, caller: AdminCaller): Promise<ProviderRow> {
  const row = isUuid(id) ? await firstProvider(db, eq(aiProviders.id, id.toLowerCase())) : undefined;
  if (!row || (caller.projectIds !== null && !caller.projectIds.includes(row.projectId))) throw notFound("provider");
  return row;
}

/** The plain key, for the single unmasked read and for calls. Fails closed on any tampering. */
export async function revealApiKey(deps: AppDeps, row: ProviderRow): Promise<string | null> {
  if (!row.apiKeySealed) return null;
  const sealed = row.apiKeySealed;
  return deps.keyRing.open(sealed, aadOf(row.id, row.projectId)).catch((err: unknown) => {
    deps.log.error("provider key cannot be opened", { provider_id: row.id, project_id: row.projectId, reason: err instanceof SealError ? err.reason : "error", sealed_with: sealedKeyId(sealed) });
    throw new AppError("internal", "the provider's stored API key cannot be opened with the configured key ring; set api_key again", undefined, undefined, { cause: err });
  });
}

export async function createProvider(deps: AppDeps, project: Project, input: ProviderInput): Promise<ProviderRow> {
  const now = deps.now();
  const id = uuidv7(now.getTime());
  const values = {
    id,
    projectId: project.id,
    kind: checkKind(input.kind ?? ""),
    baseUrl: await checkBaseUrl(deps, input.base_url),
    ...(await sealKey(deps, id, project.id, checkApiKey(input.api_key))),
    name: checkName(input.name ?? ""),
    model: checkModel(input.model),
    capabilities: checkCapabilities(input.capabilities),
    createdAt: now,
    updatedAt: now,
  };
  return writeWithDefault(deps.db, project.id, async (tx, others) => {
    // The project's first provider becomes its default unless the caller says otherwise.
    const row = { ...values, isDefault: input.is_default ?? others === 0 };
    if (row.isDefault) await clearDefault(tx, project.id, now, id);
    return oneRow(await tx.insert(aiProviders).values(row).returning());
  });
}

export async function updateProvider(deps: AppDeps, row: ProviderRow, input: ProviderInput): Promise<ProviderRow> {
  const now = deps.now();
  const set: Partial<typeof aiProviders.$inferInsert> = { updatedAt: now };
  if (input.name !== undefined) set.name = checkName(input.name);
  if (input.kind !== undefined) set.kind = checkKind(input.kind);
  if (input.model !== undefined) set.model = checkModel(input.model);
  if (input.base_url !== undefined) set.baseUrl = await checkBaseUrl(deps, input.base_url);
  if (input.capabilities !== undefined) set.capabilities = checkCapabilities(input.capabilities);
  if (input.api_key !== undefined) Object.assign(set, await sealKey(deps, row.id, row.projectId, checkApiKey(input.api_key)));
  if (input.is_default !== undefined) set.isDefault = input.is_default;
  return writeWithDefault(deps.db, row.projectId, async (tx) => {
    if (input.is_default === true) await clearDefault(tx, row.projectId, now, row.id);
    const [updated] = await tx.update(aiProviders).set(set).where(eq(aiProviders.id, row.id)).returning();
    if (!updated) throw notFound("provider");
    return updated;
  });
}

export async function deleteProvider(db: Db, row: ProviderRow): Promise<void> {
  await db.delete(aiProviders).where(eq(aiProviders.id, row.id));
}

/**
 * Provider writes for one project are serialised on the project row, so "setting a default
 * clears the others" holds under concurrency; the partial unique index is the backstop.
 */
async function writeWithDefault(db: Db, projectId: string, fn: (tx: Db, others: number) => Promise<ProviderRow>): Promise<ProviderRow> {
  return db
    .transaction(async (tx) => {
      const [p] = await tx.select({ id: projects.id }).from(projects).where(eq(projects.id, projectId)).for("update");
      if (!p) throw notFound("project");
      const others = await tx.select({ id: aiProviders.id }).from(aiProviders).where(eq(aiProviders.projectId, projectId)).limit(1);
      return fn(tx, others.length);
    })
    .catch((err: unknown) => {
      if (isUniqueViolation(err)) throw new AppError("conflict", "another provider became this project's default at the same time; retry", { field: "is_default" });
      throw err;
    });
}

async function clearDefault(tx: Db, projectId: string, now: Date, except: string): Promise<void> {
  await tx
    .update(aiProviders)
    .set({ isDefault: false, updatedAt: now })
    .where(and(eq(aiProviders.projectId, projectId), eq(aiProviders.isDefault, true), ne(aiProviders.id, except)));
}

/** Translates text with the project's chosen (or default) provider and its stored key, for the admin route and the MCP tools. */
export async function translateText(
  deps: AppDeps,
  project: Project,
  input: z.output<typeof TranslateIn> & { from: string; format?: "markdown" | "html" | null; instructions?: readonly string[] },
): Promise<z.output<typeof TranslateTextOut>> {
  const [from, to] = [input.from, input.to].map((tag) => canonicalLocale(tag));
  if (!from) throw new AppError("invalid_locale", `from "${input.from}" is not a BCP 47 tag`, { field: "from" });
  if (!to) throw new AppError("invalid_locale", `to "${input.to}" is not a BCP 47 tag`, { field: "to" });
  const text = input.text;
  const chars = typeof text === "string" ? [...text].length : 0;
  if (chars < 1 || chars > MAX_TEXT_CHARS || text.trim() === "") throw new AppError("invalid_request", `text must be 1 to ${MAX_TEXT_CHARS} characters and not only whitespace`, { field: "text" });
  const field = input.field || null;
  if (field !== null && !FIELD_RE.test(field)) throw new AppError("invalid_request", "field must be a field name such as title, seo.description or blocks.<id>.text", { field: "field" });

  const provider = await chooseProvider(deps.db, project.id, input.provider_id);
  if (provider.capabilities.translate === false) {
    throw new AppError("invalid_request", `provider "${provider.name}" declares that it does not translate (capabilities.translate is false)`, { field: "provider_id" });
  }
  const {
    text: translation,
    model,
    usage,
  } = await callProvider(deps, project, provider, "ai translate", {
    system: [translationPrompt({ from, to, field, format: input.format ?? null }), ...(input.instructions ?? [])].join("\n"),
    text,
    maxOutputTokens: Math.min(8192, 512 + chars * 2),
  });
  if (translation.trim() === "") throw new AppError("provider_error", "the provider returned no translation (empty content)");
  return { translation, provider: provider.kind, model, usage };
}

/**
 * Alt text for an image (describe_media) by the project's chosen or default provider,
 * which must see images: the picture goes in the vendor's own form (Anthropic's base64 image block,
 * the OpenAI-compatible image_url data URL that Gemini's OpenAI endpoint also takes). The caller
 * downscales it first: the cost of a call is bounded.
 */
export async function describeImage(
  deps: AppDeps,
  project: Project,
  input: { image: { type: string; base64: string }; language: string; providerId?: string },
): Promise<{ text: string; model: string }> {
  const provider = await chooseProvider(deps.db, project.id, input.providerId);
  const out = await callProvider(deps, project, provider, "ai describe", { system: altTextPrompt(input.language), text: "Describe this image.", image: input.image, maxOutputTokens: 300 });
  const text = out.text.trim();
  if (text === "") throw new AppError("provider_error", "the provider returned no description (empty content)");
  return { text, model: out.model };
}

/**
 * A per-project slot for a vendor call (AI_MAX_CONCURRENT_PER_PROJECT, per instance): one project
 * cannot hold every outbound slot, and a slow vendor cannot pile up requests without bound. Outside
 * an app (a script) there is no app-wide count: the call gets a count of its own.
 */
function takeSlot(deps: AppDeps, projectId: string): () => void {
  const max = deps.config.aiMaxConcurrentPerProject;
  const release = (deps.aiSlots ?? new Slots()).acquire(projectId, max);
  if (release === null) throw new AppError("rate_limited", `this project already has ${max} translation calls in progress; retry shortly`, { limit: max, retry_after: 1 }, { "retry-after": "1" });
  return release;
}

/** One call to a provider: the outbound guard again, the key opened, the per-project slot held, the outcome logged. */
async function callProvider(
  deps: AppDeps,
  project: Project,
  provider: ProviderRow,
  what: string,
  call: { system: string; text: string; maxOutputTokens: number; image?: { type: string; base64: string } },
): Promise<{ text: string; model: string; usage: Usage | null }> {
  const info = kindInfo(provider.kind);
  const model = provider.model ?? info.default_model;
  await refuseOverCap(deps.db, project, deps.now());
  const release = takeSlot(deps, project.id);
  const started = performance.now();
  try {
    // Again at call time: DNS may have changed, and so may AI_ALLOW_PRIVATE_URLS. The call
    // then connects to the addresses checked here, never to a fresh DNS answer.
    const check = provider.baseUrl ? await checkOutboundUrl(provider.baseUrl, urlPolicy(deps, "refuse")) : null;
    if (check && !check.ok) throw new AppError("provider_error", `the provider's base_url ${check.reason}`, { field: "base_url" });
    const apiKey = await revealApiKey(deps, provider);
    const post = jsonPoster({ fetch: deps.fetch, timeoutMs: deps.config.aiTimeoutMs, maxBytes: deps.config.aiMaxResponseBytes, secret: apiKey, addresses: check?.addresses ?? [] });
    // An image for Gemini goes to its native API as inline_data; everything else by the kind's driver.
    const driver = call.image !== undefined && provider.kind === "gemini" ? geminiGenerateContent : DRIVERS[info.driver];
    const raw = await driver(post, { baseUrl: provider.baseUrl || info.default_base_url, apiKey, model, ...call });
    // Callers store what comes back (MCP translate_node writes jsonb): NUL and unpaired surrogates,
    // which PostgreSQL refuses, never leave here.
    const text = raw.text.replace(/\u0000/g, "").toWellFormed();
    await countUsage(deps.db, project.id, provider, raw.usage, deps.now());
    deps.log.info(what, { project_id: project.id, provider_id: provider.id, kind: provider.kind, model, chars: [...call.text].length, ms: Math.round(performance.now() - started) });
    return { text, model, usage: raw.usage };
  } catch (err) {
    const code = err instanceof AppError ? err.code : "internal";
    deps.log.warn(`${what} failed`, { project_id: project.id, provider_id: provider.id, kind: provider.kind, model, error_code: code, ms: Math.round(performance.now() - started) });
    throw err;
  } finally {
    release();
  }
}

const monthOf = (d: Date): string => d.toISOString().slice(0, 7);

/** A call counted against its project, provider and month, with the tokens the vendor reported. */
async function countUsage(db: Db, projectId: string, provider: ProviderRow, usage: Usage | null, now: Date): Promise<void> {
  const input = usage?.input_tokens ?? 0;
  const output = usage?.output_tokens ?? 0;
  await db
    .insert(aiUsage)
    .values({ projectId, providerId: provider.id, month: monthOf(now), kind: provider.kind, inputTokens: input, outputTokens: output, calls: 1, updatedAt: now })
    .onConflictDoUpdate({
      target: [aiUsage.projectId, aiUsage.providerId, aiUsage.month],
      set: { inputTokens: sql`${aiUsage.inputTokens} + ${input}`, outputTokens: sql`${aiUsage.outputTokens} + ${output}`, calls: sql`${aiUsage.calls} + 1`, updatedAt: now },
    });
}

/** The project's tokens this month (every provider). */
async function tokensThisMonth(db: Db, projectId: string, now: Date): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`coalesce(sum(${aiUsage.inputTokens} + ${aiUsage.outputTokens}), 0)` })
    .from(aiUsage)
    .where(and(eq(aiUsage.projectId, projectId), eq(aiUsage.month, monthOf(now))));
  return Number(row?.n ?? 0);
}

/** 429 quota_exceeded once the project's monthly token cap is used up: no new call is made. */
async function refuseOverCap(db: Db, project: Project, now: Date): Promise<void> {
  const [p] = await db.select({ cap: projects.aiMonthlyTokenCap }).from(projects).where(eq(projects.id, project.id));
  const cap = p?.cap ?? null;
  if (cap === null) return;
  const used = await tokensThisMonth(db, project.id, now);
  if (used >= cap)
    throw new AppError(
      "quota_exceeded",
      `this project's AI token cap for ${monthOf(now)} is used up (${used} of ${cap} tokens): no more calls until next month, or raise ai_monthly_token_cap`,
      { used, cap, month: monthOf(now) },
      undefined,
      { status: 429 },
    );
}

/** GET …/ai/usage: tokens and calls per provider and month, newest month first. */
export async function listUsage(db: Db, projectId: string) {
  const rows = await db.select().from(aiUsage).where(eq(aiUsage.projectId, projectId)).orderBy(desc(aiUsage.month), asc(aiUsage.kind));
  return rows.map((r) => ({ provider_id: r.providerId, kind: r.kind, month: r.month, input_tokens: r.inputTokens, output_tokens: r.outputTokens, calls: r.calls }));
}

/** The provider named (404 unless it is this project's), or the project's default. */
async function chooseProvider(db: Db, projectId: string, providerId: string | undefined): Promise<ProviderRow> {
  if (providerId && !isUuid(providerId)) throw notFound("provider");
  const row = await firstProvider(db, and(eq(aiProviders.projectId, projectId), providerId ? eq(aiProviders.id, providerId.toLowerCase()) : eq(aiProviders.isDefault, true)));
  if (row) return row;
  throw providerId ? notFound("provider") : new AppError("no_provider", "this project has no default AI provider; create one or pass provider_id");
}

/** Re-seals every stored key under the key ring's current key (secrets:rotate). */
export async function resealProviderKeys(deps: AppDeps) {
  const report = { resealed: 0, already_current: 0, failed: [] as string[] };
  const rows = await deps.db.select().from(aiProviders).where(isNotNull(aiProviders.apiKeySealed)).orderBy(asc(aiProviders.id));
  for (const row of rows) {
    const sealed = row.apiKeySealed;
    if (sealed === null) continue; // the query asked for sealed keys only
    if (sealedKeyId(sealed) === deps.keyRing.currentId) {
      report.already_current += 1;
      continue;
    }
    const plain = await deps.keyRing.open(sealed, aadOf(row.id, row.projectId)).catch(() => null);
    if (plain === null) {
      report.failed.push(row.id);
      continue;
    }
    const next = await deps.keyRing.seal(plain, aadOf(row.id, row.projectId));
    // Only if unchanged meanwhile: a concurrent PATCH of the key wins.
    const done = await deps.db
      .update(aiProviders)
      .set({ apiKeySealed: next })
      .where(and(eq(aiProviders.id, row.id), eq(aiProviders.apiKeySealed, sealed)))
      .returning({ id: aiProviders.id });
    if (done.length > 0) report.resealed += 1;
  }
  return report;
}
