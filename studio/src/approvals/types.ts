// The approvals' wire shapes, taken from the server's declarations (types only).
import type { z } from "zod";
import type { ApprovalOut } from "../../../src/approvals/model";

export type Approval = z.output<typeof ApprovalOut>;
export type ApprovalStatus = Approval["status"];

/** One page of GET /admin/p/{ref}/approvals. */
export interface ApprovalPage {
  data: Approval[];
  total: number;
  page: number;
  per_page: number;
}
