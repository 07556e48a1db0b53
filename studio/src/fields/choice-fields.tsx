// Choices: `enum` (a radio group for up to four options, else a select) and `boolean` (a checkbox).
import { memo, type ReactNode } from "react";
import { Button, Checkbox, Label, ListBox, ListBoxItem, Popover, Radio, RadioGroup, Select, SelectValue } from "react-aria-components";
import { useForm } from "../form/context";
import { useField } from "../form/store";
import { FieldFrame, type FieldProps, LabelText, useFieldMeta } from "./field-frame";

const optionLabel = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v));

/** Options are keyed by their position, so numbers, strings and null all work as enum values. */
export const EnumField = memo(function EnumField(props: FieldProps): ReactNode {
  const { store } = useForm();
  const [value, setValue] = useField<unknown>(store, props.pointer);
  const meta = useFieldMeta(props);
  const options = Array.isArray(props.schema.enum) ? props.schema.enum : [];
  const index = options.findIndex((o) => Object.is(o, value));
  const key = index < 0 ? null : String(index);
  const choose = (k: unknown): void => {
    if (k !== null && k !== undefined) setValue(options[Number(k)]);
  };
  const common = {
    isDisabled: meta.disabled,
    isInvalid: meta.violation !== null,
    isRequired: props.required,
    validationBehavior: "aria" as const,
    "aria-describedby": meta.describedBy,
  };
  const label = (
    <Label className="field-label">
      <LabelText meta={meta} required={props.required} />
    </Label>
  );
  return (
    <FieldFrame meta={meta} pointer={props.pointer} schema={props.schema}>
      {options.length <= 4 ? (
        <RadioGroup className="field-control radio-group" value={key} onChange={choose} {...common}>
          {label}
          {options.map((o, i) => (
            <Radio key={optionLabel(o)} className="radio" value={String(i)}>
              {optionLabel(o)}
            </Radio>
          ))}
        </RadioGroup>
      ) : (
        <Select className="field-control" value={key} onChange={choose} placeholder="Choose…" {...common}>
          {label}
          <Button className="select-button">
            <SelectValue />
            <span aria-hidden="true"> ▾</span>
          </Button>
          <Popover className="popover">
            <ListBox className="listbox">
              {options.map((o, i) => (
                <ListBoxItem key={optionLabel(o)} id={String(i)} className="listbox-item" textValue={optionLabel(o)}>
                  {optionLabel(o)}
                </ListBoxItem>
              ))}
            </ListBox>
          </Popover>
        </Select>
      )}
    </FieldFrame>
  );
});

export const BooleanField = memo(function BooleanField(props: FieldProps): ReactNode {
  const { store } = useForm();
  const [value, setValue] = useField<unknown>(store, props.pointer);
  const meta = useFieldMeta(props);
  return (
    <FieldFrame meta={meta} pointer={props.pointer} schema={props.schema}>
      <Checkbox
        className="field-control checkbox"
        isSelected={value === true}
        onChange={setValue}
        isReadOnly={meta.disabled}
        isDisabled={meta.disabled}
        isInvalid={meta.violation !== null}
        isRequired={props.required}
        validationBehavior="aria"
        aria-describedby={meta.describedBy}
      >
        {({ isSelected }) => (
          <>
            <span className="checkbox-box" aria-hidden="true">
              {isSelected ? "✓" : ""}
            </span>
            <LabelText meta={meta} required={props.required} />
          </>
        )}
      </Checkbox>
    </FieldFrame>
  );
});
