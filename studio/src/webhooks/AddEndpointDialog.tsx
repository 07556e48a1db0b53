// `Add endpoint`: the URL, an optional description and the events it receives (every event, or a
// checklist of the documented event types); the answer's signing secret is then shown once.
import { useState } from "react";
import { Button, Checkbox, CheckboxGroup, Dialog, FieldError, Form, Heading, Input, Label, Modal, ModalOverlay, Text, TextField } from "react-aria-components";
import { ApiError, data, messageOf } from "../app/api";
import { SecretOnce } from "./SecretOnce";
import { type EndpointCreated, EVENT_TYPES, eventHelp } from "./types";

interface Errors {
  url?: string;
  events?: string;
  description?: string;
  general?: string;
}

/** A refusal read for the form: a message naming one of its fields goes under it, the rest above the form. */
function errorsOf(err: unknown): Errors {
  if (err instanceof ApiError) {
    const field = typeof err.details?.field === "string" ? err.details.field.split(".")[0] : undefined;
    const list = Array.isArray(err.details?.errors) ? (err.details.errors as Array<{ field?: unknown; message?: unknown }>) : [];
    const out: Errors = {};
    const put = (f: unknown, message: string) => {
      const head = typeof f === "string" ? f.split(".")[0] : undefined;
      if (head === "url" || head === "events" || head === "description") out[head] = message;
      else out.general = out.general ? `${out.general}; ${message}` : message;
    };
    if (list.length > 0) for (const e of list) put(e.field, typeof e.message === "string" ? e.message : err.message);
    else put(field, err.message);
    return out;
  }
  return { general: messageOf(err) };
}

export function AddEndpointDialog({ base, onCreated, onClose }: { base: string; onCreated: () => void; onClose: () => void }) {
  const [url, setUrl] = useState("");
  const [description, setDescription] = useState("");
  const [events, setEvents] = useState<string[]>([]);
  const [errors, setErrors] = useState<Errors>({});
  const [busy, setBusy] = useState(false);
  // The secret stays in this component's state only: it goes when the dialog closes.
  const [created, setCreated] = useState<EndpointCreated | null>(null);

  const submit = async () => {
    setErrors({});
    if (events.length === 0) {
      setErrors({ events: "Choose at least one event." });
      return;
    }
    setBusy(true);
    try {
      // A plain call rather than a mutation: the answer holds the secret, which must not stay in a cache.
      const endpoint = await data<EndpointCreated>(base, {
        method: "POST",
        body: { url: url.trim(), events: events.includes("*") ? ["*"] : events, description: description.trim() || null },
      });
      setCreated(endpoint);
      onCreated();
    } catch (err) {
      setErrors(errorsOf(err));
    } finally {
      setBusy(false);
    }
  };

  const every = events.includes("*");
  return (
    <ModalOverlay className="modal-overlay" isOpen isKeyboardDismissDisabled>
      <Modal className="modal wh-modal">
        <Dialog className="dialog">
          {created ? (
            <SecretOnce title="Endpoint added" secret={created.secret} note={`Events go to ${created.url}.`} onDone={onClose} />
          ) : (
            <Form
              className="wh-form"
              onSubmit={(e) => {
                e.preventDefault();
                void submit();
              }}
            >
              <Heading slot="title">Add endpoint</Heading>
              {errors.general && (
                <p role="alert" className="alert error">
                  {errors.general}
                </p>
              )}
              <TextField className="st-field" value={url} onChange={setUrl} isRequired isInvalid={!!errors.url} validationBehavior="aria" type="url" autoFocus maxLength={2048}>
                <Label>URL</Label>
                <Input placeholder="https://build.example.com/hooks/cms" spellCheck={false} />
                <Text slot="description" className="help">
                  Where events are POSTed, signed per the Standard Webhooks specification.
                </Text>
                <FieldError className="st-field-error">{errors.url}</FieldError>
              </TextField>
              <TextField className="st-field" value={description} onChange={setDescription} isInvalid={!!errors.description} validationBehavior="aria" maxLength={500}>
                <Label>Description (optional)</Label>
                <Input />
                <FieldError className="st-field-error">{errors.description}</FieldError>
              </TextField>
              <CheckboxGroup className="st-field wh-events" value={events} onChange={setEvents} isInvalid={!!errors.events} validationBehavior="aria">
                <Label>Events</Label>
                <Text slot="description" className="help">
                  The events sent to this endpoint.
                </Text>
                <Checkbox value="*" className="wh-checkbox">
                  <span className="wh-checkbox-box" aria-hidden="true" />
                  <span>
                    Every event <span className="path">(*)</span>
                  </span>
                </Checkbox>
                {EVENT_TYPES.map((t) => (
                  <Checkbox key={t} value={t} className="wh-checkbox" isDisabled={every}>
                    <span className="wh-checkbox-box" aria-hidden="true" />
                    <span>
                      <span className="path">{t}</span> <span className="muted">– {eventHelp(t)}</span>
                    </span>
                  </Checkbox>
                ))}
                <FieldError className="st-field-error">{errors.events}</FieldError>
              </CheckboxGroup>
              <div className="dialog-actions">
                <Button className="st-button" onPress={onClose}>
                  Cancel
                </Button>
                <Button type="submit" className="st-button primary" isDisabled={busy}>
                  {busy ? "Adding…" : "Add endpoint"}
                </Button>
              </div>
            </Form>
          )}
        </Dialog>
      </Modal>
    </ModalOverlay>
  );
}
