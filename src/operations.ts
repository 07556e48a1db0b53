import { activityOperations } from "./activity/operations";
import { aiOperations } from "./ai/operations";
import { approvalOperations } from "./approvals/operations";
import { contentOperations } from "./content/operations";
import { activityOf, type Operation, type ProjectOperation } from "./core/operation";
import { historyOperations } from "./history/operations";
import { keyOperations } from "./keys/operations";
import { mcpTokenOperations } from "./mcp-tokens/operations";
import { mediaOperations } from "./media/operations";
import { modelOperations } from "./model/operations";
import { oauthOperations } from "./oauth/operations";
import { previewOperations } from "./preview/operations";
import { projectOperations } from "./projects/operations";
import { scheduleOperations } from "./schedule/operations";
import { searchOperations } from "./search/operations";
import { themeOperations } from "./theme/operations";
import { translationFileOperations } from "./translations/files-operations";
import { glossaryOperations } from "./translations/glossary-operations";
import { translationJobOperations } from "./translations/jobs-operations";
import { translationOperations } from "./translations/operations";
import { userOperations } from "./users/operations";
import { webhookOperations } from "./webhooks/operations";
import { recordOperationActivity } from "./write/activity";

/** Every declared operation: its admin routes, its MCP tool (in this order) and its OpenAPI entries come from here. */
export const OPERATIONS: readonly Operation[] = [
  ...contentOperations,
  ...searchOperations,
  ...scheduleOperations,
  ...activityOperations,
  ...translationOperations,
  ...translationFileOperations,
  ...glossaryOperations,
  ...translationJobOperations,
  ...modelOperations,
  ...historyOperations,
  ...approvalOperations,
  ...mediaOperations,
  ...aiOperations,
  ...themeOperations,
  ...projectOperations,
  ...previewOperations,
  ...keyOperations,
  ...mcpTokenOperations,
  ...oauthOperations,
  ...userOperations,
  ...webhookOperations,
].map(withActivity);

/**
 * Every project write lands in the activity log: content writes from the write path, in their
 * transaction; any other (providers, tokens, members, theme, settings, what comes next) here, once
 * it has succeeded. Adding an operation needs nothing more.
 */
function withActivity(op: Operation): Operation {
  if (op.target !== "project") return op;
  const run: ProjectOperation["run"] = async (ctx, input) => {
    const out = await op.run(ctx, input);
    // After the write committed: a failure to log it must not turn a done write into an error.
    await recordOperationActivity(ctx.deps.db, ctx.write, activityOf(op), ctx.project.id, input, out).catch((err: unknown) =>
      ctx.deps.log.warn("activity: a write's entry could not be recorded", { operation: op.name, error: err instanceof Error ? err.message : String(err) }),
    );
    return out;
  };
  return { ...op, run };
}
