// The project's brand: logo, favicon, accent colour and a name override (PATCH /admin/p/{ref}/theme),
// beside a live preview of a site header drawn with React from the form's values. The logo and the
// favicon are typed as addresses or chosen from the media library (the media field's dialog).
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Button, Form } from "react-aria-components";
import { data, projectBase } from "../app/api";
import { useMe } from "../app/queries";
import { ChooseMedia } from "../fields/media-field";
import { canWriteMedia, type MediaItem } from "../media/api";
import { ErrorText, StatusText } from "./Alert";
import { type FormErrors, formErrors, NO_ERRORS } from "./errors";
import { TextSetting } from "./Field";
import type { Theme } from "./types";

const FIELDS = ["logo_url", "favicon_url", "accent_color", "name_override"] as const;
const HEX6 = /^#[0-9a-fA-F]{6}$/;
/** The theme's images: each typed as an address or chosen from the media library. */
const IMAGES = [
  ["logo_url", "Logo URL", "Logo", "A file of the media library, an absolute http(s) URL or a path on the site, e.g. /media/logo.svg (empty: none)."],
  ["favicon_url", "Favicon URL", "Favicon", "A file of the media library, an absolute http(s) URL or a path on the site."],
] as const;
/** The header colour of a theme without an accent (the studio's own). */
const DEFAULT_ACCENT = "#2f5bd3";

interface Draft {
  logo_url: string;
  favicon_url: string;
  accent_color: string;
  name_override: string;
}

const draftOf = (t: Theme): Draft => ({ logo_url: t.logo_url ?? "", favicon_url: t.favicon_url ?? "", accent_color: t.accent_color ?? "", name_override: t.name_override ?? "" });
const orNull = (s: string) => (s.trim() === "" ? null : s.trim());
const themeKey = (slug: string) => ["theme", slug] as const;

/**
 * A library file's delivery address without its version tag (?v=): the theme takes no query in
 * its addresses, and the file answers without one (with a shorter cache lifetime).
 */
function addressOf(item: MediaItem): string {
  const u = new URL(item.url);
  return u.origin + u.pathname;
}

export function ThemeTab({ slug, projectName }: { slug: string; projectName: string }) {
  const theme = useQuery({ queryKey: themeKey(slug), queryFn: () => data<Theme>(`${projectBase(slug)}/theme`) });
  if (theme.isPending) return <p aria-busy="true">Loading the theme…</p>;
  if (theme.isError) return <ErrorText message={theme.error.message} />;
  return <ThemeForm slug={slug} projectName={projectName} theme={theme.data} />;
}

