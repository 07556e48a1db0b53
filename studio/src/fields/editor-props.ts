/** What the Markdown and HTML editors take: the text, where it goes, and the ids that name and describe them. */
export interface EditorProps {
  value: string;
  onChange: (value: string) => void;
  labelId: string;
  describedBy: string | undefined;
  invalid: boolean;
  required: boolean;
  readOnly: boolean;
}
