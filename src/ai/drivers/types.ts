import type { PostJson } from "./request";

/** What a driver needs for one translation; the key is already opened. */
interface DriverCall {
  readonly baseUrl: string;
  readonly apiKey: string | null;
  readonly model: string;
  readonly system: string;
  readonly text: string;
  readonly maxOutputTokens: number;
}

export type Driver = (post: PostJson, call: DriverCall) => Promise<string>;
