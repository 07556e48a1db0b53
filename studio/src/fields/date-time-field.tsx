// `date-time`: a DatePicker to the minute in the browser's time zone, which is shown; the value is
// stored as an RFC 3339 string with that zone's offset ("2026-03-01T09:30:00+01:00").
import { getLocalTimeZone, now, parseAbsolute, type ZonedDateTime } from "@internationalized/date";
import { memo, type ReactNode } from "react";
import { Button, Calendar, CalendarCell, CalendarGrid, DateInput, DatePicker, DateSegment, Dialog, Group, Heading, Label, Popover } from "react-aria-components";
import { useForm } from "../form/context";
import { useField } from "../form/store";
import { FieldFrame, type FieldProps, LabelText, useFieldMeta } from "./field-frame";

const pad = (n: number, width = 2): string => String(Math.abs(n)).padStart(width, "0");

function offsetText(offsetMs: number): string {
  if (offsetMs === 0) return "+00:00";
  const minutes = Math.round(Math.abs(offsetMs) / 60_000);
  return `${offsetMs < 0 ? "-" : "+"}${pad(Math.floor(minutes / 60))}:${pad(minutes % 60)}`;
}

function toRfc3339(z: ZonedDateTime): string {
  const fraction = z.millisecond > 0 ? `.${pad(z.millisecond, 3)}` : "";
  const offset = z.offset === 0 ? "Z" : offsetText(z.offset);
  return `${pad(z.year, 4)}-${pad(z.month)}-${pad(z.day)}T${pad(z.hour)}:${pad(z.minute)}:${pad(z.second)}${fraction}${offset}`;
}

function parse(value: unknown, zone: string): ZonedDateTime | null | "invalid" {
  if (value === undefined || value === null || value === "") return null;
  if (typeof value !== "string") return "invalid";
  try {
    return parseAbsolute(value, zone);
  } catch {
    return "invalid";
  }
}

export const DateTimeField = memo(function DateTimeField(props: FieldProps): ReactNode {
  const { store } = useForm();
  const [value, setValue] = useField<unknown>(store, props.pointer);
  const zone = getLocalTimeZone();
  const parsed = parse(value, zone);
  const meta = useFieldMeta(props, "zone", ...(parsed === "invalid" ? ["stored"] : []));
  const shown = parsed === "invalid" ? null : parsed;
  const placeholder = now(zone).set({ second: 0, millisecond: 0 });
  return (
    <FieldFrame meta={meta} pointer={props.pointer} schema={props.schema}>
      <DatePicker
        className="field-control date-picker"
        value={shown}
        onChange={(z) => setValue(z ? toRfc3339(z) : undefined)}
        granularity="minute"
        placeholderValue={placeholder}
        isReadOnly={meta.disabled}
        isInvalid={meta.violation !== null}
        isRequired={props.required}
        validationBehavior="aria"
        aria-describedby={meta.describedBy}
      >
        <Label className="field-label">
          <LabelText meta={meta} required={props.required} />
        </Label>
        <Group className="date-group">
          <DateInput className="date-input">{(segment) => <DateSegment className="date-segment" segment={segment} />}</DateInput>
          {meta.disabled ? null : (
            <Button className="icon-button">
              <span aria-hidden="true">▾</span>
            </Button>
          )}
        </Group>
        <Popover className="popover">
          <Dialog className="calendar-dialog">
            <Calendar className="calendar">
              <header className="calendar-header">
                <Button slot="previous" className="icon-button">
                  ‹
                </Button>
                <Heading className="calendar-heading" />
                <Button slot="next" className="icon-button">
                  ›
                </Button>
              </header>
              <CalendarGrid className="calendar-grid">{(date) => <CalendarCell className="calendar-cell" date={date} />}</CalendarGrid>
            </Calendar>
          </Dialog>
        </Popover>
      </DatePicker>
      <p className="field-help" id={`${meta.id}-zone`}>
        Time zone: {zone} (UTC{offsetText((shown ?? placeholder).offset)})
      </p>
      {parsed === "invalid" ? (
        <p className="field-help field-warning" id={`${meta.id}-stored`}>
          The stored value is not a date and time: {String(value)}
        </p>
      ) : null}
    </FieldFrame>
  );
});
