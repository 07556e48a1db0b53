// The project's semantic search (GET and PUT /admin/p/{ref}/search/semantic, docs/search.md), under
// its AI providers: the state for everyone on the tab (off, or the provider, model and daily cap
// with today's calls, the vectors stored and the pages waiting); for projects:write, a form naming
// one of the project's providers of a kind with embeddings, the model and the cap, and Turn off,
// confirmed, since turning it off deletes the vectors.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Button, FieldError, Form, Label, ListBox, ListBoxItem, Meter, Popover, Select, SelectValue } from "react-aria-components";
import { data, messageOf, projectBase } from "../app/api";
import { useConfirm } from "../app/DataTable";
import type { Project } from "../app/types";
import { ErrorText, StatusText } from "./Alert";
import { semanticKey, useProviders } from "./ai-queries";
import { type FormErrors, formErrors, NO_ERRORS } from "./errors";
import { TextSetting } from "./Field";
import type { Provider, SemanticState } from "./types";

type SemanticOn = NonNullable<SemanticState["semantic"]>;

const FIELDS = ["provider_id", "model", "daily_cap"] as const;
/** The daily cap a new setting starts with (the server's default, src/search/semantic.ts). */
const DEFAULT_CAP = 10_000;
/** The largest cap the server takes (SemanticIn). */
const MAX_CAP = 10_000_000;
const CAP_ERROR = `The daily cap is a whole number of calls from 1 to ${MAX_CAP.toLocaleString("en")}.`;
/** While pages wait for a vector, the state is read again this often (the server embeds every 2 s). */
const PENDING_REFRESH_MS = 5000;

const count = (n: number): string => n.toLocaleString("en");
const plural = (n: number, one: string, many: string): string => `${count(n)} ${n === 1 ? one : many}`;
const providerLabel = (p: Provider): string => `${p.name} (${p.kind})`;
/** The form's errors without the one of a field the person has just changed. */
const clearField = (e: FormErrors, field: string): FormErrors => {
  const { [field]: _gone, ...fields } = e.fields;
  return { ...e, fields };
};

export function SemanticSection({ project, canEdit }: { project: Project; canEdit: boolean }) {
  const qc = useQueryClient();
  const key = semanticKey(project.id);
  const url = `${projectBase(project.slug)}/search/semantic`;
  const state = useQuery({
    queryKey: key,
    queryFn: () => data<SemanticState>(url),
    refetchInterval: (q) => ((q.state.data?.semantic?.pending ?? 0) > 0 ? PENDING_REFRESH_MS : false),
  });
  const providers = useProviders(project);
  const [saved, setSaved] = useState<string | null>(null);
  const put = (body: Record<string, unknown>) => data<SemanticState>(url, { method: "PUT", body });
  const onAnswer = (answer: SemanticState, message: string) => {
    qc.setQueryData(key, answer);
    void qc.invalidateQueries({ queryKey: key });
    setSaved(message);
  };
  const turnOff = useMutation({
    mutationFn: () => put({ provider_id: null }),
    onMutate: () => setSaved(null),
    onSuccess: (answer) => onAnswer(answer, "Semantic search is off; its vectors are deleted."),
  });
  const confirmOff = useConfirm<SemanticOn>(
    () => turnOff.mutate(),
    (s) => ({
      title: "Turn off semantic search?",
      body: `Hybrid searches answer with the keyword ranking alone, and ${plural(s.vectors, "stored vector is", "stored vectors are")} deleted. Turned on again, every published page is embedded anew, on the provider’s bill.`,
      confirmLabel: "Turn off",
    }),
  );

  const current = state.data?.semantic ?? null;
  const kinds = state.data?.embedding_kinds ?? [];
  const qualifying = (providers.data ?? []).filter((p) => kinds.includes(p.kind));
  const providerOf = (id: string) => providers.data?.find((p) => p.id === id) ?? null;

  return (
    <section aria-labelledby="semantic-heading" className="semantic-section">
      <h2 id="semantic-heading">Semantic search</h2>
      <p className="muted">
        Adds a ranking by meaning to the delivery search (<span className="path">mode=hybrid</span>): published pages are embedded by one of the project’s providers, with its key and on its bill.
      </p>
      {state.isPending && <p aria-busy="true">Loading semantic search…</p>}
      {state.isError && <ErrorText message={messageOf(state.error)} />}
      {state.data && (
        <>
          <SemanticFacts state={state.data} provider={current ? providerOf(current.provider_id) : null} />
          <StatusText message={saved} />
          {turnOff.error && <ErrorText message={messageOf(turnOff.error)} />}
          {canEdit ? (
            <SemanticForm
              // A new saved setting starts a new form; the counts read again leave the one being typed.
              key={current ? `${current.provider_id}|${current.model}|${current.daily_cap}` : "off"}
              current={current}
              qualifying={qualifying}
              providersPending={providers.isPending}
              providersError={providers.error ? messageOf(providers.error) : null}
              hasOthers={(providers.data ?? []).length > qualifying.length}
              kinds={kinds}
              save={put}
              onSaved={(answer) => onAnswer(answer, current ? "Semantic search saved." : "Semantic search is on: published pages are embedded in the background.")}
              onTurnOff={current ? () => confirmOff.ask(current) : null}
              turningOff={turnOff.isPending}
            />
          ) : (
            <p className="muted">Changing semantic search needs the projects:write scope (an instance owner).</p>
          )}
        </>
      )}
      {confirmOff.dialog}
    </section>
  );
}

