// `media`: the chosen item's thumbnail and alt text, `Choose media` (a dialog with the project's
// library: search, type filter and upload; Enter or a click picks an item) and `Remove`. The
// stored value stays the item's id. `ChooseMedia` also serves the theme's logo and favicon.
import { useQuery } from "@tanstack/react-query";
import { useParams } from "@tanstack/react-router";
import { memo, type ReactNode } from "react";
import { Button, Dialog, DialogTrigger, Heading, Modal, ModalOverlay } from "react-aria-components";
import { ApiError } from "../app/api";
import { useMe, useProject } from "../app/queries";
import { useForm } from "../form/context";
import { useField } from "../form/store";
import { altIn, canWriteMedia, fileUrl, type MediaItem, mediaKeys, readMedia } from "../media/api";
import { MediaLibrary } from "../media/MediaLibrary";
import "../media/media.css";
import { FieldFrame, type FieldProps, LabelText, useFieldMeta } from "./field-frame";

export const MediaField = memo(function MediaField(props: FieldProps): ReactNode {
  const form = useForm();
  const { slug } = useParams({ strict: false }) as { slug?: string };
  const [value, setValue] = useField<unknown>(form.store, props.pointer);
  const chosen = typeof value === "string" && value !== "" ? value : null;
  const meta = useFieldMeta(props, "chosen");
  const ref = slug ?? "";
  const project = useProject(ref);
  const me = useMe(ref);
  const item = useQuery({ queryKey: mediaKeys.item(ref, chosen ?? ""), queryFn: () => readMedia(ref, chosen ?? ""), enabled: !!chosen && !!slug, staleTime: 30_000 });
  const locale = form.translation?.locale ?? project.data?.default_locale;
  const gone = item.error instanceof ApiError && item.error.status === 404;
  const alt = item.data ? altIn(item.data, locale, project.data?.default_locale) : "";

  return (
    <FieldFrame meta={meta} pointer={props.pointer} schema={props.schema}>
      <fieldset className="field-control media-field" aria-describedby={meta.describedBy} aria-invalid={meta.violation !== null || undefined} data-invalid={meta.violation !== null || undefined}>
        <legend className="field-label" id={meta.labelId}>
          <LabelText meta={meta} required={props.required} />
        </legend>
        <div className="media-field-body">
          <div className="media-field-thumb">
            {item.data?.type.startsWith("image/") ? <img src={fileUrl(item.data, 320)} alt={alt} /> : <span aria-hidden="true">{item.data ? item.data.type : "—"}</span>}
          </div>
          <div className="media-field-text" id={`${meta.id}-chosen`}>
            {!chosen ? <p className="muted">No media chosen.</p> : null}
            {chosen && item.isPending ? <p className="muted">Loading…</p> : null}
            {chosen && gone ? <p className="field-warning">The chosen media item (id {chosen}) no longer exists.</p> : null}
            {chosen && item.isError && !gone ? <p className="field-warning">The chosen media item cannot be read: {item.error.message}</p> : null}
            {item.data ? (
              <>
                <p className="media-field-name">{item.data.filename}</p>
                <p className="media-field-alt">{alt ? `Alt text: ${alt}` : "No alt text yet."}</p>
              </>
            ) : null}
          </div>
        </div>
        {!meta.disabled && slug ? (
          <div className="media-row">
            <ChooseMedia slug={slug} purpose={meta.label} canUpload={canWriteMedia(me.data)} locale={locale} defaultLocale={project.data?.default_locale} onPick={(picked) => setValue(picked.id)} />
            {chosen ? (
              <Button className="button button-small" onPress={() => setValue(undefined)}>
                Remove
              </Button>
            ) : null}
          </div>
        ) : null}
      </fieldset>
    </FieldFrame>
  );
});

interface ChooseMediaProps {
  slug: string;
  /** What the file is for ("Hero image", "Logo"), said in the dialog and in the button's name. */
  purpose: string;
  canUpload: boolean;
  locale?: string | undefined;
  defaultLocale?: string | undefined;
  onPick: (item: MediaItem) => void;
  /** The button's accessible name, when a screen has several (it starts with its text, Choose media). */
  buttonLabel?: string;
  buttonClassName?: string;
}

/** `Choose media`: a dialog with the project's library (search, type filter, upload); Enter or a click on a file picks it and closes the dialog. */
export function ChooseMedia({ slug, purpose, canUpload, locale, defaultLocale, onPick, buttonLabel, buttonClassName = "button button-small" }: ChooseMediaProps): ReactNode {
  return (
    <DialogTrigger>
      <Button className={buttonClassName} aria-label={buttonLabel}>
        Choose media
      </Button>
      <ModalOverlay className="modal-overlay" isDismissable>
        <Modal className="modal wide media-modal">
          <Dialog className="dialog">
            {({ close }) => (
              <>
                <Heading slot="title">Choose media</Heading>
                <p className="muted">For “{purpose}”. Press Enter on a file, or click it, to choose it.</p>
                <MediaLibrary
                  slug={slug}
                  label="Media to choose from"
                  canUpload={canUpload}
                  compact
                  locale={locale}
                  defaultLocale={defaultLocale}
                  onAction={(picked) => {
                    onPick(picked);
                    close();
                  }}
                />
                <div className="dialog-actions">
                  <Button className="st-button" slot="close">
                    Cancel
                  </Button>
                </div>
              </>
            )}
          </Dialog>
        </Modal>
      </ModalOverlay>
    </DialogTrigger>
  );
}
