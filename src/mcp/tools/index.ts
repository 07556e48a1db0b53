import { translateNodeTool, translateTextTool } from "./ai";
import { getProjectTool, getThemeTool, getTranslationTool, listEntriesTool, updateThemeTool, upsertTranslationTool } from "./content";
import { createNodeTool, getNodeTool, listNodesTool, reorderBlocksTool, transitionTools, updateNodeTool } from "./nodes";
import type { ToolDef } from "./tool";

/** Every tool /mcp serves, in the order tools/list shows them. */
export const TOOLS: readonly ToolDef[] = [
  listNodesTool,
  getNodeTool,
  createNodeTool,
  updateNodeTool,
  reorderBlocksTool,
  ...transitionTools,
  listEntriesTool,
  getTranslationTool,
  upsertTranslationTool,
  translateNodeTool,
  translateTextTool,
  getThemeTool,
  updateThemeTool,
  getProjectTool,
] as unknown as readonly ToolDef[];
