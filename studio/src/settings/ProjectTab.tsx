// The project's own settings: name, slug, locales, default locale, public base URL, preview URL (PATCH
// /admin/projects/{ref}). Read-only without projects:write. A slug change moves the screen to
// the new address.
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { useState } from "react";
import { Button, FieldError, Form, Input, Label, ListBox, ListBoxItem, Popover, Select, SelectValue, Text, TextField } from "react-aria-components";
import { data, enc } from "../app/api";
import { keys } from "../app/queries";
import type { Project } from "../app/types";
import { ErrorText, StatusText } from "./Alert";
import { type FormErrors, formErrors, NO_ERRORS } from "./errors";
import { TextSetting } from "./Field";

const FIELDS = ["name", "slug", "locales", "default_locale", "public_base_url", "preview_url"] as const;

interface Draft {
  name: string;
  slug: string;
  locales: string[];
  default_locale: string;
  public_base_url: string;
  preview_url: string;
}

const draftOf = (p: Project): Draft => ({
  name: p.name,
  slug: p.slug,
  locales: [...p.locales],
  default_locale: p.default_locale,
  public_base_url: p.public_base_url ?? "",
  preview_url: p.preview_url ?? "",
});

export function ProjectTab({ project, canEdit }: { project: Project; canEdit: boolean }) {
  const qc = useQueryClient();
  const navigate = useNavigate();
  const [draft, setDraft] = useState<Draft>(() => draftOf(project));
  const [newLocale, setNewLocale] = useState("");
  const [localeError, setLocaleError] = useState<string | null>(null);
  const [errors, setErrors] = useState<FormErrors>(NO_ERRORS);
  const [saved, setSaved] = useState<string | null>(null);
  const set = <K extends keyof Draft>(k: K, v: Draft[K]) => {
    setDraft((d) => ({ ...d, [k]: v }));
    setSaved(null);
  };

  const save = useMutation({
    mutationFn: () =>
      data<Project>(`/admin/projects/${enc(project.id)}`, {
        method: "PATCH",
        body: {
          name: draft.name,
          slug: draft.slug,
          locales: draft.locales,
          default_locale: draft.default_locale,
          public_base_url: draft.public_base_url.trim() || null,
          preview_url: draft.preview_url.trim() || null,
        },
      }),
    onSuccess: (p) => {
      setErrors(NO_ERRORS);
      setDraft(draftOf(p));
      setSaved("Project settings saved.");
      qc.setQueryData(keys.project(p.slug), p);
      if (p.slug !== project.slug) {
        qc.removeQueries({ queryKey: keys.project(project.slug) });
        void navigate({ to: "/p/$slug/settings", params: { slug: p.slug }, replace: true });
      }
    },
    onError: (err) => {
      setSaved(null);
      setErrors(formErrors(err, FIELDS));
    },
  });

  const addLocale = () => {
    const tag = newLocale.trim();
    if (!/^[A-Za-z0-9-]{2,35}$/.test(tag)) {
      setLocaleError("A locale is a BCP 47 tag such as fr or pt-BR.");
      return;
    }
    if (draft.locales.some((l) => l.toLowerCase() === tag.toLowerCase())) {
      setLocaleError(`${tag} is already a locale of this project.`);
      return;
    }
    setLocaleError(null);
    set("locales", [...draft.locales, tag]);
    setNewLocale("");
  };
  const removeLocale = (tag: string) =>
    set(
      "locales",
      draft.locales.filter((l) => l !== tag),
    );

  return (
    <Form
      className="settings-form"
      aria-label="Project settings"
      onSubmit={(e) => {
        e.preventDefault();
        if (canEdit) save.mutate();
      }}
    >
      <h2>Project</h2>
      {!canEdit && <p className="notice">You can read these settings; changing them needs the projects:write right (an instance owner’s).</p>}
      <ErrorText message={errors.general} />
      <TextSetting label="Name" value={draft.name} onChange={(v) => set("name", v)} error={errors.fields.name} readOnly={!canEdit} maxLength={200} isRequired />
      <TextSetting
        label="Slug"
        value={draft.slug}
        onChange={(v) => set("slug", v)}
        error={errors.fields.slug}
        readOnly={!canEdit}
        help="The project’s address in the API and the studio. Changing it breaks links that name the old slug."
        isRequired
      />
      <fieldset className="settings-fieldset" aria-describedby={errors.fields.locales ? "locales-error" : undefined}>
        <legend>Locales</legend>
        <ul className="locale-list">
          {draft.locales.map((l) => (
            <li key={l} className="locale-chip">
              <span>{l}</span>
              {l === draft.default_locale && <span className="st-badge badge-current">default</span>}
              {canEdit && l !== draft.default_locale && (
                <Button className="st-button quiet small" aria-label={`Remove locale ${l}`} onPress={() => removeLocale(l)}>
                  Remove
                </Button>
              )}
            </li>
          ))}
        </ul>
        {errors.fields.locales && (
          <p className="st-field-error" id="locales-error">
            {errors.fields.locales}
          </p>
        )}
        {canEdit && (
          <div className="inline-add">
            <TextField
              className="st-field"
              value={newLocale}
              onChange={(v) => {
                setNewLocale(v);
                setLocaleError(null);
              }}
              isInvalid={!!localeError}
              validationBehavior="aria"
              onKeyDown={(e) => {
                // Enter here adds the locale rather than saving the whole form.
                if (e.key === "Enter") {
                  e.preventDefault();
                  addLocale();
                }
              }}
            >
              <Label>New locale</Label>
              <Input placeholder="e.g. de or pt-BR" spellCheck={false} />
              <Text slot="description" className="help">
                Added to the list; saved with the form.
              </Text>
              <FieldError className="st-field-error">{localeError}</FieldError>
            </TextField>
            <Button className="st-button" onPress={addLocale}>
              Add locale
            </Button>
          </div>
        )}
      </fieldset>
      <Select
        className="st-field select"
        selectedKey={draft.default_locale}
        onSelectionChange={(k) => k !== null && set("default_locale", String(k))}
        isDisabled={!canEdit}
        isInvalid={!!errors.fields.default_locale}
        validationBehavior="aria"
      >
        <Label>Default locale</Label>
        <Button className="st-select-button">
          <SelectValue />
          <span aria-hidden="true">▾</span>
        </Button>
        <FieldError className="st-field-error">{errors.fields.default_locale}</FieldError>
        <Popover className="st-popover">
          <ListBox className="st-listbox">
            {draft.locales.map((l) => (
              <ListBoxItem key={l} id={l} className="st-listbox-item">
                {l}
              </ListBoxItem>
            ))}
          </ListBox>
        </Popover>
      </Select>
      <TextSetting
        label="Public base URL"
        value={draft.public_base_url}
        onChange={(v) => set("public_base_url", v)}
        error={errors.fields.public_base_url}
        readOnly={!canEdit}
        help="The website’s public origin, e.g. https://example.com (empty: none)."
        placeholder="https://example.com"
      />
      <TextSetting
        label="Preview URL"
        value={draft.preview_url}
        onChange={(v) => set("preview_url", v)}
        error={errors.fields.preview_url}
        readOnly={!canEdit}
        help="The site’s draft-mode address that the editor’s Preview opens, with {token} (a fresh preview token), and optionally {path} and {locale}, e.g. https://example.com/api/draft?token={token}&path={path}. Empty: the studio’s own preview."
        placeholder="https://example.com/api/draft?token={token}&path={path}"
      />
      {canEdit && (
        <div className="settings-actions">
          <Button type="submit" className="st-button primary" isDisabled={save.isPending}>
            {save.isPending ? "Saving…" : "Save project"}
          </Button>
        </div>
      )}
      <StatusText message={saved} />
    </Form>
  );
}
