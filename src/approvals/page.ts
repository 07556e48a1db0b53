// The approval page: server-rendered, no script, the consent page's layout and sign-in.
import type { Approval } from "../../db/schema";
import type { Change } from "../lib/diff";
import { escapeHtml, layout } from "../oauth/pages";
import type { ScheduleTime, ScheduleView } from "./service";

const DOES: Record<string, string> = {
  publish_node: "publish this node: the public delivery API will serve it as shown below",
  unpublish_node: "take this node off the public delivery API (it becomes a draft)",
  archive_node: "archive this node: hidden from delivery, kept for reference",
  restore_node: "bring this archived node back as a draft",
  delete_node: "delete this node and every node below it (they go to the trash)",
  restore_revision: "restore an earlier revision of this node (its status included)",
  schedule_node: "change when this node is published or unpublished: the scheduler will do it at the times below",
};

export interface ApprovalView {
  readonly nonce: string;
  readonly csrf: string;
  readonly serviceName: string;
  readonly error: string | null;
  readonly notice?: string | null;
}

const errorBlock = (e: string | null | undefined): string => (e ? `<p role="alert" class="error" id="form-error">${escapeHtml(e)}</p>` : "");

const form = (v: ApprovalView, id: string, step: string, inner: string): string =>
  `<form method="post" action="/approvals/${escapeHtml(id)}">
<input type="hidden" name="csrf_token" value="${escapeHtml(v.csrf)}">
<input type="hidden" name="step" value="${step}">
${inner}
</form>`;

export const approvalSignInPage = (v: ApprovalView & { id: string; email?: string }): string =>
  layout({
    nonce: v.nonce,
    title: `Sign in to ${v.serviceName}`,
    body: `<h1>Sign in to review a request</h1>
<p>An AI agent asked to make a change that needs a person's approval. Sign in with your ${escapeHtml(v.serviceName)} account to see it.</p>
${errorBlock(v.error)}
${form(
  v,
  v.id,
  "signin",
  `<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(v.email ?? "")}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<div class="actions"><button class="primary" type="submit">Sign in</button></div>`,
)}`,
  });

export const approvalRefusalPage = (v: ApprovalView, message: string): string =>
  layout({ nonce: v.nonce, title: "Approval request", body: `<h1>Approval request</h1>\n<p role="alert" class="error">${escapeHtml(message)}</p>` });

const show = (value: unknown): string => (value === undefined ? "<em>(none)</em>" : `<code>${escapeHtml(JSON.stringify(value).slice(0, 400))}</code>`);

const WHEN: Record<ScheduleTime["field"], string> = { publish_at: "Publish at", unpublish_at: "Unpublish at" };

/** A time as UTC, in a <time> element, with the time as the agent wrote it (its offset) when that differs. */
function showTime(value: string): string {
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) return `<code>${escapeHtml(value)}</code>`;
  const utc = at.toISOString();
  return `<time datetime="${utc}">${utc.replace("T", " ").replace(".000Z", " UTC")}</time>${value === utc ? "" : ` (asked as <code>${escapeHtml(value)}</code>)`}`;
}

const showAsked = (t: ScheduleTime): string =>
  t.asked === undefined ? (t.now === null ? "<em>none (unchanged)</em>" : `${showTime(t.now)} (unchanged)`) : t.asked === null ? "<strong>cleared</strong>" : showTime(t.asked);

/** What a schedule_node request sets: which version (the node, or one translation), and each time now and after. */
function scheduleBlock(s: ScheduleView | null): string {
  if (!s) return "";
  const target = s.locale === null ? "the node itself" : `its translation into locale <code>${escapeHtml(s.locale)}</code>`;
  const rows = s.times.map((t) => `<tr><th scope="row">${WHEN[t.field]}</th><td>${t.now === null ? "<em>none</em>" : showTime(t.now)}</td><td>${showAsked(t)}</td></tr>`).join("\n");
  return `<h2>The schedule</h2>
<dl><dt>Scheduled</dt><dd id="schedule-target">${target}</dd></dl>
<table id="schedule"><thead><tr><th>When</th><th>Now</th><th>After approval</th></tr></thead><tbody>
${rows}
</tbody></table>`;
}

export function approvalPage(
  v: ApprovalView & {
    approval: Approval;
    project: { name: string };
    userEmail: string;
    change: { title: string; path: string; diff: readonly Change[]; published: number | null; schedule?: ScheduleView | null };
  },
): string {
  const a = v.approval;
  const who = a.requestedBy.kind === "oauth" ? `${a.requestedBy.client?.name ?? "an application"} for ${a.requestedBy.name ?? "a user"}` : `MCP token ${a.requestedBy.name ?? a.requestedBy.id ?? ""}`;
  const rows = v.change.diff
    .slice(0, 200)
    .map((c) => `<tr><td><code>${escapeHtml(c.path || "/")}</code></td><td>${show(c.before)}</td><td>${show(c.after)}</td></tr>`)
    .join("\n");
  const against = v.change.published === null ? "never published: everything below is new to the public" : `the published version (revision ${v.change.published})`;
  const schedule = v.change.schedule ?? null;
  const same = schedule ? "The content does not change; only when it is published or unpublished (above)." : "No difference from the published version.";
  const table = rows ? `<table><thead><tr><th>Field</th><th>Published</th><th>After</th></tr></thead><tbody>\n${rows}\n</tbody></table>` : `<p class="muted">${same}</p>`;
  const heading = schedule ? "What the scheduled change does, against" : "The change, against";
  const decide =
    a.status === "pending"
      ? form(
          v,
          a.id,
          "decide",
          `<div class="actions"><button class="primary" type="submit" name="action" value="approve">Approve</button>
<button class="secondary" type="submit" name="action" value="reject">Reject</button></div>`,
        )
      : `<p><strong>This request is ${escapeHtml(a.status)}${a.decidedBy?.name ? ` (decided by ${escapeHtml(a.decidedBy.name)})` : ""}.</strong></p>`;
  return layout({
    nonce: v.nonce,
    title: `Approve a change in ${v.project.name}?`,
    body: `<h1>Approve a change in ${escapeHtml(v.project.name)}?</h1>
${v.notice ? `<p role="status"><strong>${escapeHtml(v.notice)}</strong></p>` : ""}
${errorBlock(v.error)}
<p>${escapeHtml(who)} asks to ${escapeHtml(DOES[a.operation] ?? a.operation)}.</p>
<dl><dt>Node</dt><dd>${escapeHtml(v.change.title)} <code>/${escapeHtml(v.change.path)}</code> (revision ${a.revision})</dd>
<dt>Asked</dt><dd>${escapeHtml(a.createdAt.toISOString())}; expires ${escapeHtml(a.expiresAt.toISOString())}</dd>
<dt>Signed in as</dt><dd>${escapeHtml(v.userEmail)}</dd></dl>
${scheduleBlock(schedule)}
<h2>${heading} ${escapeHtml(against)}</h2>
${table}
${decide}
<p class="muted">Approving lets the agent carry out exactly this change, once, if the node has not changed since it asked.</p>`,
  });
}