function SemanticFacts({ state, provider }: { state: SemanticState; provider: Provider | null }) {
  const s = state.semantic;
  if (s === null)
    return (
      <dl className="semantic-facts" aria-label="Semantic search state">
        <dt>State</dt>
        <dd>
          <span className="st-badge badge-draft">Off</span>{" "}
          <span className="muted">
            Searches rank by keywords; <span className="path">mode=hybrid</span> answers the keyword ranking.
          </span>
        </dd>
      </dl>
    );
  return (
    <>
      <dl className="semantic-facts" aria-label="Semantic search state">
        <dt>State</dt>
        <dd>
          <span className="st-badge badge-published">On</span>
        </dd>
        <dt>Provider</dt>
        <dd>{provider ? providerLabel(provider) : `${s.kind} provider ${s.provider_id}`}</dd>
        <dt>Model</dt>
        <dd className="path">{s.model}</dd>
        <dt>Daily cap</dt>
        <dd>{plural(s.daily_cap, "embedding call", "embedding calls")} a day (UTC), pages and queries together</dd>
        <dt>Today</dt>
        <dd>
          <Meter className="semantic-meter" value={s.calls_today} maxValue={Math.max(s.daily_cap, 1)} valueLabel={`${count(s.calls_today)} of ${count(s.daily_cap)} calls`}>
            {({ percentage, valueText }) => (
              <>
                <Label className="visually-hidden">Embedding calls today</Label>
                <span className="semantic-meter-text">{valueText}</span>
                <span className="semantic-meter-track" aria-hidden="true">
                  <span className={`semantic-meter-fill${s.calls_today >= s.daily_cap ? " full" : ""}`} style={{ width: `${s.calls_today > 0 ? Math.max(percentage ?? 0, 1) : 0}%` }} />
                </span>
              </>
            )}
          </Meter>
        </dd>
        <dt>Vectors stored</dt>
        <dd>{plural(s.vectors, "page", "pages")} (per locale)</dd>
        <dt>Waiting</dt>
        <dd>{s.pending === 0 ? "none: every published page has its vector" : `${plural(s.pending, "page", "pages")}, embedded in the background`}</dd>
      </dl>
      <p className="help">Vectors are compared in the service{state.pgvector_available ? "; this database also offers pgvector, which is not used" : ", which needs no pgvector"}.</p>
    </>
  );
}

interface FormProps {
  current: SemanticOn | null;
  qualifying: Provider[];
  providersPending: boolean;
  providersError: string | null;
  hasOthers: boolean;
  kinds: readonly string[];
  save: (body: Record<string, unknown>) => Promise<SemanticState>;
  onSaved: (answer: SemanticState) => void;
  onTurnOff: (() => void) | null;
  turningOff: boolean;
}