function ThemeForm({ slug, projectName, theme }: { slug: string; projectName: string; theme: Theme }) {
  const qc = useQueryClient();
  const canUpload = canWriteMedia(useMe(slug).data);
  const [draft, setDraft] = useState<Draft>(() => draftOf(theme));
  const [errors, setErrors] = useState<FormErrors>(NO_ERRORS);
  const [saved, setSaved] = useState<string | null>(null);
  const set = (k: keyof Draft, v: string) => {
    setDraft((d) => ({ ...d, [k]: v }));
    setSaved(null);
  };
  const save = useMutation({
    mutationFn: () =>
      data<Theme>(`${projectBase(slug)}/theme`, {
        method: "PATCH",
        body: { logo_url: orNull(draft.logo_url), favicon_url: orNull(draft.favicon_url), accent_color: orNull(draft.accent_color)?.toLowerCase() ?? null, name_override: orNull(draft.name_override) },
      }),
    onSuccess: (t) => {
      setErrors(NO_ERRORS);
      setDraft(draftOf(t));
      qc.setQueryData(themeKey(slug), t);
      setSaved("Theme saved.");
    },
    onError: (err) => {
      setSaved(null);
      setErrors(formErrors(err, FIELDS));
    },
  });
  const accentText = draft.accent_color.trim();
  const accentError = errors.fields.accent_color ?? (accentText !== "" && !HEX6.test(accentText) ? "An accent colour is #rrggbb, e.g. #0a7d55." : undefined);
  return (
    <div className="theme-layout">
      <Form
        className="settings-form"
        aria-label="Theme"
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate();
        }}
      >
        <h2>Theme</h2>
        <p className="muted">Readers see these at once: there is no draft of the theme.</p>
        <ErrorText message={errors.general} />
        {IMAGES.map(([field, label, purpose, help]) => (
          <div className="theme-image-row" key={field}>
            <TextSetting label={label} value={draft[field]} onChange={(v) => set(field, v)} error={errors.fields[field]} help={help} />
            <ChooseMedia
              slug={slug}
              purpose={purpose}
              buttonLabel={`Choose media for the ${purpose.toLowerCase()}`}
              buttonClassName="st-button"
              canUpload={canUpload}
              onPick={(item) => set(field, addressOf(item))}
            />
          </div>
        ))}
        <div className="theme-color-row">
          <TextSetting label="Accent colour" value={draft.accent_color} onChange={(v) => set("accent_color", v)} error={accentError} placeholder="#rrggbb" help="#rrggbb (empty: the default)." />
          <input
            type="color"
            className="theme-swatch"
            aria-label="Accent colour picker"
            value={HEX6.test(accentText) ? accentText.toLowerCase() : DEFAULT_ACCENT}
            onChange={(e) => set("accent_color", e.currentTarget.value)}
          />
        </div>
        <TextSetting
          label="Name override"
          value={draft.name_override}
          onChange={(v) => set("name_override", v)}
          error={errors.fields.name_override}
          maxLength={200}
          help={`Shown instead of “${projectName}” (empty: the project’s name).`}
        />
        <div className="settings-actions">
          <Button type="submit" className="st-button primary" isDisabled={save.isPending || accentError !== undefined}>
            {save.isPending ? "Saving…" : "Save theme"}
          </Button>
        </div>
        <StatusText message={saved} />
      </Form>
      <ThemePreview slug={slug} draft={draft} projectName={projectName} />
    </div>
  );
}

/** Black or white text, whichever reads better on the colour (WCAG relative luminance). */
function textOn(hex: string): string {
  const channel = (i: number) => {
    const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  const l = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
  return (l + 0.05) / 0.05 > 1.05 / (l + 0.05) ? "#000000" : "#ffffff";
}

/**
 * Where the studio's page may load an image at this address from, or null: the studio's CSP allows
 * img-src 'self' data: blob: only, so a logo on another origin is not fetched (the browser would
 * refuse it and report a violation) and the preview names its address as text instead. A file of
 * this project's media library is read from this origin whatever PUBLIC_URL its address carries
 * (the same service answers it).
 */
function loadableSrc(url: string, slug: string): string | null {
  const u = URL.parse(url, window.location.href);
  if (!u) return null;
  if (u.origin === window.location.origin) return u.href;
  return u.pathname.startsWith(`/api/p/${slug}/media/`) ? u.pathname + u.search : null;
}

function PreviewImage({ url, slug, label, className }: { url: string; slug: string; label: string; className: string }) {
  if (!url.trim()) return null;
  const src = loadableSrc(url.trim(), slug);
  if (src) return <img src={src} alt={label} className={className} />;
  return (
    <span className="preview-url">
      {label}: <span className="path">{url}</span>
    </span>
  );
}

/** A mock site header from the form's current values: text and image addresses only, never markup from the database. */
function ThemePreview({ slug, draft, projectName }: { slug: string; draft: Draft; projectName: string }) {
  const accent = HEX6.test(draft.accent_color.trim()) ? draft.accent_color.trim().toLowerCase() : DEFAULT_ACCENT;
  const name = draft.name_override.trim() || projectName;
  return (
    <section className="theme-preview" aria-label="Preview">
      <h3>Preview</h3>
      <div className="preview-header" data-testid="theme-preview-header" data-accent={accent} style={{ backgroundColor: accent, color: textOn(accent) }}>
        <PreviewImage url={draft.favicon_url} slug={slug} label="Favicon" className="preview-favicon" />
        <PreviewImage url={draft.logo_url} slug={slug} label="Logo" className="preview-logo" />
        <span className="preview-name">{name}</span>
        <span className="preview-nav" aria-hidden="true">
          Home · About · Contact
        </span>
      </div>
      <p className="help">Images on another site are named rather than shown: the studio loads images from its own origin only.</p>
    </section>
  );
}
