// A choice among a few fixed options (React Aria's Select: a button that opens a list box, arrows
// and type-ahead to move, Enter to choose), named by a visible label or, in a table's cell, by an
// aria-label only.
import { Button, Label, ListBox, ListBoxItem, Popover, Select, SelectValue } from "react-aria-components";

interface SelectFieldProps<K extends string> {
  label: string;
  /** The label is read by screen readers only (a table's cell, where the column header shows it). */
  hideLabel?: boolean;
  options: ReadonlyArray<readonly [K, string]>;
  value: K;
  onChange: (value: K) => void;
  isDisabled?: boolean;
  className?: string;
}

export function SelectField<K extends string>({ label, hideLabel, options, value, onChange, isDisabled, className }: SelectFieldProps<K>) {
  return (
    <Select
      aria-label={hideLabel ? label : undefined}
      className={className ?? "st-field select"}
      selectedKey={value}
      isDisabled={isDisabled}
      onSelectionChange={(k) => k !== null && onChange(String(k) as K)}
    >
      {!hideLabel && <Label>{label}</Label>}
      <Button className="st-select-button">
        <SelectValue />
        <span aria-hidden="true">▾</span>
      </Button>
      <Popover className="st-popover">
        <ListBox className="st-listbox">
          {options.map(([id, name]) => (
            <ListBoxItem key={id} id={id} className="st-listbox-item">
              {name}
            </ListBoxItem>
          ))}
        </ListBox>
      </Popover>
    </Select>
  );
}
