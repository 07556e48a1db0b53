import { Elysia, t } from "elysia";
import { adminAuth, adminDoc } from "../auth";
import type { AppDeps } from "../deps";
import { errorResponses, RefIdParams, RefParams } from "../lib/model";
import { ContentModel } from "./model";
import {
  createNode,
  deleteNode,
  getNodeWithBlocks,
  listNodes,
  nodeToWire,
  setNodeBlocks,
  type Transition,
  transitionNode,
  updateNode,
} from "./service";

const TRANSITION_DOCS: Record<Transition, string> = {
  publish: "Publish a node (draft → published)",
  unpublish: "Unpublish a node (published → draft)",
  archive: "Archive a node (any → archived)",
  restore: "Restore an archived node (archived → draft)",
};

export function contentRoutes(deps: AppDeps) {
  const { db } = deps;
  const nodeResponse = { 200: t.Object({ data: ContentModel.nodeWithBlocks }), ...errorResponses };
  let app = new Elysia({ prefix: "/admin/p/:ref/nodes" })
    .use(adminAuth(deps))
    .get("",
      async ({ project, query }) => {
        const r = await listNodes(db, project.id, query);
        return { data: r.data.map(nodeToWire), total: r.total, page: r.page, per_page: r.per_page };
      },
      {
        projectScope: "content:read",
        params: RefParams,
        query: ContentModel.listQuery,
        response: {
          200: t.Object({ data: t.Array(ContentModel.node), total: t.Integer(), page: t.Integer(), per_page: t.Integer() }),
          ...errorResponses,
        },
        detail: adminDoc("content", "List nodes (any status), filtered by type, status, parent or path prefix"),
      },
    )
    .post("",
      async ({ project, body, set }) => {
        set.status = 201;
        return { data: await createNode(db, project, body, deps.now()) };
      },
      {
        projectScope: "content:write",
        params: RefParams,
        body: ContentModel.create,
        response: { 201: t.Object({ data: ContentModel.nodeWithBlocks }), 409: errorResponses[400], ...errorResponses },
        detail: adminDoc("content", "Create a node (as a draft), optionally with its blocks"),
      },
    )
    .get("/:id", async ({ project, params }) => ({ data: await getNodeWithBlocks(db, project.id, params.id) }), {
      projectScope: "content:read",
      params: RefIdParams,
      response: nodeResponse,
      detail: adminDoc("content", "Read a node with its blocks"),
    })
    .patch("/:id", async ({ project, params, body }) => ({ data: await updateNode(db, project, params.id, body, deps.now()) }), {
      projectScope: "content:write",
      params: RefIdParams,
      body: ContentModel.update,
      response: { ...nodeResponse, 409: errorResponses[400] },
      detail: adminDoc("content", "Update a node; a new slug or parent rewrites the paths below it"),
    })
    .put("/:id/blocks", async ({ project, params, body }) => ({ data: await setNodeBlocks(db, project, params.id, body, deps.now()) }), {
      projectScope: "content:write",
      params: RefIdParams,
      body: ContentModel.blocksIn,
      response: { 200: t.Object({ data: t.Array(ContentModel.block) }), ...errorResponses },
      detail: adminDoc("content", "Replace a node's ordered blocks (ids kept for existing blocks)"),
    })
    .delete(
      "/:id",
      async ({ project, params, set }) => {
        await deleteNode(db, project, params.id);
        set.status = 204;
        return undefined;
      },
      {
        projectScope: "content:write",
        params: RefIdParams,
        detail: adminDoc("content", "Delete a node and its descendants"),
      },
    );
  for (const action of Object.keys(TRANSITION_DOCS) as Transition[]) {
    app = app.post(`/:id/${action}`, async ({ project, params }) => ({ data: await transitionNode(db, project, params.id, action, deps.now()) }), {
      projectScope: "content:write",
      params: RefIdParams,
      response: { 200: t.Object({ data: ContentModel.node }), 409: errorResponses[400], ...errorResponses },
      detail: adminDoc("content", TRANSITION_DOCS[action]),
    }) as unknown as typeof app;
  }
  return app;
}
