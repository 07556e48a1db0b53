// "New page": a child of the open node (or a top-level page), of a type its parent's type allows.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { useState } from "react";
import { Button, Dialog, DialogTrigger, Form, Heading, Input, Label, ListBox, ListBoxItem, Modal, ModalOverlay, Popover, Select, SelectValue, TextField } from "react-aria-components";
import { ApiError, data, messageOf, projectBase } from "./api";
import { childTypes, keys, nodeQuery, useModel } from "./queries";
import type { NodeWithBlocks } from "./types";

/** A slug from a title: lowercase ASCII letters, digits and inner hyphens, at most 64 characters. */
function slugify(title: string): string {
  return title
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 64)
    .replace(/-+$/g, "");
}

export function NewPageButton({ slug, parentId }: { slug: string; parentId: string | null }) {
  return (
    <DialogTrigger>
      <Button className="st-button primary small">New page</Button>
      <ModalOverlay className="modal-overlay" isDismissable>
        <Modal className="modal">
          <Dialog className="dialog">{({ close }) => <NewPageForm slug={slug} parentId={parentId} close={close} />}</Dialog>
        </Modal>
      </ModalOverlay>
    </DialogTrigger>
  );
}

function NewPageForm({ slug, parentId, close }: { slug: string; parentId: string | null; close: () => void }) {
  const qc = useQueryClient();
  const navigate = useNavigate();
  const model = useModel(slug);
  const parent = useQuery({ ...nodeQuery(slug, parentId ?? ""), enabled: !!parentId });
  const [title, setTitle] = useState("");
  const [pageSlug, setPageSlug] = useState("");
  const [slugEdited, setSlugEdited] = useState(false);
  const types = childTypes(model.data, parentId ? (parent.data?.type ?? null) : null);
  const [type, setType] = useState<string | null>(null);
  const chosen = type && types.includes(type) ? type : types.includes("page") ? "page" : (types[0] ?? null);
  const [error, setError] = useState<string | null>(null);

  const create = useMutation({
    mutationFn: () =>
      data<NodeWithBlocks>(`${projectBase(slug)}/nodes`, {
        method: "POST",
        body: { title, slug: pageSlug, type: chosen ?? undefined, parent_id: parentId },
      }),
    onSuccess: (node) => {
      qc.setQueryData(keys.node(slug, node.id), node);
      void qc.invalidateQueries({ queryKey: keys.nodes(slug) });
      close();
      void navigate({ to: "/p/$slug/nodes/$id", params: { slug, id: node.id } });
    },
    onError: (err) => {
      const violations = err instanceof ApiError ? (err.details?.violations as Array<{ pointer: string; message: string }> | undefined) : undefined;
      setError(violations?.length ? violations.map((v) => `${v.pointer.replace(/^\//, "") || "page"}: ${v.message}`).join("; ") : messageOf(err));
    },
  });

  const parentLabel = parentId ? (parent.data ? `inside “${parent.data.title}”` : "inside the selected page") : "at the top level";
  const loading = model.isPending || (!!parentId && parent.isPending);
  return (
    <Form
      className="dialog-form"
      onSubmit={(e) => {
        e.preventDefault();
        setError(null);
        create.mutate();
      }}
    >
      <Heading slot="title">New page</Heading>
      <p className="muted">Created as a draft {parentLabel}.</p>
      {error && (
        <p role="alert" className="alert error">
          {error}
        </p>
      )}
      <TextField
        className="st-field"
        isRequired
        autoFocus
        value={title}
        maxLength={500}
        onChange={(v) => {
          setTitle(v);
          if (!slugEdited) setPageSlug(slugify(v));
        }}
      >
        <Label>Title</Label>
        <Input />
      </TextField>
      <TextField
        className="st-field"
        isRequired
        value={pageSlug}
        maxLength={64}
        pattern="[a-z0-9]+(-[a-z0-9]+)*"
        onChange={(v) => {
          setPageSlug(v);
          setSlugEdited(true);
        }}
      >
        <Label>Slug</Label>
        <Input />
      </TextField>
      <Select className="st-field select" selectedKey={chosen} onSelectionChange={(k) => setType(k === null ? null : String(k))} isDisabled={loading || types.length === 0} isRequired>
        <Label>Type</Label>
        <Button className="st-select-button">
          <SelectValue />
          <span aria-hidden="true">▾</span>
        </Button>
        <Popover className="st-popover">
          <ListBox className="st-listbox">
            {types.map((t) => (
              <ListBoxItem key={t} id={t} className="st-listbox-item">
                {t}
              </ListBoxItem>
            ))}
          </ListBox>
        </Popover>
      </Select>
      {!loading && types.length === 0 && <p className="alert">The content model allows no pages here.</p>}
      <div className="dialog-actions">
        <Button className="st-button" onPress={close}>
          Cancel
        </Button>
        <Button type="submit" className="st-button primary" isDisabled={!chosen || loading || create.isPending}>
          {create.isPending ? "Creating…" : "Create page"}
        </Button>
      </div>
    </Form>
  );
}
