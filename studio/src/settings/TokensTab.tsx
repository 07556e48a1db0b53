// The project's MCP tokens: the list (name, scopes, created, last used, expiry) for ai:read;
// `Create token` and delete for ai:write. A new token's plaintext is shown once, in the dialog that
// created it, and kept nowhere else (not in the query cache, not in the list).
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Button, Checkbox, CheckboxGroup, Dialog, FieldError, Form, Heading, Label, Modal, ModalOverlay, Text } from "react-aria-components";
import { data, enc, messageOf, projectBase, request } from "../app/api";
import { DataTable, useConfirm } from "../app/DataTable";
import { formatTime } from "../app/time";
import { ErrorText } from "./Alert";
import { type FormErrors, formErrors, NO_ERRORS } from "./errors";
import { TextSetting } from "./Field";
import { DEFAULT_TOKEN_SCOPES } from "./rights";
import { ScopeList } from "./ScopeList";
import type { CreatedToken, McpScope, McpToken } from "./types";

const FIELDS = ["name", "scopes", "expires_at"] as const;

export function TokensTab({ slug, canEdit, scopes }: { slug: string; canEdit: boolean; scopes: McpScope[] }) {
  const qc = useQueryClient();
  const listKey = ["mcp-tokens", slug] as const;
  const base = `${projectBase(slug)}/ai/mcp/tokens`;
  const tokens = useQuery({ queryKey: listKey, queryFn: () => data<McpToken[]>(base) });
  const [creating, setCreating] = useState(false);
  const remove = useMutation({
    mutationFn: (t: McpToken) => request(`${base}/${enc(t.id)}`, { method: "DELETE" }),
    onSuccess: () => void qc.invalidateQueries({ queryKey: listKey }),
  });
  const confirmDelete = useConfirm<McpToken>(
    (t) => remove.mutate(t),
    (t) => ({ title: "Delete the token?", body: `${t.name} stops working at once: agents that use it lose access to this project.`, confirmLabel: "Delete token" }),
  );
  return (
    <section aria-labelledby="tokens-heading">
      <div className="settings-head">
        <h2 id="tokens-heading">MCP tokens</h2>
        {canEdit && (
          <Button className="st-button primary" onPress={() => setCreating(true)}>
            Create token
          </Button>
        )}
      </div>
      <p className="muted">Bearer tokens for AI agents that reach this project over MCP. Only a hint of each is stored in a readable form.</p>
      {remove.isError && <ErrorText message={messageOf(remove.error)} />}
      <DataTable
        query={tokens}
        rowKey={(t) => t.id}
        caption="MCP tokens"
        loadingText="Loading the tokens…"
        empty={<p className="notice">No MCP token yet.</p>}
        columns={[
          { header: "Name", rowHeader: true, cell: (t) => t.name },
          { header: "Token", cell: (t) => <span className="path">{t.token_hint}</span> },
          { header: "Scopes", cell: (t) => <ScopeList scopes={t.scopes} /> },
          { header: "Created", cell: (t) => formatTime(t.created_at) },
          { header: "Last used", cell: (t) => (t.last_used_at ? formatTime(t.last_used_at) : "Never") },
          { header: "Expires", cell: (t) => (t.expires_at ? formatTime(t.expires_at) : "Never") },
        ]}
        actions={
          canEdit
            ? (t) => (
                <Button className="st-button danger small" aria-label={`Delete ${t.name}`} isDisabled={remove.isPending} onPress={() => confirmDelete.ask(t)}>
                  Delete
                </Button>
              )
            : undefined
        }
      />
      {creating && (
        <ModalOverlay className="modal-overlay" isOpen isKeyboardDismissDisabled>
          <Modal className="modal">
            <Dialog className="dialog">
              <CreateToken base={base} scopes={scopes} onCreated={() => void qc.invalidateQueries({ queryKey: listKey })} onClose={() => setCreating(false)} />
            </Dialog>
          </Modal>
        </ModalOverlay>
      )}
      {confirmDelete.dialog}
    </section>
  );
}

