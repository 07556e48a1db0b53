CREATE TABLE "approvals" (
	"id" uuid PRIMARY KEY NOT NULL,
	"project_id" uuid NOT NULL,
	"node_id" uuid NOT NULL,
	"operation" text NOT NULL,
	"arguments" jsonb NOT NULL,
	"revision" integer NOT NULL,
	"requested_by" jsonb NOT NULL,
	"requester" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"decided_by" jsonb,
	"decided_at" timestamp with time zone,
	"used_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "approvals_status_check" CHECK ("approvals"."status" in ('pending', 'approved', 'rejected', 'expired', 'void', 'used'))
);
--> statement-breakpoint
CREATE TABLE "mcp_client_capabilities" (
	"requester" text PRIMARY KEY NOT NULL,
	"url_elicitation" boolean NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "approvals" ADD CONSTRAINT "approvals_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "approvals_project_created_idx" ON "approvals" USING btree ("project_id","created_at");--> statement-breakpoint
CREATE INDEX "approvals_requester_idx" ON "approvals" USING btree ("project_id","requester","operation","node_id");--> statement-breakpoint
UPDATE "admin_keys" SET "scopes" = "scopes" || '["content:publish"]'::jsonb WHERE "scopes" @> '["content:write"]'::jsonb AND NOT "scopes" @> '["content:publish"]'::jsonb;--> statement-breakpoint
UPDATE "mcp_tokens" SET "scopes" = "scopes" || '["content:publish"]'::jsonb WHERE "scopes" @> '["content:write"]'::jsonb AND NOT "scopes" @> '["content:publish"]'::jsonb;--> statement-breakpoint
UPDATE "oauth_grants" SET "scopes" = "scopes" || '["content:publish"]'::jsonb WHERE "scopes" @> '["content:write"]'::jsonb AND NOT "scopes" @> '["content:publish"]'::jsonb;--> statement-breakpoint
UPDATE "oauth_codes" SET "scopes" = "scopes" || '["content:publish"]'::jsonb WHERE "scopes" @> '["content:write"]'::jsonb AND NOT "scopes" @> '["content:publish"]'::jsonb;--> statement-breakpoint
UPDATE "oauth_tokens" SET "scopes" = "scopes" || '["content:publish"]'::jsonb WHERE "scopes" @> '["content:write"]'::jsonb AND NOT "scopes" @> '["content:publish"]'::jsonb;--> statement-breakpoint
UPDATE "oauth_clients" SET "scope" = "scope" || ' content:publish' WHERE ' ' || "scope" || ' ' LIKE '% content:write %' AND ' ' || "scope" || ' ' NOT LIKE '% content:publish %';
