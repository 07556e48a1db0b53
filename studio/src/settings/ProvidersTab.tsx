// The project's AI providers: the list (kind, model, masked key, default) for ai:read; for ai:write
// `Add provider`, an edit form that loads the provider with its key (GET /admin/ai/providers/{id}),
// set default and delete. `Test connection` translates one word into the project's second locale
// with that provider (translate_text) and shows the translation or the vendor's refusal.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Button, Dialog, FieldError, Form, Heading, Label, ListBox, ListBoxItem, Modal, ModalOverlay, Popover, Select, SelectValue, ToggleButton } from "react-aria-components";
import { data, enc, messageOf, projectBase, request } from "../app/api";
import { DataTable, useConfirm } from "../app/DataTable";
import type { Project } from "../app/types";
import { ErrorText } from "./Alert";
import { providersKey, semanticKey, useProviders } from "./ai-queries";
import { type FormErrors, formErrors, NO_ERRORS } from "./errors";
import { TextSetting } from "./Field";
import type { Kind, Provider, ProviderWithKey } from "./types";

const FIELDS = ["name", "kind", "model", "base_url", "api_key"] as const;
/** The word `Test connection` asks the provider to translate. */
const TEST_WORD = "Hello";
const providerUrl = (id: string) => `/admin/ai/providers/${enc(id)}`;

type Editing = { mode: "create" } | { mode: "edit"; id: string };
interface TestResult {
  provider: string;
  ok: boolean;
  text: string;
}

