// What the OAuth tests share: a browser stand-in for the consent page, PKCE, users, raw token calls.
import { expect } from "bun:test";
import { auth, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { sha256 } from "@oslojs/crypto/sha2";
import { encodeBase64urlNoPadding } from "@oslojs/encoding";
import { projectMembers, projects } from "../db/schema";
import type { ProjectRole } from "../src/lib/scopes";
import { createUser } from "../src/users/service";
import { readReply, type TestHarness } from "./helpers";

export type Fetcher = (request: Request) => Promise<Response>;

/** The few cookies a browser would keep for one origin. */
export class CookieJar {
  readonly cookies = new Map<string, string>();
  store(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(";");
      const i = pair!.indexOf("=");
      const name = pair!.slice(0, i).trim();
      const value = pair!.slice(i + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a));
      if (expired || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }
}

const unescapeHtml = (s: string): string => s.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n)));

/** The hidden inputs of the page's form, as a browser would submit them. */
export function hiddenFields(html: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) out[unescapeHtml(m[1]!)] = unescapeHtml(m[2]!);
  return out;
}

export interface BrowserOptions {
  email: string;
  password: string;
  projectId: string;
  /** Scopes to leave ticked; default: every offered one. */
  scopes?: string[];
  action?: "approve" | "deny";
  jar?: CookieJar;
}

export interface BrowserResult {
  /** Where the final 302/303 sends the browser (the client's redirect URI with code or error). */
  location: string;
  pages: string[];
  jar: CookieJar;
}

/** Follows the authorization page as a user would: sign in, pick the project, consent. */
export async function authorizeInBrowser(fetcher: Fetcher, authorizeUrl: string, opts: BrowserOptions): Promise<BrowserResult> {
  const jar = opts.jar ?? new CookieJar();
  const pages: string[] = [];
  const origin = new URL(authorizeUrl).origin;
  const send = async (req: Request): Promise<Response> => {
    const res = await fetcher(req);
    jar.store(res);
    return res;
  };
  let res = await send(new Request(authorizeUrl, { headers: { cookie: jar.header() } }));
  for (let step = 0; step < 5; step++) {
    const location = res.headers.get("location");
    if (location) return { location, pages, jar };
    const html = await res.text();
    pages.push(html);
    if (res.status !== 200) throw new Error(`authorization page answered ${res.status}: ${html.slice(0, 500)}`);
    const form = new URLSearchParams(hiddenFields(html));
    const stepName = form.get("step");
    if (stepName === "signin") {
      form.set("email", opts.email);
      form.set("password", opts.password);
    } else if (stepName === "project") {
      form.set("project", opts.projectId);
    } else if (stepName === "consent") {
      form.set("action", opts.action ?? "approve");
      const offered = [...html.matchAll(/name="grant_scope" value="([^"]+)"/g)].map((m) => unescapeHtml(m[1]!));
      for (const s of opts.scopes ?? offered) form.append("grant_scope", s);
    } else throw new Error(`unexpected page: ${html.slice(0, 500)}`);
    res = await send(
      new Request(`${origin}/oauth/authorize`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", cookie: jar.header(), origin },
        body: form.toString(),
      }),
    );
  }
  throw new Error("the authorization page did not finish");
}

export function pkce(): { verifier: string; challenge: string } {
  const b = new Uint8Array(32);
  crypto.getRandomValues(b);
  const verifier = encodeBase64urlNoPadding(b);
  return { verifier, challenge: encodeBase64urlNoPadding(sha256(new TextEncoder().encode(verifier))) };
}

let userCounter = 0;
/**
 * An instance owner, or a member holding `role` in each of `projectIds`; without `projectIds`, in
 * every project that exists now (what the upgrade gives a user of the old instance-wide role).
 */
export async function seedUser(h: TestHarness, role: "owner" | ProjectRole = "editor", projectIds?: string[]): Promise<{ id: string; email: string; password: string }> {
  userCounter += 1;
  const email = `user-${Date.now().toString(36)}-${userCounter}-${Math.random().toString(36).slice(2, 6)}@example.com`;
  const password = `pw-${crypto.randomUUID()}`;
  const u = await createUser(h.deps.db, { email, password, role: role === "owner" ? "owner" : "member" }, new Date());
  if (role !== "owner") {
    const ids = projectIds ?? (await h.deps.db.select({ id: projects.id }).from(projects)).map((p) => p.id);
    if (ids.length > 0) await h.deps.db.insert(projectMembers).values(ids.map((projectId) => ({ projectId, userId: u.id, role })));
  }
  return { id: u.id, email, password };
}

export function authorizeUrl(base: string, params: Record<string, string | undefined>): string {
  const u = new URL(`${base}/oauth/authorize`);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.append(k, v);
  return u.toString();
}

