// `Schedule` in the editor: when the node (or, in a locale, its translation) is published and
// unpublished, as two date-time pickers to the minute in the browser's time zone (shown with its UTC
// offset). POST /admin/p/{ref}/nodes/{id}/schedule with publish_at / unpublish_at as RFC 3339 with
// that offset; `Clear` sends null for both. A refusal naming a field (a time in the past, an
// unpublication before the publication, a publication of what is already published) shows there.
import { getLocalTimeZone, now, type ZonedDateTime } from "@internationalized/date";
import { useState } from "react";
import { Button, DateInput, DatePicker, DateSegment, Dialog, FieldError, Form, Group, Heading, Label, Modal, ModalOverlay, Text } from "react-aria-components";
import { ApiError, messageOf, nodeUrl, request } from "../app/api";
import { formatTime } from "../app/time";
import { CalendarPopover, offsetText, parseZoned, toRfc3339 } from "../fields/zoned-time";
import "./editorial.css";

function zoned(iso: string | null, zone: string): ZonedDateTime | null {
  const z = parseZoned(iso, zone);
  return z === "invalid" ? null : z;
}

export interface Schedule {
  publish_at: string | null;
  unpublish_at: string | null;
}

/** What the editor shows under the state badge: "Publishes on …", "Unpublishes on …", or nothing. */
export function ScheduleLine({ schedule, locale }: { schedule: Schedule; locale: string | null }) {
  if (!schedule.publish_at && !schedule.unpublish_at) return null;
  const what = locale ? ` (${locale} translation)` : "";
  return (
    <p className="ed-schedule-line" data-testid="schedule-line">
      {schedule.publish_at && (
        <span>
          Publishes on <time dateTime={schedule.publish_at}>{formatTime(schedule.publish_at)}</time>
          {what}.{" "}
        </span>
      )}
      {schedule.unpublish_at && (
        <span>
          Unpublishes on <time dateTime={schedule.unpublish_at}>{formatTime(schedule.unpublish_at)}</time>
          {what}.
        </span>
      )}
    </p>
  );
}

type Field = "publish_at" | "unpublish_at";

export function ScheduleDialog({
  slug,
  nodeId,
  locale,
  schedule,
  revision,
  onDone,
  onClose,
}: {
  slug: string;
  nodeId: string;
  /** The translation's locale, or null for the node itself. */
  locale: string | null;
  schedule: Schedule;
  revision: number;
  /** After a schedule is set or cleared: the editor reloads and announces. */
  onDone: (message: string) => void;
  onClose: () => void;
}) {
  const zone = getLocalTimeZone();
  const [publishAt, setPublishAt] = useState<ZonedDateTime | null>(() => zoned(schedule.publish_at, zone));
  const [unpublishAt, setUnpublishAt] = useState<ZonedDateTime | null>(() => zoned(schedule.unpublish_at, zone));
  const [errors, setErrors] = useState<Partial<Record<Field, string>>>({});
  const [general, setGeneral] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const placeholder = now(zone).add({ hours: 1 }).set({ minute: 0, second: 0, millisecond: 0 });
  const hasSchedule = !!schedule.publish_at || !!schedule.unpublish_at;

  const send = async (body: Schedule, message: string) => {
    setBusy(true);
    setErrors({});
    setGeneral(null);
    try {
      await request(`${nodeUrl(slug, nodeId)}/schedule`, { method: "POST", body: locale ? { ...body, locale } : body, ifMatch: revision });
      onDone(message);
    } catch (err) {
      const field = err instanceof ApiError ? err.details?.field : undefined;
      if (field === "publish_at" || field === "unpublish_at") setErrors({ [field]: messageOf(err) });
      else setGeneral(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  const picker = (field: Field, label: string, value: ZonedDateTime | null, onChange: (z: ZonedDateTime | null) => void) => (
    <div className="ed-when">
      <DatePicker
        className="field-control date-picker"
        value={value}
        onChange={(z) => {
          onChange(z);
          setErrors((e) => ({ ...e, [field]: undefined }));
        }}
        granularity="minute"
        placeholderValue={placeholder}
        isInvalid={!!errors[field]}
        validationBehavior="aria"
      >
        <Label className="field-label">{label}</Label>
        <Group className="date-group">
          <DateInput className="date-input">{(segment) => <DateSegment className="date-segment" segment={segment} />}</DateInput>
          <Button className="icon-button" aria-label={`Choose the ${label.toLowerCase()} date`}>
            <span aria-hidden="true">▾</span>
          </Button>
        </Group>
        <Text slot="description" className="field-help">
          Time zone: {zone} (UTC{offsetText((value ?? placeholder).offset)}). Empty: none.
        </Text>
        <FieldError className="st-field-error">{errors[field]}</FieldError>
        <CalendarPopover label={label} />
      </DatePicker>
      {value && (
        <Button className="st-button quiet small" onPress={() => onChange(null)} aria-label={`Empty ${label}`}>
          Empty
        </Button>
      )}
    </div>
  );

  return (
    <ModalOverlay className="modal-overlay" isDismissable isOpen onOpenChange={(open) => !open && onClose()}>
      <Modal className="modal">
        <Dialog className="dialog">
          <Form
            className="ed-form"
            onSubmit={(e) => {
              e.preventDefault();
              void send({ publish_at: publishAt ? toRfc3339(publishAt) : null, unpublish_at: unpublishAt ? toRfc3339(unpublishAt) : null }, "Schedule saved");
            }}
          >
            <Heading slot="title">{locale ? `Schedule the ${locale} translation` : "Schedule"}</Heading>
            <p className="muted">The scheduler publishes and unpublishes {locale ? "this translation" : "this page"} within about a second of these times.</p>
            {general && (
              <p role="alert" className="alert error">
                {general}
              </p>
            )}
            {picker("publish_at", "Publish at", publishAt, setPublishAt)}
            {picker("unpublish_at", "Unpublish at", unpublishAt, setUnpublishAt)}
            <div className="dialog-actions">
              <Button className="st-button" onPress={onClose}>
                Cancel
              </Button>
              {hasSchedule && (
                <Button className="st-button danger" isDisabled={busy} onPress={() => void send({ publish_at: null, unpublish_at: null }, "Schedule cleared")}>
                  Clear
                </Button>
              )}
              <Button type="submit" className="st-button primary" isDisabled={busy || (!publishAt && !unpublishAt)}>
                {busy ? "Saving…" : "Save schedule"}
              </Button>
            </div>
          </Form>
        </Dialog>
      </Modal>
    </ModalOverlay>
  );
}