function SemanticForm({ current, qualifying, providersPending, providersError, hasOthers, kinds, save, onSaved, onTurnOff, turningOff }: FormProps) {
  const [chosen, setChosen] = useState<string | null>(null);
  const [model, setModel] = useState(current?.model ?? "");
  const [cap, setCap] = useState(String(current?.daily_cap ?? DEFAULT_CAP));
  const [errors, setErrors] = useState<FormErrors>(NO_ERRORS);
  // The provider of the saved setting, else the only one that qualifies.
  const providerId = chosen ?? current?.provider_id ?? (qualifying.length === 1 ? (qualifying[0]?.id ?? null) : null);
  const submit = useMutation({
    mutationFn: (body: Record<string, unknown>) => save(body),
    onSuccess: onSaved,
    onError: (err) => setErrors(formErrors(err, FIELDS)),
  });
  const pick = (id: string) => {
    setChosen(id);
    setErrors((e) => clearField(e, "provider_id"));
    // The saved model belongs to its provider's kind: another kind starts from its own default.
    const kind = qualifying.find((p) => p.id === id)?.kind;
    if (current && kind !== current.kind && model === current.model) setModel("");
  };
  const onSubmit = () => {
    const text = cap.trim().replace(/[,_\s]/g, "");
    const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
    const fields: Record<string, string> = {};
    if (!providerId) fields.provider_id = "Choose the provider that embeds the pages.";
    if (!(n >= 1 && n <= MAX_CAP)) fields.daily_cap = CAP_ERROR;
    if (Object.keys(fields).length > 0) {
      setErrors({ fields, general: null });
      return;
    }
    setErrors(NO_ERRORS);
    submit.mutate({ provider_id: providerId, model: model.trim() || null, daily_cap: n });
  };

  if (!providersPending && qualifying.length === 0 && current === null)
    return (
      <div className="notice semantic-none">
        <p>
          <strong>No provider of this project can embed pages.</strong> Semantic search needs a provider of kind {kinds.join(", ")}
          {hasOthers ? " (the project’s providers are of other kinds)" : ""}: add one under <a href="#providers-heading">AI providers</a> above, then choose it here.
        </p>
        {providersError && <ErrorText message={providersError} />}
      </div>
    );

  return (
    <Form
      className="settings-form semantic-form"
      aria-label={current ? "Change semantic search" : "Turn on semantic search"}
      validationBehavior="aria"
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit();
      }}
    >
      <h3>{current ? "Change the provider, model or cap" : "Choose a provider to turn it on"}</h3>
      <ErrorText message={errors.general ?? providersError} />
      <Select
        className="st-field select"
        selectedKey={providerId}
        onSelectionChange={(k) => k !== null && pick(String(k))}
        isDisabled={providersPending}
        isInvalid={!!errors.fields.provider_id}
        placeholder="Choose a provider"
        validationBehavior="aria"
        isRequired
      >
        <Label>Provider</Label>
        <Button className="st-select-button">
          <SelectValue />
          <span aria-hidden="true">▾</span>
        </Button>
        <FieldError className="st-field-error">{errors.fields.provider_id}</FieldError>
        <Popover className="st-popover">
          <ListBox className="st-listbox">
            {qualifying.map((p) => (
              <ListBoxItem key={p.id} id={p.id} className="st-listbox-item" textValue={providerLabel(p)}>
                {providerLabel(p)}
              </ListBoxItem>
            ))}
          </ListBox>
        </Popover>
      </Select>
      <TextSetting
        label="Embedding model"
        value={model}
        onChange={setModel}
        error={errors.fields.model}
        maxLength={200}
        placeholder="The kind’s default"
        help="Empty: the default embedding model of the provider’s kind. Vectors have 1024 dimensions."
      />
      <TextSetting
        label="Daily cap"
        value={cap}
        onChange={(v) => {
          setCap(v);
          setErrors((e) => clearField(e, "daily_cap"));
        }}
        error={errors.fields.daily_cap}
        inputMode="numeric"
        isRequired
        help="Embedding calls per UTC day, pages and queries together. Past it, pages wait for the next day and hybrid searches rank by keywords."
      />
      <div className="settings-actions">
        <Button type="submit" className="st-button primary" isDisabled={submit.isPending || providersPending}>
          {submit.isPending ? "Saving…" : current ? "Save semantic search" : "Turn on semantic search"}
        </Button>
        {onTurnOff && (
          <Button className="st-button danger" isDisabled={turningOff || submit.isPending} onPress={onTurnOff}>
            {turningOff ? "Turning off…" : "Turn off semantic search"}
          </Button>
        )}
      </div>
    </Form>
  );
}