export interface Reply {
  status: number;
  headers: Headers;
  json: any;
  text: string;
}

const reply: (res: Response) => Promise<Reply> = readReply;

/** POST of a form to a path of the app (token, revoke). */
export async function postForm(fetcher: Fetcher, base: string, path: string, form: Record<string, string | string[]>, headers: Record<string, string> = {}): Promise<Reply> {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(form)) for (const x of Array.isArray(v) ? v : [v]) body.append(k, x);
  return reply(await fetcher(new Request(base + path, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", ...headers }, body: body.toString() })));
}

/** One JSON-RPC call to /mcp with a bearer. */
export async function mcpRpc(fetcher: Fetcher, base: string, token: string | null, method: string, params: unknown = {}): Promise<Reply> {
  return reply(
    await fetcher(
      new Request(`${base}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      }),
    ),
  );
}

/**
 * An MCP SDK OAuthClientProvider keeping its registration, tokens and verifier in memory;
 * subclasses say how they register and how their "browser" walks the authorization page.
 */
export abstract class MemoryClientProvider implements OAuthClientProvider {
  abstract readonly redirectUrl: string;
  abstract get clientMetadata(): OAuthClientMetadata;
  abstract redirectToAuthorization(url: URL): Promise<void>;
  private info: OAuthClientInformationMixed | undefined;
  private saved: OAuthTokens | undefined;
  private verifier = "";
  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.info = info;
  }
  tokens(): OAuthTokens | undefined {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }
  saveCodeVerifier(v: string): void {
    this.verifier = v;
  }
  codeVerifier(): string {
    return this.verifier;
  }
}

/**
 * The outbound fetch of a test app serving client metadata documents from a map. The server
 * connects to the address its guard checked and names the host in the Host header.
 */
export function metadataDocumentFetch(documents: Map<string, unknown>): typeof fetch {
  return (async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const host = (init?.headers as Record<string, string> | undefined)?.host;
    if (host) url.host = host;
    const doc = documents.get(url.toString());
    return doc ? Response.json(doc) : new Response("not found", { status: 404 });
  }) as typeof fetch;
}

export interface ConsentOptions {
  /** The client's name in its registration. */
  name: string;
  redirectUrl: string;
  user: { email: string; password: string };
  projectId: string;
  /** Default: authorization_code and refresh_token. */
  grantTypes?: string[];
  /** Scopes to leave ticked on the consent page (changeable between authorizations); default: every offered one. */
  tick?: string[];
  /** The browser's fetch; default: fetch that does not follow redirects. */
  browser?: Fetcher;
  /** Checks of the authorization URL the SDK built and of where the consent sent the browser. */
  check?: (authorizeUrl: URL, location: URL) => void;
}

/**
 * The SDK OAuth client of the tests (MCP SDK and AI SDK alike): it registers with `name`, and its
 * "browser" signs `user` in, picks the project and consents; `code` is the code it got back, `asked`
 * the scope of each authorization the SDK asked for.
 */
export class ConsentingProvider extends MemoryClientProvider {
  readonly redirectUrl: string;
  code: string | null = null;
  asked: string[] = [];
  tick: string[] | undefined;
  constructor(private readonly opts: ConsentOptions) {
    super();
    this.redirectUrl = opts.redirectUrl;
    this.tick = opts.tick;
  }
  get clientMetadata(): OAuthClientMetadata {
    const grant_types = this.opts.grantTypes ?? ["authorization_code", "refresh_token"];
    return { client_name: this.opts.name, redirect_uris: [this.redirectUrl], grant_types, response_types: ["code"], token_endpoint_auth_method: "none" };
  }
  async redirectToAuthorization(url: URL): Promise<void> {
    this.asked.push(url.searchParams.get("scope") ?? "");
    const { user, projectId, browser = (req) => fetch(req, { redirect: "manual" }) } = this.opts;
    const walked = await authorizeInBrowser(browser, url.href, { email: user.email, password: user.password, projectId, scopes: this.tick });
    const location = new URL(walked.location);
    this.opts.check?.(url, location);
    this.code = location.searchParams.get("code");
  }
}

/**
 * An MCP SDK client connected to `mcpUrl` with an access token `provider`'s user consented to:
 * auth() redirects to the consent, then exchanges the code.
 */
export async function oauthMcpClient(mcpUrl: URL, provider: ConsentingProvider, clientName: string): Promise<Client> {
  expect(await auth(provider, { serverUrl: mcpUrl })).toBe("REDIRECT");
  expect(await auth(provider, { serverUrl: mcpUrl, authorizationCode: provider.code ?? "" })).toBe("AUTHORIZED");
  const client = new Client({ name: clientName, version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
  return client;
}
