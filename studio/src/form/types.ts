// The form layer's public types (docs: /work/probe/studio-contract.md, "The form layer").
export type JsonSchema = Record<string, unknown>;
export interface EditorBlock {
  id?: string;
  type: string;
  data: Record<string, unknown>;
}
export interface EditorDoc {
  title: string;
  slug: string;
  fields: Record<string, unknown>;
  blocks: EditorBlock[];
}
export interface Violation {
  pointer: string;
  message: string;
  rule?: string;
}
export interface NodeOption {
  id: string;
  title: string;
  path: string;
}
