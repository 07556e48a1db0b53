// The form layer's public interface (studio/src/form/**), imported from one place.

export { NodeForm } from "../form/NodeForm";
export { escapeSegment } from "../form/pointer";
export { createFormStore, type FormStore, useDirty, useField } from "../form/store";
export type { EditorBlock, EditorDoc, NodeOption, Violation } from "../form/types";
