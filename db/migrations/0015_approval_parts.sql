ALTER TABLE "approvals" DROP CONSTRAINT "approvals_status_check";--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "decision_parts" jsonb;--> statement-breakpoint
ALTER TABLE "approvals" ADD CONSTRAINT "approvals_status_check" CHECK ("approvals"."status" in ('pending', 'approved', 'rejected', 'partial', 'expired', 'void', 'used'));