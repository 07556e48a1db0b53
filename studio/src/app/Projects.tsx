// The projects this person may reach (GET /admin/projects).
import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { ApiError, data, messageOf } from "./api";
import type { Project } from "./types";

export function ProjectsPage() {
  const projects = useQuery({ queryKey: ["projects"], queryFn: () => data<Project[]>("/admin/projects") });
  return (
    <main className="page" id="main">
      <h1>Projects</h1>
      {projects.isPending && <p>Loading projects…</p>}
      {projects.isError &&
        (projects.error instanceof ApiError && projects.error.status === 403 ? (
          <p className="notice">You have no access to the list of projects. Ask an administrator to add you to a project, or open a project's address directly.</p>
        ) : (
          <p role="alert" className="alert error">
            {messageOf(projects.error)}
          </p>
        ))}
      {projects.data && projects.data.length === 0 && <p className="notice">You are not a member of any project yet. Ask an administrator to add you to one.</p>}
      {projects.data && projects.data.length > 0 && (
        <ul className="project-list">
          {projects.data.map((p) => (
            <li key={p.id}>
              <Link to="/p/$slug" params={{ slug: p.slug }} className="project-card">
                <span className="project-name">{p.name}</span>
                <span className="project-meta">
                  {p.slug} · {p.locales.length > 1 ? `${p.locales.length} locales` : p.default_locale}
                </span>
              </Link>
            </li>
          ))}
        </ul>
      )}
    </main>
  );
}
