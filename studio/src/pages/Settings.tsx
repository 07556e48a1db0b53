// The project's settings screen (/studio/p/{slug}/settings): one tab per area, each shown only to
// people whose scopes in the project allow it (GET /studio/api/p/{ref}/me); the server refuses the
// rest anyway (403).
import { useParams } from "@tanstack/react-router";
import { useState } from "react";
import { Tab, TabList, TabPanel, Tabs } from "react-aria-components";
import { messageOf } from "../app/api";
import { useMe, useProject } from "../app/queries";
import { AgentsTab } from "../settings/AgentsTab";
import { MembersTab } from "../settings/MembersTab";
import { ProjectTab } from "../settings/ProjectTab";
import { ProvidersTab } from "../settings/ProvidersTab";
import { rightsOf } from "../settings/rights";
import { SemanticSection } from "../settings/SemanticSection";
import { ThemeTab } from "../settings/ThemeTab";
import { TokensTab } from "../settings/TokensTab";
import "../settings/settings.css";

type TabId = "project" | "theme" | "members" | "ai" | "mcp" | "agents";

export function SettingsPage() {
  const { slug } = useParams({ from: "/p/$slug" });
  const me = useMe(slug);
  const project = useProject(slug);
  const [selected, setSelected] = useState<TabId>("project");
  const rights = rightsOf(me.data);
  const tabs: Array<[TabId, string, boolean]> = [
    ["project", "Project", true],
    ["theme", "Theme", rights.theme],
    ["members", "Members", rights.members],
    ["ai", "AI providers", rights.aiRead],
    ["mcp", "MCP tokens", rights.aiRead],
    ["agents", "Agents", rights.aiRead],
  ];
  const shown = tabs.filter(([, , allowed]) => allowed);
  const current = shown.some(([id]) => id === selected) ? selected : "project";
  const failed = me.error ?? project.error;
  return (
    <main className="editor-pane settings-page" id="main">
      <h1>Settings</h1>
      {failed && (
        <p role="alert" className="alert error">
          {messageOf(failed)}
        </p>
      )}
      {(me.isPending || project.isPending) && !failed && <p aria-busy="true">Loading the settings…</p>}
      {me.data && project.data && (
        <Tabs className="settings-tabs" selectedKey={current} onSelectionChange={(k) => setSelected(k as TabId)}>
          <TabList className="settings-tablist" aria-label="Settings">
            {shown.map(([id, label]) => (
              <Tab key={id} id={id} className="settings-tab">
                {label}
              </Tab>
            ))}
          </TabList>
          <TabPanel id="project" className="settings-panel">
            <ProjectTab project={project.data} canEdit={rights.editProject} />
          </TabPanel>
          {rights.theme && (
            <TabPanel id="theme" className="settings-panel">
              <ThemeTab slug={slug} projectName={project.data.name} />
            </TabPanel>
          )}
          {rights.members && (
            <TabPanel id="members" className="settings-panel">
              <MembersTab slug={slug} />
            </TabPanel>
          )}
          {rights.aiRead && (
            <TabPanel id="ai" className="settings-panel">
              <ProvidersTab project={project.data} canEdit={rights.aiWrite} />
              {rights.projectRead && <SemanticSection project={project.data} canEdit={rights.editProject} />}
            </TabPanel>
          )}
          {rights.aiRead && (
            <TabPanel id="mcp" className="settings-panel">
              <TokensTab slug={slug} canEdit={rights.aiWrite} scopes={rights.mcpScopes} />
            </TabPanel>
          )}
          {rights.aiRead && (
            <TabPanel id="agents" className="settings-panel">
              <AgentsTab slug={slug} projectId={project.data.id} canRevokeTokens={rights.aiWrite} canSeeGrants={!!me.data.scopes.includes("keys:write")} />
            </TabPanel>
          )}
        </Tabs>
      )}
    </main>
  );
}
