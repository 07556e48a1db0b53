// The project's people and their roles (list_members, set_member, remove_member): a role change and
// a removal each ask for confirmation first. Instance owners act in every project and are not listed.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Button, ListBox, ListBoxItem, Popover, Select, SelectValue } from "react-aria-components";
import { data, enc, messageOf, projectBase, request } from "../app/api";
import { ConfirmDialog } from "../app/EditorParts";
import { formatTime } from "../app/time";
import { ErrorText, StatusText } from "./Alert";
import { MEMBER_ROLES } from "./rights";
import type { Member, MemberRole } from "./types";

type Pending = { kind: "role"; member: Member; role: MemberRole } | { kind: "remove"; member: Member };

export function MembersTab({ slug }: { slug: string }) {
  const qc = useQueryClient();
  const key = ["members", slug] as const;
  const members = useQuery({ queryKey: key, queryFn: () => data<Member[]>(`${projectBase(slug)}/members`) });
  const [pending, setPending] = useState<Pending | null>(null);
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
  const confirm = () => {
    if (pending) act.mutate(pending);
    setPending(null);
  };

  return (
    <section aria-labelledby="members-heading">
      <h2 id="members-heading">Members</h2>
      <p className="muted">People with a role in this project. Instance owners act in every project and are not listed.</p>
      {members.isPending && <p aria-busy="true">Loading the members…</p>}
      {members.isError && <ErrorText message={messageOf(members.error)} />}
      {act.isError && <ErrorText message={messageOf(act.error)} />}
      <StatusText message={status} />
      {members.data && members.data.length === 0 && <p className="notice">This project has no members yet.</p>}
      {members.data && members.data.length > 0 && (
        <table className="table">
          <caption className="visually-hidden">Members</caption>
          <thead>
            <tr>
              <th scope="col">Person</th>
              <th scope="col">Role</th>
              <th scope="col">Member since</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {members.data.map((m) => (
              <tr key={m.user_id}>
                <th scope="row">{m.email}</th>
                <td>
                  <Select
                    aria-label={`Role of ${m.email}`}
                    className="role-select"
                    selectedKey={m.role}
                    isDisabled={act.isPending}
                    onSelectionChange={(k) => {
                      if (k !== null && k !== m.role) setPending({ kind: "role", member: m, role: k as MemberRole });
                    }}
                  >
                    <Button className="st-select-button">
                      <SelectValue />
                      <span aria-hidden="true">▾</span>
                    </Button>
                    <Popover className="st-popover">
                      <ListBox className="st-listbox">
                        {MEMBER_ROLES.map((r) => (
                          <ListBoxItem key={r} id={r} className="st-listbox-item">
                            {r}
                          </ListBoxItem>
                        ))}
                      </ListBox>
                    </Popover>
                  </Select>
                </td>
                <td>{formatTime(m.created_at)}</td>
                <td>
                  <Button className="st-button danger small" aria-label={`Remove ${m.email}`} isDisabled={act.isPending} onPress={() => setPending({ kind: "remove", member: m })}>
                    Remove
                  </Button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <ConfirmDialog
        isOpen={pending?.kind === "role"}
        title="Change the role?"
        body={pending?.kind === "role" ? `${pending.member.email} becomes ${pending.role} (now ${pending.member.role}). Their rights in this project change at once.` : ""}
        confirmLabel="Change role"
        onConfirm={confirm}
        onCancel={() => setPending(null)}
      />
      <ConfirmDialog
        isOpen={pending?.kind === "remove"}
        title="Remove from the project?"
        body={pending?.kind === "remove" ? `${pending.member.email} loses access to this project; their tokens for it stop working.` : ""}
        confirmLabel="Remove member"
        onConfirm={confirm}
        onCancel={() => setPending(null)}
      />
    </section>
  );
}
