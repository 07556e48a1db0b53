// Code-based routes under /studio/: projects, sessions, a project's tree, a node's editor.
import type { QueryClient } from "@tanstack/react-query";
import { createRootRouteWithContext, createRoute, createRouter, lazyRouteComponent } from "@tanstack/react-router";
import { ProjectHome, ProjectLayout } from "./ProjectLayout";
import { ProjectsPage } from "./Projects";
import { SessionsPage } from "./Sessions";
import { AppRoot, NotFound } from "./Shell";

interface NodeSearch {
  locale?: string;
}

const rootRoute = createRootRouteWithContext<{ queryClient: QueryClient }>()({ component: AppRoot, notFoundComponent: NotFound });
const projectsRoute = createRoute({ getParentRoute: () => rootRoute, path: "/", component: ProjectsPage });
const sessionsRoute = createRoute({ getParentRoute: () => rootRoute, path: "/sessions", component: SessionsPage });
const projectRoute = createRoute({ getParentRoute: () => rootRoute, path: "/p/$slug", component: ProjectLayout });
const projectHomeRoute = createRoute({ getParentRoute: () => projectRoute, path: "/", component: ProjectHome });
const nodeRoute = createRoute({
  getParentRoute: () => projectRoute,
  path: "/nodes/$id",
  validateSearch: (search: Record<string, unknown>): NodeSearch => {
    const locale = search.locale;
    return typeof locale === "string" && /^[A-Za-z0-9-]{2,35}$/.test(locale) ? { locale } : {};
  },
  // The editor and the form layer load with the first node opened: the shell stays small.
  component: lazyRouteComponent(() => import("./NodeEditor"), "NodeEditorPage"),
});

// The project's other screens, each its own chunk (studio/src/pages/).
const mediaRoute = createRoute({ getParentRoute: () => projectRoute, path: "/media", component: lazyRouteComponent(() => import("../pages/Media"), "MediaPage") });
const trashRoute = createRoute({ getParentRoute: () => projectRoute, path: "/trash", component: lazyRouteComponent(() => import("../pages/Trash"), "TrashPage") });
const activityRoute = createRoute({ getParentRoute: () => projectRoute, path: "/activity", component: lazyRouteComponent(() => import("../pages/Activity"), "ActivityPage") });
const settingsRoute = createRoute({ getParentRoute: () => projectRoute, path: "/settings", component: lazyRouteComponent(() => import("../pages/Settings"), "SettingsPage") });
const webhooksRoute = createRoute({ getParentRoute: () => projectRoute, path: "/webhooks", component: lazyRouteComponent(() => import("../pages/Webhooks"), "WebhooksPage") });
const approvalsRoute = createRoute({ getParentRoute: () => projectRoute, path: "/approvals", component: lazyRouteComponent(() => import("../pages/Approvals"), "ApprovalsPage") });
const modelRoute = createRoute({ getParentRoute: () => projectRoute, path: "/model", component: lazyRouteComponent(() => import("../pages/Model"), "ModelPage") });

const routeTree = rootRoute.addChildren([
  projectsRoute,
  sessionsRoute,
  projectRoute.addChildren([projectHomeRoute, nodeRoute, mediaRoute, trashRoute, activityRoute, settingsRoute, webhooksRoute, modelRoute, approvalsRoute]),
]);

export function createStudioRouter(queryClient: QueryClient) {
  return createRouter({ routeTree, basepath: "/studio", context: { queryClient }, defaultPreload: false, scrollRestoration: false });
}

declare module "@tanstack/react-router" {
  interface Register {
    router: ReturnType<typeof createStudioRouter>;
  }
}
