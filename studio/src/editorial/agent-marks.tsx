// "Who wrote this", beside each field: the pointers an agent changed since a person last saved
// (GET …/agent-changes), handed down the form by context. A field carries the badge when the mark
// names it, something inside it, or an object it sits in (a whole object an agent replaced).
import { createContext, type ReactNode, useContext } from "react";

/** Pointer → the agent's name as a person reads it. */
export type AgentMarks = ReadonlyMap<string, string>;

export const AgentMarksContext = createContext<AgentMarks>(new Map());

/** The agent that last changed the field at `pointer` (or inside it, or an object around it), or null. */
export function useAgentMark(pointer: string): string | null {
  const marks = useContext(AgentMarksContext);
  if (marks.size === 0) return null;
  const exact = marks.get(pointer);
  if (exact) return exact;
  for (const [p, name] of marks) if (p.startsWith(`${pointer}/`) || pointer.startsWith(`${p}/`)) return name;
  return null;
}

/** The badge itself; `id` lets the control name it in aria-describedby. */
export function AgentBadge({ agent, id }: { agent: string | null; id: string }): ReactNode {
  return agent ? (
    <span className="st-badge badge-agent field-agent" id={id}>
      Changed by {agent}
    </span>
  ) : null;
}
