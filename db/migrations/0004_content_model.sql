CREATE TABLE "content_models" (
	"project_id" uuid PRIMARY KEY NOT NULL,
	"version" integer NOT NULL,
	"definition" jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "projects" ADD COLUMN "model_version" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "nodes" ADD COLUMN "fields" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "translations" ADD COLUMN "fields" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "content_models" ADD CONSTRAINT "content_models_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- model:write is new. Root keys (every scope, no project limit) get it so that they stay
-- root keys, as users:write was given in 0003; no other key changes.
UPDATE "admin_keys" SET "scopes" = "scopes" || '["model:write"]'::jsonb
	WHERE ("project_ids" IS NULL OR "project_ids" = 'null'::jsonb)
	AND "scopes" @> '["projects:read","projects:write","content:read","content:write","ai:read","ai:write","keys:write","users:write"]'::jsonb
	AND NOT "scopes" @> '["model:write"]'::jsonb;