export function ProvidersTab({ project, canEdit }: { project: Project; canEdit: boolean }) {
  const qc = useQueryClient();
  const slug = project.slug;
  const providers = useProviders(project);
  const [editing, setEditing] = useState<Editing | null>(null);
  const [test, setTest] = useState<TestResult | null>(null);
  const target = project.locales.find((l) => l !== project.default_locale) ?? null;
  // Semantic search is read again too: it names a provider, and deleting that one turns it off.
  const refresh = () => Promise.all([providersKey, semanticKey].map((key) => qc.invalidateQueries({ queryKey: key(project.id) })));

  const makeDefault = useMutation({
    mutationFn: (p: Provider) => data<Provider>(providerUrl(p.id), { method: "PATCH", body: { is_default: true } }),
    onSuccess: () => void refresh(),
  });
  const remove = useMutation({
    mutationFn: (p: Provider) => request(providerUrl(p.id), { method: "DELETE" }),
    onSuccess: () => void refresh(),
  });
  const confirmDelete = useConfirm<Provider>(
    (p) => remove.mutate(p),
    (p) => ({
      title: "Delete the provider?",
      body: `${p.name} and its stored key are deleted. Translations that use it stop working until another provider is the default.`,
      confirmLabel: "Delete provider",
    }),
  );
  const testConnection = useMutation({
    mutationFn: (p: Provider) =>
      data<{ translation: string; provider: string; model: string }>(`${projectBase(slug)}/ai/translate`, {
        method: "POST",
        body: { text: TEST_WORD, to: target ?? "", provider_id: p.id },
      }),
    onMutate: () => setTest(null),
    onSuccess: (r, p) => setTest({ provider: p.name, ok: true, text: `“${TEST_WORD}” in ${target}: “${r.translation}” (${r.provider}, ${r.model}).` }),
    onError: (err, p) => setTest({ provider: p.name, ok: false, text: messageOf(err) }),
  });
  const failure = makeDefault.error ?? remove.error;

  return (
    <section aria-labelledby="providers-heading">
      <div className="settings-head">
        <h2 id="providers-heading">AI providers</h2>
        {canEdit && (
          <Button className="st-button primary" onPress={() => setEditing({ mode: "create" })}>
            Add provider
          </Button>
        )}
      </div>
      <p className="muted">
        The services the project translates with, and embeds its pages with for semantic search (below). Keys are stored sealed and listed masked.
        {target ? ` Test connection translates “${TEST_WORD}” into ${target}.` : " Test connection needs a second locale in the project."}
      </p>
      {failure && <ErrorText message={messageOf(failure)} />}
      <div role="status" className="settings-status">
        {test?.ok && (
          <span className="test-ok">
            Test connection of {test.provider}: {test.text}
          </span>
        )}
        {testConnection.isPending && "Testing the connection…"}
      </div>
      {test && !test.ok && <ErrorText message={`Test connection of ${test.provider} failed: ${test.text}`} />}
      <DataTable
        query={providers}
        rowKey={(p) => p.id}
        caption="AI providers"
        loadingText="Loading the providers…"
        empty={<p className="notice">No provider yet{canEdit ? ": add one to translate with AI." : "."}</p>}
        columns={[
          { header: "Name", rowHeader: true, cell: (p) => p.name },
          { header: "Kind", cell: (p) => p.kind },
          {
            header: "Model",
            cell: (p) => (
              <>
                {p.effective_model}
                {p.model === null && <span className="muted"> (the kind’s default)</span>}
              </>
            ),
          },
          { header: "Key", cell: (p) => <span className="path">{p.api_key_hint ?? "no key"}</span> },
          { header: "Default", cell: (p) => (p.is_default ? <span className="st-badge badge-current">default</span> : <span className="visually-hidden">no</span>) },
        ]}
        actionsClassName="row-actions"
        actions={(p) => (
          <>
            <Button className="st-button small" aria-label={`Test connection of ${p.name}`} isDisabled={!target || testConnection.isPending} onPress={() => testConnection.mutate(p)}>
              Test connection
            </Button>
            {canEdit && (
              <>
                <Button className="st-button small" aria-label={`Edit ${p.name}`} onPress={() => setEditing({ mode: "edit", id: p.id })}>
                  Edit
                </Button>
                {!p.is_default && (
                  <Button className="st-button small" aria-label={`Set default: ${p.name}`} isDisabled={makeDefault.isPending} onPress={() => makeDefault.mutate(p)}>
                    Set default
                  </Button>
                )}
                <Button className="st-button danger small" aria-label={`Delete ${p.name}`} isDisabled={remove.isPending} onPress={() => confirmDelete.ask(p)}>
                  Delete
                </Button>
              </>
            )}
          </>
        )}
      />
      {editing && (
        <ModalOverlay className="modal-overlay" isOpen isDismissable onOpenChange={(open) => !open && setEditing(null)}>
          <Modal className="modal">
            <Dialog className="dialog">
              {editing.mode === "create" ? (
                <ProviderForm slug={slug} provider={null} onDone={() => (setEditing(null), void refresh())} onCancel={() => setEditing(null)} />
              ) : (
                <EditProvider id={editing.id} slug={slug} onDone={() => (setEditing(null), void refresh())} onCancel={() => setEditing(null)} />
              )}
            </Dialog>
          </Modal>
        </ModalOverlay>
      )}
      {confirmDelete.dialog}
    </section>
  );
}

/** The edit form, once the provider and its key are read (never cached: the key is a secret). */
function EditProvider({ id, slug, onDone, onCancel }: { id: string; slug: string; onDone: () => void; onCancel: () => void }) {
  const provider = useQuery({ queryKey: ["ai-provider", id], queryFn: () => data<ProviderWithKey>(providerUrl(id)), staleTime: 0, gcTime: 0 });
  if (provider.isPending)
    return (
      <>
        <Heading slot="title">Edit provider</Heading>
        <p aria-busy="true">Loading the provider…</p>
      </>
    );
  if (provider.isError)
    return (
      <>
        <Heading slot="title">Edit provider</Heading>
        <ErrorText message={messageOf(provider.error)} />
        <div className="dialog-actions">
          <Button className="st-button" onPress={onCancel}>
            Close
          </Button>
        </div>
      </>
    );
  return <ProviderForm slug={slug} provider={provider.data} onDone={onDone} onCancel={onCancel} />;
}

