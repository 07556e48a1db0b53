// `date-time`: a DatePicker to the minute in the browser's time zone, which is shown; the value is
// stored as an RFC 3339 string with that zone's offset ("2026-03-01T09:30:00+01:00").
import { getLocalTimeZone, now } from "@internationalized/date";
import { memo, type ReactNode } from "react";
import { Button, DateInput, DatePicker, DateSegment, Group, Label } from "react-aria-components";
import { useForm } from "../form/context";
import { useField } from "../form/store";
import { FieldFrame, type FieldProps, LabelText, useFieldMeta } from "./field-frame";
import { CalendarPopover, offsetText, parseZoned, toRfc3339 } from "./zoned-time";

export const DateTimeField = memo(function DateTimeField(props: FieldProps): ReactNode {
  const { store } = useForm();
  const [value, setValue] = useField<unknown>(store, props.pointer);
  const zone = getLocalTimeZone();
  const parsed = parseZoned(value, zone);
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
        <CalendarPopover />
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
