// A signing secret shown once, in the dialog that made it (create or rotate): a warning, the secret
// as text, `Copy` and `Done`. The secret lives in the caller's component state only and goes when
// the dialog closes: it is not kept in the query cache or anywhere else.
import { useState } from "react";
import { Button, Heading } from "react-aria-components";

export function SecretOnce({ title, secret, note, onDone }: { title: string; secret: string; note?: string; onDone: () => void }) {
  const [copy, setCopy] = useState<string | null>(null);
  const copySecret = async () => {
    try {
      await navigator.clipboard.writeText(secret);
      setCopy("Copied to the clipboard.");
    } catch {
      setCopy("The browser refused the clipboard: select the secret and copy it.");
    }
  };
  return (
    <>
      <Heading slot="title">{title}</Heading>
      <p className="alert" id="webhook-secret-warning">
        Copy the signing secret now and store it with the receiver: it is not shown again. The receiver verifies each request's webhook-signature with it.
      </p>
      {note && <p className="muted">{note}</p>}
      <p className="wh-secret">
        <code data-testid="webhook-secret" aria-describedby="webhook-secret-warning">
          {secret}
        </code>
      </p>
      <p role="status" className="wh-status">
        {copy ?? ""}
      </p>
      <div className="dialog-actions">
        <Button className="st-button" onPress={() => void copySecret()} autoFocus>
          Copy
        </Button>
        <Button className="st-button primary" onPress={onDone}>
          Done
        </Button>
      </div>
    </>
  );
}
