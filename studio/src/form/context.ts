// What every field of one NodeForm shares: the store, the mode, and who shows which violation.
import { createContext, useContext } from "react";
import type { FormStore } from "./store";
import type { EditorDoc, NodeOption } from "./types";
import type { ViolationOwners } from "./violations";

export interface FormContextValue {
  store: FormStore;
  readOnly: boolean;
  translation: { base: EditorDoc; locale: string } | null;
  searchNodes: (q: string) => Promise<NodeOption[]>;
  lookupNode: (id: string) => Promise<NodeOption | null>;
  owners: ViolationOwners;
  /** Titles of nodes seen in search answers, so a node field can show the chosen node's title. */
  nodeTitles: Map<string, string>;
}

export const FormContext = createContext<FormContextValue | null>(null);

export function useForm(): FormContextValue {
  const value = useContext(FormContext);
  if (!value) throw new Error("a field is rendered outside NodeForm");
  return value;
}