/** The end of the chosen day in the person's time zone, as RFC 3339. */
const endOfDay = (day: string): string => new Date(`${day}T23:59:59`).toISOString();

function CreateToken({ base, scopes, onCreated, onClose }: { base: string; scopes: McpScope[]; onCreated: () => void; onClose: () => void }) {
  const [name, setName] = useState("");
  const [chosen, setChosen] = useState<string[]>(() => DEFAULT_TOKEN_SCOPES.filter((s) => scopes.includes(s)));
  const [expires, setExpires] = useState("");
  const [errors, setErrors] = useState<FormErrors>(NO_ERRORS);
  const [busy, setBusy] = useState(false);
  // The plaintext lives in this component's state only: it goes when the dialog closes.
  const [created, setCreated] = useState<CreatedToken | null>(null);

  const submit = async () => {
    setErrors(NO_ERRORS);
    if (chosen.length === 0) {
      setErrors({ fields: { scopes: "Choose at least one scope." }, general: null });
      return;
    }
    setBusy(true);
    try {
      // A plain call rather than a mutation: the answer holds the plaintext, which must not stay in a cache.
      const token = await data<CreatedToken>(base, { method: "POST", body: { name, scopes: chosen, expires_at: expires ? endOfDay(expires) : null } });
      setCreated(token);
      onCreated();
    } catch (err) {
      setErrors(formErrors(err, FIELDS));
    } finally {
      setBusy(false);
    }
  };

  if (created) return <TokenOnce token={created} onClose={onClose} />;
  return (
    <Form
      className="dialog-form"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <Heading slot="title">Create token</Heading>
      <ErrorText message={errors.general} />
      <TextSetting label="Name" value={name} onChange={setName} error={errors.fields.name} isRequired maxLength={200} autoFocus help="Who or what uses it, e.g. Claude Desktop (Anna)." />
      <CheckboxGroup className="st-field scope-group" value={chosen} onChange={setChosen} isInvalid={!!errors.fields.scopes} validationBehavior="aria">
        <Label>Scopes</Label>
        <Text slot="description" className="help">
          What the token may do; never more than you may.
        </Text>
        {scopes.map((s) => (
          <Checkbox key={s} value={s} className="settings-checkbox">
            <span className="checkbox-box" aria-hidden="true" />
            {s}
          </Checkbox>
        ))}
        <FieldError className="st-field-error">{errors.fields.scopes}</FieldError>
      </CheckboxGroup>
      <TextSetting label="Expires on (optional)" type="date" value={expires} onChange={setExpires} error={errors.fields.expires_at} help="Empty: the token never expires." />
      <div className="dialog-actions">
        <Button className="st-button" onPress={onClose}>
          Cancel
        </Button>
        <Button type="submit" className="st-button primary" isDisabled={busy}>
          {busy ? "Creating…" : "Create token"}
        </Button>
      </div>
    </Form>
  );
}

function TokenOnce({ token, onClose }: { token: CreatedToken; onClose: () => void }) {
  const [copy, setCopy] = useState<string | null>(null);
  const copyToken = async () => {
    try {
      await navigator.clipboard.writeText(token.token);
      setCopy("Copied to the clipboard.");
    } catch {
      setCopy("The browser refused the clipboard: select the token and copy it.");
    }
  };
  return (
    <>
      <Heading slot="title">Token {token.name} created</Heading>
      <p className="alert" id="token-warning">
        Copy the token now: it is not shown again. Only its hint ({token.token_hint}) stays in the list.
      </p>
      <p className="token-plain">
        <code data-testid="token-plaintext">{token.token}</code>
      </p>
      <p role="status" className="settings-status">
        {copy ?? ""}
      </p>
      <div className="dialog-actions">
        <Button className="st-button" onPress={() => void copyToken()} autoFocus>
          Copy
        </Button>
        <Button className="st-button primary" onPress={onClose}>
          Done
        </Button>
      </div>
    </>
  );
}
