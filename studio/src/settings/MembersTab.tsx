// The project's people and their roles (list_members, add_member, set_member, remove_member): a
// person added by email with a role (their account exists already: an instance owner creates
// accounts); a role change and a removal each ask for confirmation first. Instance owners act in
// every project and are not listed.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Button, Form } from "react-aria-components";
import { data, enc, messageOf, projectBase, request } from "../app/api";
import { DataTable, useConfirm } from "../app/DataTable";
import { SelectField } from "../app/SelectField";
import { formatTime } from "../app/time";
import { ErrorText, StatusText } from "./Alert";
import { type FormErrors, formErrors, NO_ERRORS } from "./errors";
import { TextSetting } from "./Field";
import { MEMBER_ROLES } from "./rights";
import type { Member, MemberRole } from "./types";

type Pending = { kind: "role"; member: Member; role: MemberRole } | { kind: "remove"; member: Member };

const membersKey = (slug: string) => ["members", slug] as const;

const ROLE_OPTIONS = MEMBER_ROLES.map((r) => [r, r] as const);

export function MembersTab({ slug }: { slug: string }) {
  const qc = useQueryClient();
  const key = membersKey(slug);
  const members = useQuery({ queryKey: key, queryFn: () => data<Member[]>(`${projectBase(slug)}/members`) });
  const [status, setStatus] = useState<string | null>(null);
  const act = useMutation({
    mutationFn: async (p: Pending) => {
      const url = `${projectBase(slug)}/members/${enc(p.member.user_id)}`;
      if (p.kind === "role") await data<Member>(url, { method: "PUT", body: { role: p.role } });
      else await request(url, { method: "DELETE" });
    },
    onSuccess: (_r, p) => {
      setStatus(p.kind === "role" ? `${p.member.email} is now ${p.role}.` : `${p.member.email} was removed from the project.`);
      void qc.invalidateQueries({ queryKey: key });
      void qc.invalidateQueries({ queryKey: ["me", slug] });
    },
    onError: () => setStatus(null),
  });
  const confirm = useConfirm<Pending>(
    (p) => act.mutate(p),
    (p) =>
      p.kind === "role"
        ? {
            title: "Change the role?",
            body: `${p.member.email} becomes ${p.role} (now ${p.member.role}). Their rights in this project change at once.`,
            confirmLabel: "Change role",
          }
        : { title: "Remove from the project?", body: `${p.member.email} loses access to this project; their tokens for it stop working.`, confirmLabel: "Remove member" },
  );

  return (
    <section aria-labelledby="members-heading">
      <h2 id="members-heading">Members</h2>
      <p className="muted">People with a role in this project. Instance owners act in every project and are not listed.</p>
      <AddMember
        slug={slug}
        onAdded={(m, existed) => {
          setStatus(existed ? `${m.email} is now ${m.role}.` : `${m.email} was added as ${m.role}.`);
          void qc.invalidateQueries({ queryKey: key });
          void qc.invalidateQueries({ queryKey: ["me", slug] });
        }}
        known={members.data}
      />
      {act.isError && <ErrorText message={messageOf(act.error)} />}
      <StatusText message={status} />
      <DataTable
        query={members}
        rowKey={(m) => m.user_id}
        caption="Members"
        loadingText="Loading the members…"
        empty={<p className="notice">This project has no members yet.</p>}
        columns={[
          { header: "Person", rowHeader: true, cell: (m) => m.email },
          {
            header: "Role",
            cell: (m) => (
              <SelectField
                label={`Role of ${m.email}`}
                hideLabel
                className="role-select"
                options={ROLE_OPTIONS}
                value={m.role}
                isDisabled={act.isPending}
                onChange={(role) => role !== m.role && confirm.ask({ kind: "role", member: m, role })}
              />
            ),
          },
          { header: "Member since", cell: (m) => formatTime(m.created_at) },
        ]}
        actions={(m) => (
          <Button className="st-button danger small" aria-label={`Remove ${m.email}`} isDisabled={act.isPending} onPress={() => confirm.ask({ kind: "remove", member: m })}>
            Remove
          </Button>
        )}
      />
      {confirm.dialog}
    </section>
  );
}

/** `Add member`: a person's email and a role (POST /admin/p/{ref}/members); an unknown email is refused at its field. */
function AddMember({ slug, onAdded, known }: { slug: string; onAdded: (m: Member, existed: boolean) => void; known: Member[] | undefined }) {
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<MemberRole>("editor");
  const [errors, setErrors] = useState<FormErrors>(NO_ERRORS);
  const add = useMutation({
    mutationFn: () => data<Member>(`${projectBase(slug)}/members`, { method: "POST", body: { email: email.trim(), role } }),
    onSuccess: (m) => {
      setErrors(NO_ERRORS);
      setEmail("");
      onAdded(m, !!known?.some((k) => k.user_id === m.user_id));
    },
    onError: (err) => setErrors(formErrors(err, ["email", "role"])),
  });
  return (
    <Form
      className="settings-fieldset member-add"
      aria-labelledby="member-add-heading"
      onSubmit={(e) => {
        e.preventDefault();
        add.mutate();
      }}
    >
      <h3 id="member-add-heading">Add a person</h3>
      <ErrorText message={errors.general} />
      <div className="inline-add">
        <TextSetting
          label="Email"
          type="text"
          value={email}
          onChange={(v) => {
            setEmail(v);
            setErrors(NO_ERRORS);
          }}
          error={errors.fields.email}
          isRequired
          help="The person needs an account first: an instance owner creates it."
        />
        <SelectField label="Role" className="st-field select member-add-role" options={ROLE_OPTIONS} value={role} onChange={setRole} />
        <Button type="submit" className="st-button primary" isDisabled={add.isPending || email.trim() === ""}>
          {add.isPending ? "Adding…" : "Add member"}
        </Button>
      </div>
    </Form>
  );
}
