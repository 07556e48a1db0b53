// The one field registry: a widget per JSON Schema `format`, else per `type`; anything else (no
// schema, an unknown type, a composition such as oneOf) gets the JSON editor.
import type { ReactNode } from "react";
import type { JsonSchema } from "../form/types";
import { ArrayField } from "./array-field";
import { BooleanField, EnumField } from "./choice-fields";
import { ColorField } from "./color-field";
import { DateTimeField } from "./date-time-field";
import type { FieldProps } from "./field-frame";
import { JsonField } from "./json-field";
import { MediaField } from "./media-field";
import { NodeField } from "./node-field";
import { NumberField } from "./number-field";
import { ObjectField } from "./object-field";
import { HtmlField, MarkdownField } from "./rich-text-fields";
import { formatOf, isRecord, typeOf } from "./schema";
import { StringField, UriField } from "./text-fields";

export type Widget = (props: FieldProps) => ReactNode;

const byFormat: Record<string, Widget> = {
  markdown: MarkdownField,
  html: HtmlField,
  uri: UriField,
  "date-time": DateTimeField,
  color: ColorField,
  node: NodeField,
  media: MediaField,
};

const byType: Record<string, Widget> = {
  string: StringField,
  number: NumberField,
  integer: NumberField,
  boolean: BooleanField,
  object: ObjectField,
  array: ArrayField,
};

export function widgetFor(schema: JsonSchema | null | undefined): Widget {
  if (!isRecord(schema)) return JsonField;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return EnumField;
  const type = typeOf(schema);
  const format = formatOf(schema);
  if (format !== null && (type === "string" || type === null) && Object.hasOwn(byFormat, format)) return byFormat[format] as Widget;
  return (type !== null && Object.hasOwn(byType, type) ? byType[type] : undefined) ?? JsonField;
}
