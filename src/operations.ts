import { aiOperations } from "./ai/operations";
import { contentOperations } from "./content/operations";
import { historyOperations } from "./history/operations";
import { keyOperations } from "./keys/operations";
import type { Operation } from "./lib/operation";
import { mcpTokenOperations } from "./mcp/tokens/operations";
import { oauthOperations } from "./oauth/operations";
import { projectOperations } from "./projects/operations";
import { themeOperations } from "./theme/operations";
import { translationOperations } from "./translations/operations";
import { userOperations } from "./users/operations";

/** Every declared operation: its admin routes, its MCP tool (in this order) and its OpenAPI entries come from here. */
export const OPERATIONS: readonly Operation[] = [
  ...contentOperations,
  ...translationOperations,
  ...historyOperations,
  ...aiOperations,
  ...themeOperations,
  ...projectOperations,
  ...keyOperations,
  ...mcpTokenOperations,
  ...oauthOperations,
  ...userOperations,
];
