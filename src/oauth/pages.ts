// Server-rendered sign-in and consent pages: no script, one inline style under a CSP nonce.
import type { ProjectChoice } from "../users/membership";
import type { RequestParams } from "./authorize";

/** What every page of the flow shows (src/oauth/consent.ts fills it in). */
export interface FlowView {
  readonly nonce: string;
  readonly csrf: string;
  readonly clientName: string | null;
  /** Host that publishes the client's metadata document (a verified identity), when it has one. */
  readonly clientHost: string | null;
  readonly redirectUri: string;
  readonly params: RequestParams;
  /** This service: the instance's name and host, so the user knows who asks for the password. */
  readonly service: { readonly name: string; readonly host: string };
  readonly error: string | null;
}

const DEFAULT_ACCENT = "#2563eb";

const SCOPE_TEXT: Record<string, string> = {
  "content:read": "Read pages, entries, blocks, translations and project settings",
  "content:write": "Create and edit drafts: pages, entries, blocks and translations; edit the theme",
  "content:publish": "Publish, unpublish, archive, restore and delete content, and restore earlier versions, without asking you: without it, each such change waits for a person's approval",
  "ai:read": "Use the project's AI providers to translate text and content",
  "model:write": "Change the project's content model (block and node types) that every edit is checked against",
};

export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Black or white text, whichever reads better on the accent (WCAG relative luminance). */
function textOn(hex: string): string {
  const [r = 0, g = 0, b = 0] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.179 ? "#111111" : "#ffffff";
}

export function layout(f: { nonce: string; title: string; accent?: string | null; logoUrl?: string | null; body: string }): string {
  const accent = f.accent && /^#[0-9a-fA-F]{6}$/.test(f.accent) ? f.accent.toLowerCase() : DEFAULT_ACCENT;
  const logo = f.logoUrl ? `<img class="logo" src="${escapeHtml(f.logoUrl)}" alt="" width="40" height="40">` : "";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(f.title)}</title>
