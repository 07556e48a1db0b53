// What every date-time picker of the studio shares: offsets and RFC 3339 text of a zoned time, and
// the calendar popover under a DatePicker (the `date-time` field, the Schedule dialog).
import { parseAbsolute, type ZonedDateTime } from "@internationalized/date";
import { Button, Calendar, CalendarCell, CalendarGrid, Dialog, Heading, Popover } from "react-aria-components";

const pad = (n: number, width = 2): string => String(Math.abs(n)).padStart(width, "0");

/** An offset in milliseconds as ±HH:MM. */
export function offsetText(offsetMs: number): string {
  if (offsetMs === 0) return "+00:00";
  const minutes = Math.round(Math.abs(offsetMs) / 60_000);
  return `${offsetMs < 0 ? "-" : "+"}${pad(Math.floor(minutes / 60))}:${pad(minutes % 60)}`;
}

/** A zoned time as RFC 3339 with its offset ("2026-03-01T09:30:00+01:00"; UTC as Z). */
export function toRfc3339(z: ZonedDateTime): string {
  const fraction = z.millisecond > 0 ? `.${pad(z.millisecond, 3)}` : "";
  const offset = z.offset === 0 ? "Z" : offsetText(z.offset);
  return `${pad(z.year, 4)}-${pad(z.month)}-${pad(z.day)}T${pad(z.hour)}:${pad(z.minute)}:${pad(z.second)}${fraction}${offset}`;
}

/** An RFC 3339 string in a time zone; null when empty, "invalid" when it is not one. */
export function parseZoned(value: unknown, zone: string): ZonedDateTime | null | "invalid" {
  if (value === undefined || value === null || value === "") return null;
  if (typeof value !== "string") return "invalid";
  try {
    return parseAbsolute(value, zone);
  } catch {
    return "invalid";
  }
}

/** The calendar a DatePicker opens. */
export function CalendarPopover({ label }: { label?: string }) {
  return (
    <Popover className="popover">
      <Dialog className="calendar-dialog" aria-label={label ? `${label}: calendar` : undefined}>
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
  );
}
