// A project: its content tree beside the page being edited.
import { Link, Outlet, useParams, useRouterState, useSearch } from "@tanstack/react-router";
import { ApiError, messageOf } from "./api";
import { ContentTree } from "./ContentTree";
import { canWrite, useMe, useProject } from "./queries";

const SECTIONS = [
  ["/p/$slug", "Content"],
  ["/p/$slug/approvals", "Approvals"],
  ["/p/$slug/media", "Media"],
  ["/p/$slug/activity", "Activity"],
  ["/p/$slug/trash", "Trash"],
  ["/p/$slug/webhooks", "Webhooks"],
  ["/p/$slug/model", "Content model"],
  ["/p/$slug/settings", "Settings"],
] as const;

export function ProjectLayout() {
  const { slug } = useParams({ from: "/p/$slug" });
  const { id } = useParams({ strict: false }) as { id?: string };
  const { locale } = useSearch({ strict: false }) as { locale?: string };
  const project = useProject(slug);
  const me = useMe(slug);
  // The tree beside content screens only (the project's page and a node's editor).
  const onContent = useRouterState({ select: (st) => /^\/p\/[^/]+(\/nodes\/[^/]+)?\/?$/.test(st.location.pathname) });

  if (project.isError) {
    const err = project.error;
    const notThere = err instanceof ApiError && (err.status === 404 || err.status === 403);
    return (
      <main className="page" id="main">
        <h1>{notThere ? "Project not available" : "Cannot open the project"}</h1>
        <p role="alert" className="alert error">
          {notThere ? `There is no project “${slug}” that you may open.` : messageOf(err)}
        </p>
        <p>
          <Link to="/">Go to your projects</Link>
        </p>
      </main>
    );
  }
  return (
    <div className="project-shell">
      <nav className="project-bar" aria-label="Breadcrumbs">
        <Link to="/" className="crumb">
          Projects
        </Link>
        <span aria-hidden="true" className="crumb-sep">
          /
        </span>
        <Link to="/p/$slug" params={{ slug }} className="crumb current-project">
          {project.data?.name ?? slug}
        </Link>
        {me.data && <span className="role-pill">{me.data.role}</span>}
      </nav>
      <nav className="project-sections" aria-label="Project">
        {SECTIONS.map(([to, label]) => (
          <Link key={to} to={to} params={{ slug }} className="section-link" activeOptions={{ exact: to === "/p/$slug" }}>
            {label}
          </Link>
        ))}
      </nav>
      {onContent ? (
        <div className="project-body">
          <ContentTree slug={slug} currentId={id ?? null} locale={locale} canCreate={canWrite(me.data)} />
          <Outlet />
        </div>
      ) : (
        <div className="project-page">
          <Outlet />
        </div>
      )}
    </div>
  );
}

export function ProjectHome() {
  return (
    <main className="editor-pane empty-pane" id="main">
      <h1 className="visually-hidden">Content</h1>
      <p className="muted">Choose a page in the tree to edit it{/* the New page button creates one */}, or create a new page.</p>
    </main>
  );
}