<style nonce="${f.nonce}">
:root{--accent:${accent};--on-accent:${textOn(accent)};color-scheme:light}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f4f5f7;color:#1b1d21}
main{max-width:28rem;margin:2.5rem auto;padding:1.75rem;background:#fff;border-radius:.75rem;border-top:.4rem solid var(--accent);box-shadow:0 1px 3px rgba(0,0,0,.12)}
h1{font-size:1.35rem;margin:0 0 1rem}
.logo{float:right;border-radius:.4rem}
label{display:block;font-weight:600;margin:.9rem 0 .3rem}
input[type=email],input[type=password],select{width:100%;padding:.6rem;font:inherit;border:1px solid #8a8f98;border-radius:.4rem}
fieldset{border:1px solid #d5d8de;border-radius:.5rem;margin:1rem 0;padding:.5rem 1rem}
legend{font-weight:600;padding:0 .3rem}
fieldset label{font-weight:400;display:flex;gap:.5rem;align-items:flex-start}
.actions{display:flex;gap:.75rem;margin-top:1.25rem;flex-wrap:wrap}
button{font:inherit;padding:.6rem 1.2rem;border-radius:.4rem;border:2px solid var(--accent);cursor:pointer}
button.primary{background:var(--accent);color:var(--on-accent)}
button.secondary{background:#fff;color:#1b1d21;border-color:#8a8f98}
button:focus-visible,input:focus-visible,select:focus-visible{outline:3px solid #1b1d21;outline-offset:2px}
.error{background:#fdecec;border:1px solid #c62828;color:#8e1b1b;padding:.6rem .8rem;border-radius:.4rem}
.muted{color:#50555e;font-size:.9rem}
code{word-break:break-all;background:#f0f1f3;padding:0 .2rem;border-radius:.2rem}
dl{margin:.5rem 0}dt{font-weight:600}dd{margin:0 0 .5rem}
</style>
</head>
<body>
<main>${logo}
${f.body}
</main>
</body>
</html>`;
}

const refusal = (nonce: string, message: string, next: string): string =>
  layout({
    nonce,
    title: "Authorization request refused",
    body: `<h1>This authorization request cannot continue</h1>
<p role="alert" class="error">${escapeHtml(message)}</p>
${next}`,
  });

export const errorPage = (nonce: string, message: string): string => refusal(nonce, message, `<p class="muted">Return to the application and start the connection again.</p>`);

/** The consent pages while the database is away (503). */
export const unavailablePage = (nonce: string): string =>
  layout({
    nonce,
    title: "Temporarily unavailable",
    body: `<h1>Sign-in is temporarily unavailable</h1>
<p role="alert" class="error">This service is temporarily unavailable. Try again in a moment.</p>
<p class="muted">Reload this page shortly; the application that sent you here is still waiting.</p>`,
  });

/** A refused request of a registered client: the reason, and a link back that the user chooses to follow. */
export const errorReturnPage = (nonce: string, message: string, location: string, host: string): string =>
  refusal(
    nonce,
    message,
    `<p class="muted">The application that sent you here made an invalid request. You can return to it at <strong>${escapeHtml(host)}</strong>, which will be told why.</p>
<p><a href="${escapeHtml(location)}" rel="noreferrer">Return to ${escapeHtml(host)}</a></p>`,
  );

/** The opening of a form of the flow: the request as received, the CSRF token and the step. */
function formStart(v: FlowView, step: string): string {
  const fields = Object.entries(v.params)
    .filter(([, value]) => value !== undefined)
    .map(([k, value]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(value as string)}">`);
  fields.push(`<input type="hidden" name="csrf_token" value="${escapeHtml(v.csrf)}">`, `<input type="hidden" name="step" value="${step}">`);
  return `<form method="post" action="/oauth/authorize">\n${fields.join("\n")}`;
}

function clientLine(v: FlowView): string {
  const name = v.clientName ? `<strong>${escapeHtml(v.clientName)}</strong>` : "<strong>An unnamed application</strong>";
  const origin = v.clientHost ? `The application is published by <strong>${escapeHtml(v.clientHost)}</strong>; the name is what it calls itself.` : "The name is what the application calls itself.";
  return `<p>${name} wants to connect to your content through MCP.</p>
<p class="muted">${origin} After you decide you will be sent to <code>${escapeHtml(v.redirectUri)}</code>.</p>`;
}

const errorBlock = (e: string | null | undefined): string => (e ? `<p role="alert" class="error" id="form-error">${escapeHtml(e)}</p>` : "");

export const signInPage = (v: FlowView & { email?: string }): string =>
  layout({
    nonce: v.nonce,
    title: `Sign in to ${v.service.name}`,
    body: `<h1>Sign in to ${escapeHtml(v.service.name)}</h1>
<p>This page belongs to <strong>${escapeHtml(v.service.name)}</strong> at <strong>${escapeHtml(v.service.host)}</strong>: enter the email and password of your account there.</p>
${clientLine(v)}
${errorBlock(v.error)}
${formStart(v, "signin")}
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(v.email ?? "")}"${v.error ? ' aria-describedby="form-error"' : ""}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<div class="actions"><button class="primary" type="submit">Sign in</button></div>
</form>`,
  });

/**
 * The user's projects to choose from: the first ones by name, and a search by name or slug, shown
 * when there are more than the page lists or a search was made (a user may belong to thousands).
 */
export function projectPage(v: FlowView & { userEmail: string; projects: readonly ProjectChoice[]; more: boolean; search: string | null }): string {
  const options = v.projects.map((p) => `<option value="${escapeHtml(p.id)}">${escapeHtml(p.name)} (your role: ${escapeHtml(p.role)})</option>`).join("");
  const searching = v.more || v.search !== null;
  const found =
    v.search === null
      ? `Showing the first ${v.projects.length} of your projects by name.`
      : `${v.projects.length === 0 ? "No project" : v.more ? `The first ${v.projects.length} projects` : `${v.projects.length} project${v.projects.length === 1 ? "" : "s"}`} matching “${escapeHtml(v.search)}”.`;
  const search = searching
    ? `<p class="muted" id="search-note">${found} Search by name or slug to find another.</p>
<label for="project_search">Search your projects</label>
<input id="project_search" name="project_search" type="search" value="${escapeHtml(v.search ?? "")}" aria-describedby="search-note">
<div class="actions"><button class="secondary" type="submit" name="action" value="search" formnovalidate>Search</button></div>`
    : "";
  const select = v.projects.length
    ? `<label for="project">Project</label>
<select id="project" name="project" required>${options}</select>
<div class="actions"><button class="primary" type="submit">Continue</button></div>`
    : "";
  const body =
    v.projects.length === 0 && v.search === null
      ? `<p role="alert" class="error">Your account is not a member of any project yet. Ask an administrator of the project to add you.</p>`
      : `${formStart(v, "project")}
${search}
${select}
</form>`;
  return layout({
    nonce: v.nonce,
    title: "Choose a project",
    body: `<h1>Choose the project to connect</h1>
${clientLine(v)}
<p class="muted">Signed in as ${escapeHtml(v.userEmail)}.</p>
${errorBlock(v.error)}
${body}`,
  });
}

export function consentPage(
  v: FlowView & {
    userEmail: string;
    project: ProjectChoice & { accent: string | null; logoUrl: string | null };
    offered: readonly string[];
    notHeld: readonly string[];
    canChangeProject: boolean;
  },
): string {
  const boxes = v.offered
    .map((s) => `<label><input type="checkbox" name="grant_scope" value="${escapeHtml(s)}" checked> <span><code>${escapeHtml(s)}</code>: ${escapeHtml(SCOPE_TEXT[s] ?? s)}</span></label>`)
    .join("\n");
  const missing = v.notHeld.length ? `<p class="muted">Also requested, but your role in this project does not hold: ${v.notHeld.map((s) => `<code>${escapeHtml(s)}</code>`).join(", ")}.</p>` : "";
  const scopes = v.offered.length
    ? `<fieldset><legend>Allow it to</legend>\n${boxes}\n</fieldset>${missing}`
    : `<p role="alert" class="error">Your role in this project holds none of the permissions this application asks for. You can only deny.</p>`;
  const change = v.canChangeProject ? `<button class="secondary" type="submit" name="action" value="change_project" formnovalidate>Another project</button>` : "";
  return layout({
    nonce: v.nonce,
    title: `Authorize access to ${v.project.name}`,
    accent: v.project.accent,
    logoUrl: v.project.logoUrl,
    body: `<h1>Allow access to ${escapeHtml(v.project.name)}?</h1>
${clientLine(v)}
<dl><dt>Project</dt><dd>${escapeHtml(v.project.name)}</dd><dt>Signed in as</dt><dd>${escapeHtml(v.userEmail)} (your role in this project: ${escapeHtml(v.project.role)})</dd></dl>
${errorBlock(v.error)}
${formStart(v, "consent")}
<input type="hidden" name="project" value="${escapeHtml(v.project.id)}">
${scopes}
<div class="actions">
${v.offered.length ? `<button class="primary" type="submit" name="action" value="approve">Allow</button>` : ""}
<button class="secondary" type="submit" name="action" value="deny">Deny</button>
${change}
<button class="secondary" type="submit" name="action" value="signout" formnovalidate>Use another account</button>
</div>
</form>`,
  });
}
