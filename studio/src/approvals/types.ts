// The approvals' wire shapes, taken from the server's declarations (types only).
import type { z } from "zod";
import type { ApprovalOut, PartOut } from "../../../src/approvals/model";

export type Approval = z.output<typeof ApprovalOut>;
/** One part of a publication that can be approved in part (GET …/approvals/{id}: `parts`). */
export type ApprovalPart = z.output<typeof PartOut>;
export type ApprovalStatus = Approval["status"];

/** One page of GET /admin/p/{ref}/approvals. */
export interface ApprovalPage {
  data: Approval[];
  total: number;
  page: number;
  per_page: number;
}
