import { z } from "zod";
import { ActorOut } from "../activity/model";
import { projectOperation, READ_ONLY, WRITE } from "../core/operation";
import { NodeId } from "../lib/schemas";
import { PUBLISH_SCOPES } from "../lib/scopes";
import { agentChanges } from "./agent-changes";
import { AgentIn, PageInfo, PagingIn, RevisionDetailOut, RevisionNumber, RevisionOut, TrashEntryOut, UndoAgentOut } from "./model";
import { getRevision, listRevisions, listTrash, restoreRevision } from "./service";
import { undoAgentChanges } from "./undo";

const revisionRoute = (method: "GET" | "POST", tail: string) => ({ method, path: `/admin/p/:ref/nodes/:id/revisions${tail}`, params: { id: "node_id", rev: "revision" }, tag: "history" }) as const;

const listRevisionsOp = projectOperation({
  name: "list_revisions",
  title: "List a node's revisions",
  description:
    "List the revisions of a node, newest first: every change (fields, blocks, SEO, status, translations, moves, deletion) is a revision with its number, the operation, " +
    "who made it (admin key, MCP token, OAuth user and client) and when. A deleted node's revisions stay listable while it is in the trash. Paginated: page, per_page (1-100, default 20).",
  scopes: ["content:read"],
  input: z.object({ node_id: NodeId, ...PagingIn }),
  output: z.object({ revisions: z.array(RevisionOut), ...PageInfo }),
  tool: READ_ONLY,
  http: { ...revisionRoute("GET", ""), data: "revisions", summary: "List a node's revisions, newest first" },
  run: ({ deps, project }, args) => listRevisions(deps.db, project.id, args.node_id, args),
});

const getRevisionOp = projectOperation({
  name: "get_revision",
  title: "Read a revision and what it changed",
  description:
    "Read one revision of a node: its full snapshot (fields, SEO, status, path, parent, blocks with ids, translations) and a field-level diff " +
    "(JSON Pointer path, before, after) against the previous revision, or against the revision given as against. Blocks and translations are compared by id and locale.",
  scopes: ["content:read"],
  input: z.object({ node_id: NodeId, revision: RevisionNumber, against: RevisionNumber.optional().describe("compare with this revision instead of the previous one") }),
  output: z.object({ revision: RevisionDetailOut }),
  tool: READ_ONLY,
  http: { ...revisionRoute("GET", "/:rev"), data: "revision", summary: "Read a revision: its snapshot and a field-level diff (?against=)" },
  run: async ({ deps, project }, args) => ({ revision: await getRevision(deps.db, project.id, args.node_id, args.revision, args.against) }),
});

const agentChangesOp = projectOperation({
  name: "list_agent_changes",
  title: "What agents changed on a node since a person",
  description:
    "The fields of a node (JSON Pointers: /title, /slug, /fields/…, /seo/…, /blocks/<i>/data/…, block positions as they are now) that an agent, an MCP token or an OAuth client, changed " +
    "after the last change a person made; each with the revision and the agent. A person's save clears them all.",
  scopes: ["content:read"],
  input: z.object({ node_id: NodeId }),
  output: z.object({ changes: z.array(z.object({ pointer: z.string(), revision: z.number().int(), actor: ActorOut })) }),
  http: {
    method: "GET",
    path: "/admin/p/:ref/nodes/:id/agent-changes",
    params: { id: "node_id" },
    data: "changes",
    tag: "history",
    summary: "Fields agents changed on a node since a person last did",
  },
  run: async ({ deps, project }, args) => ({ changes: await agentChanges(deps.db, project.id, args.node_id) }),
});

const undoAgentOp = projectOperation({
  name: "undo_agent_changes",
  title: "Undo an agent's changes",
  description:
    "Bring every node one agent credential (an MCP token, or an OAuth client, optionally for one person) changed between since and until (default now) back to its state " +
    "before the first of those changes: one restore per node, each a new revision. A node someone else changed after the agent is listed under left and not touched; " +
    "a node the agent created goes to the trash. dry_run answers what would be restored without writing.",
  scopes: PUBLISH_SCOPES,
  input: z.object({
    agent: AgentIn,
    since: z.iso.datetime({ offset: true }).describe("RFC 3339: the start of the range"),
    until: z.iso.datetime({ offset: true }).optional().describe("RFC 3339: the end of the range (default: now)"),
  }),
  output: UndoAgentOut,
  tool: WRITE,
  http: { method: "POST", path: "/admin/p/:ref/agents/undo", tag: "history", summary: "Undo an agent's changes in a time range (one restore per node; nodes changed by someone else since are left)" },
  run: ({ deps, project, now, write }, args) => undoAgentChanges(deps.db, write, project, args, now),
});

const restoreRevisionOp = projectOperation({
  name: "restore_revision",
  title: "Restore a revision",
  description:
    "Make a revision's snapshot the node's current state, recorded as a new revision (nothing is lost: the state it replaces stays a revision too). " +
    "Title, slug, parent, fields, SEO, status, blocks (keeping their ids) and translations come back as they were. " +
    "Restoring the last revision of a node in the trash (list_trash) brings it back with its id, and the descendants deleted with it. " +
    "Checked against the current content model (invalid_content when it no longer fits); conflict when its path is taken or its parent is deleted.",
  scopes: PUBLISH_SCOPES,
  nodeWrite: true,
  input: z.object({ node_id: NodeId, revision: RevisionNumber }),
  output: z.object({
    node_id: z.string(),
    revision: z.number().int().describe("the new revision the restore made"),
    restored: z.array(z.string()).describe("ids of the nodes brought back (the node, and from the trash its descendants)"),
  }),
  tool: WRITE,
  http: { ...revisionRoute("POST", "/:rev/restore"), summary: "Restore a revision (a new revision; from the trash: the node and its descendants)", errors: [409] },
  run: ({ deps, project, now, write }, args) => restoreRevision(deps.db, write, project, args.node_id, args.revision, now),
});

const listTrashOp = projectOperation({
  name: "list_trash",
  title: "List deleted nodes (the trash)",
  description:
    "List the project's deleted nodes still restorable (deleted within the trash retention), newest first, each with the revision to restore with restore_revision " +
    "and deleted_with: the node whose deletion took it (restore that one to bring both back). Paginated: page, per_page (1-100, default 20).",
  scopes: ["content:read"],
  input: z.object(PagingIn),
  output: z.object({ trash: z.array(TrashEntryOut), ...PageInfo }),
  tool: READ_ONLY,
  http: { method: "GET", path: "/admin/p/:ref/trash", data: "trash", tag: "history", summary: "List deleted nodes still restorable, newest first" },
  run: ({ deps, project, now }, args) => listTrash(deps.db, project.id, deps.config, now, args),
});

export const historyOperations = [listRevisionsOp, getRevisionOp, restoreRevisionOp, listTrashOp, undoAgentOp, agentChangesOp];
