// `Preview` in the editor: a fresh preview token (POST /admin/p/{ref}/preview-tokens, content:read),
// then the project's preview_url with {token}, {path} and {locale} filled, opened in a new tab
// (noopener). A project without preview_url gets the built-in preview: what the delivery API
// answers with that token (?preview=, the working copy: drafts included), shown as text only.
import { useQuery } from "@tanstack/react-query";
import { Button, Dialog, Heading, Modal, ModalOverlay } from "react-aria-components";
import { data, enc, messageOf, projectBase, request } from "../app/api";
import "./editorial.css";

interface CreatedPreviewToken {
  id: string;
  token: string;
  expires_at: string;
}

/** A new preview token's plaintext (an hour long; the list shows it as "Studio preview"). */
async function previewToken(slug: string): Promise<string> {
  const t = await data<CreatedPreviewToken>(`${projectBase(slug)}/preview-tokens`, { method: "POST", body: { name: "Studio preview", ttl_seconds: 3600 } });
  return t.token;
}

/** The path as the template gets it: "/a/b", each segment percent-encoded, the slashes kept. */
const pathOf = (path: string) => `/${path.split("/").filter(Boolean).map(enc).join("/")}`;

/** The template filled: {token} and {locale} percent-encoded, {path} as pathOf. */
function fillPreviewUrl(template: string, token: string, path: string, locale: string): string {
  return template.replaceAll("{token}", enc(token)).replaceAll("{path}", pathOf(path)).replaceAll("{locale}", enc(locale));
}

/** Opens the site's preview of `path` in a new tab. */
export async function openSitePreview(slug: string, template: string, path: string, locale: string): Promise<void> {
  const token = await previewToken(slug);
  window.open(fillPreviewUrl(template, token, path, locale), "_blank", "noopener,noreferrer");
}

interface DeliveredBlock {
  id: string;
  type: string;
  data: Record<string, unknown>;
}
interface DeliveredNode {
  id: string;
  title: string;
  path: string;
  locale: string;
  fields: Record<string, unknown>;
  blocks: DeliveredBlock[];
}

/** The delivery answer of the working copy, read with a fresh preview token (by id: a translation's path may differ from the base's). */
async function readPreview(slug: string, nodeId: string, locale: string | null): Promise<DeliveredNode> {
  const token = await previewToken(slug);
  const params = new URLSearchParams({ preview: token });
  if (locale) params.set("locale", locale);
  const res = await request<{ data: DeliveredNode }>(`/api/p/${enc(slug)}/nodes/${enc(nodeId)}?${params}`);
  return res.body.data;
}

/** Any value as plain text: strings as they are, the rest as indented JSON. */
function text(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return JSON.stringify(v, null, 2);
}

function Values({ values, label }: { values: Record<string, unknown>; label: string }) {
  const entries = Object.entries(values ?? {});
  if (entries.length === 0) return <p className="muted">No {label}.</p>;
  return (
    <dl className="ed-values">
      {entries.map(([k, v]) => (
        <div key={k} className="ed-value">
          <dt>{k}</dt>
          <dd>
            <pre className="ed-text">{text(v)}</pre>
          </dd>
        </div>
      ))}
    </dl>
  );
}

export function PreviewDialog({ slug, nodeId, locale, onClose }: { slug: string; nodeId: string; locale: string | null; onClose: () => void }) {
  // Each opening reads anew (a fresh token, the latest working copy); nothing is kept.
  const preview = useQuery({ queryKey: ["preview", slug, nodeId, locale], queryFn: () => readPreview(slug, nodeId, locale), staleTime: 0, gcTime: 0, retry: false });
  const node = preview.data;
  return (
    <ModalOverlay className="modal-overlay" isDismissable isOpen onOpenChange={(open) => !open && onClose()}>
      <Modal className="modal wide">
        <Dialog className="dialog" aria-labelledby="preview-heading">
          <Heading slot="title" id="preview-heading">
            Preview
          </Heading>
          <p className="muted">What the delivery API answers for the saved working copy{locale ? ` in ${locale}` : ""} (drafts included), shown as text. This project has no preview URL set.</p>
          {preview.isPending && <p aria-busy="true">Loading the preview…</p>}
          {preview.isError && (
            <p role="alert" className="alert error">
              {messageOf(preview.error)}
            </p>
          )}
          {node && (
            <article className="ed-preview" aria-label="Delivered content">
              <h3 className="ed-preview-title">{node.title}</h3>
              <p className="muted">
                Path <span className="path">/{node.path}</span> · locale {node.locale}
              </p>
              <h4>Fields</h4>
              <Values values={node.fields} label="fields" />
              <h4>Blocks</h4>
              {node.blocks.length === 0 ? (
                <p className="muted">No blocks.</p>
              ) : (
                <ol className="ed-blocks">
                  {node.blocks.map((b) => (
                    <li key={b.id}>
                      <p className="ed-block-type">{b.type}</p>
                      <Values values={b.data} label="data" />
                    </li>
                  ))}
                </ol>
              )}
            </article>
          )}
          <div className="dialog-actions">
            <Button className="st-button" slot="close" autoFocus>
              Close
            </Button>
          </div>
        </Dialog>
      </Modal>
    </ModalOverlay>
  );
}
