import { z } from "zod";
import { IDEMPOTENT_WRITE, projectOperation, READ_ONLY } from "../core/operation";
import { ThemeOut } from "./model";
import { getTheme, updateTheme } from "./service";

const HEX_COLOR = /^#[0-9a-fA-F]{6}$/;
const AssetUrl = z.string().max(2048).nullable().optional().describe("absolute http(s) URL or a site-relative path; null clears");

const getThemeOp = projectOperation({
  name: "get_theme",
  title: "Read the theme",
  description: "Read the project's brand settings: logo_url, favicon_url, accent_color (#rrggbb) and name_override (null when unset).",
  scopes: ["content:read"],
  input: z.object({}),
  output: z.object({ theme: ThemeOut }),
  tool: READ_ONLY,
  http: { method: "GET", path: "/admin/p/:ref/theme", data: "theme", tag: "theme", summary: "Read the project's theme" },
  run: async ({ deps, project }) => ({ theme: await getTheme(deps.db, project.id) }),
});

const updateThemeOp = projectOperation({
  name: "update_theme",
  title: "Update the theme",
  description:
    "Change the project's brand settings, which every reader sees at once (there is no draft of them): they need theme:write (or projects:write), never content:write alone. " +
    "Omitted fields are kept; null clears a field. accent_color is #rrggbb.",
  scopes: { anyOf: ["projects:write", "theme:write"] },
  input: z.object({
    logo_url: AssetUrl,
    favicon_url: AssetUrl,
    accent_color: z.string().regex(HEX_COLOR, "#rrggbb").nullable().optional(),
    name_override: z.string().max(200).nullable().optional(),
  }),
  output: z.object({ theme: ThemeOut }),
  tool: IDEMPOTENT_WRITE,
  http: [
    { method: "PUT", path: "/admin/p/:ref/theme", data: "theme", tag: "theme", summary: "Update the theme (omitted fields kept, null clears)" },
    { method: "PATCH", path: "/admin/p/:ref/theme", data: "theme", tag: "theme", summary: "Update the theme (alias of PUT)" },
  ],
  run: async ({ deps, project, now, write }, args) => ({ theme: await updateTheme(deps.db, write, project, args, now) }),
});

export const themeOperations = [getThemeOp, updateThemeOp];
