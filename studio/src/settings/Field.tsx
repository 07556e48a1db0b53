// A labelled text box of a settings form, with its refusal shown under it (aria-describedby, and
// aria-invalid on the control) as the server names it.
import { FieldError, Input, Label, Text, TextField } from "react-aria-components";

export interface TextSettingProps {
  label: string;
  value: string;
  onChange?: (v: string) => void;
  error?: string | undefined;
  help?: string;
  readOnly?: boolean;
  type?: "text" | "url" | "password" | "date";
  placeholder?: string;
  /** The on-screen keyboard a phone shows (numeric for a count). */
  inputMode?: "numeric";
  maxLength?: number;
  isRequired?: boolean;
  autoFocus?: boolean;
  name?: string;
  className?: string;
}

export function TextSetting(p: TextSettingProps) {
  return (
    <TextField
      className={`st-field${p.className ? ` ${p.className}` : ""}`}
      value={p.value}
      onChange={p.onChange}
      isReadOnly={p.readOnly}
      isInvalid={!!p.error}
      isRequired={p.isRequired && !p.readOnly}
      maxLength={p.maxLength}
      type={p.type ?? "text"}
      autoFocus={p.autoFocus}
      name={p.name}
      validationBehavior="aria"
    >
      <Label>{p.label}</Label>
      <Input placeholder={p.placeholder} inputMode={p.inputMode} spellCheck={false} />
      {p.help && (
        <Text slot="description" className="help">
          {p.help}
        </Text>
      )}
      <FieldError className="st-field-error">{p.error}</FieldError>
    </TextField>
  );
}