function ProviderForm({ slug, provider, onDone, onCancel }: { slug: string; provider: ProviderWithKey | null; onDone: () => void; onCancel: () => void }) {
  const kinds = useQuery({ queryKey: ["ai-kinds"], queryFn: () => data<Kind[]>("/admin/ai/kinds"), staleTime: 600_000 });
  const [name, setName] = useState(provider?.name ?? "");
  const [kind, setKind] = useState<string | null>(provider?.kind ?? null);
  const [model, setModel] = useState(provider?.model ?? "");
  const [baseUrl, setBaseUrl] = useState(provider?.base_url ?? "");
  const [apiKey, setApiKey] = useState(provider?.api_key ?? "");
  const [showKey, setShowKey] = useState(false);
  const [errors, setErrors] = useState<FormErrors>(NO_ERRORS);
  const chosenKind = kind ?? kinds.data?.[0]?.kind ?? null;
  const kindInfo = kinds.data?.find((k) => k.kind === chosenKind);

  const save = useMutation({
    mutationFn: () => {
      const body: Record<string, unknown> = { name, kind: chosenKind, model: model.trim() || null, base_url: baseUrl.trim() || null };
      if (provider === null) {
        if (apiKey) body.api_key = apiKey;
        return data<Provider>(`${projectBase(slug)}/ai/providers`, { method: "POST", body });
      }
      // The key is sent only when changed; emptied, it is cleared (null).
      if (apiKey !== (provider.api_key ?? "")) body.api_key = apiKey || null;
      return data<Provider>(providerUrl(provider.id), { method: "PATCH", body });
    },
    onSuccess: onDone,
    onError: (err) => setErrors(formErrors(err, FIELDS)),
  });

  return (
    <Form
      className="dialog-form"
      onSubmit={(e) => {
        e.preventDefault();
        setErrors(NO_ERRORS);
        save.mutate();
      }}
    >
      <Heading slot="title">{provider ? `Edit ${provider.name}` : "Add provider"}</Heading>
      <ErrorText message={errors.general} />
      <TextSetting label="Name" value={name} onChange={setName} error={errors.fields.name} isRequired maxLength={200} autoFocus />
      <Select
        className="st-field select"
        selectedKey={chosenKind}
        onSelectionChange={(k) => k !== null && setKind(String(k))}
        isDisabled={kinds.isPending}
        isInvalid={!!errors.fields.kind}
        validationBehavior="aria"
        isRequired
      >
        <Label>Kind</Label>
        <Button className="st-select-button">
          <SelectValue />
          <span aria-hidden="true">▾</span>
        </Button>
        <FieldError className="st-field-error">{errors.fields.kind}</FieldError>
        <Popover className="st-popover">
          <ListBox className="st-listbox">
            {(kinds.data ?? []).map((k) => (
              <ListBoxItem key={k.kind} id={k.kind} className="st-listbox-item" textValue={k.label}>
                {k.label}
              </ListBoxItem>
            ))}
          </ListBox>
        </Popover>
      </Select>
      {kinds.isError && <ErrorText message={messageOf(kinds.error)} />}
      <TextSetting label="Model" value={model} onChange={setModel} error={errors.fields.model} placeholder={kindInfo?.default_model} help="Empty: the kind’s default model." />
      <TextSetting label="Base URL" value={baseUrl} onChange={setBaseUrl} error={errors.fields.base_url} placeholder={kindInfo?.default_base_url} help="Empty: the kind’s default address." />
      <div className="key-row">
        <TextSetting
          label="API key"
          value={apiKey}
          onChange={setApiKey}
          error={errors.fields.api_key}
          type={showKey ? "text" : "password"}
          help={provider ? "Emptied, the stored key is removed." : "Stored sealed; listed masked."}
        />
        <ToggleButton className="st-button small" isSelected={showKey} onChange={setShowKey} aria-label="Show API key">
          Show
        </ToggleButton>
      </div>
      <div className="dialog-actions">
        <Button className="st-button" onPress={onCancel}>
          Cancel
        </Button>
        <Button type="submit" className="st-button primary" isDisabled={save.isPending || !chosenKind}>
          {save.isPending ? "Saving…" : provider ? "Save provider" : "Add provider"}
        </Button>
      </div>
    </Form>
  );
}
