// A refused write, read for the form that sent it: invalid_request answers name each failing field
// in details.errors ({ field: "locales.1", message }), other refusals one in details.field; each
// message goes to its field (the first path segment), and what names no field of the form stays a
// message for the whole form.
import { ApiError, messageOf } from "../app/api";

export interface FormErrors {
  fields: Record<string, string>;
  general: string | null;
}

export const NO_ERRORS: FormErrors = { fields: {}, general: null };

export function formErrors(err: unknown, known: readonly string[]): FormErrors {
  const fields: Record<string, string> = {};
  const stray: string[] = [];
  const put = (field: unknown, message: string) => {
    const head = typeof field === "string" ? field.split(".")[0] : undefined;
    if (head && known.includes(head)) fields[head] = fields[head] ? `${fields[head]}; ${message}` : message;
    else stray.push(typeof field === "string" && field ? `${field}: ${message}` : message);
  };
  if (err instanceof ApiError && err.details) {
    const list = err.details.errors;
    if (Array.isArray(list) && list.length > 0) {
      for (const e of list as Array<{ field?: unknown; message?: unknown }>) put(e.field, typeof e.message === "string" ? e.message : err.message);
    } else if (typeof err.details.field === "string") put(err.details.field, err.message);
    else stray.push(err.message);
  } else stray.push(messageOf(err));
  return { fields, general: stray.length > 0 ? stray.join("; ") : null };
}
