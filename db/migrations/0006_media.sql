CREATE TABLE "media" (
	"id" uuid PRIMARY KEY NOT NULL,
	"project_id" uuid NOT NULL,
	"hash" text NOT NULL,
	"type" text NOT NULL,
	"filename" text NOT NULL,
	"size" bigint NOT NULL,
	"width" integer,
	"height" integer,
	"title" text,
	"alt" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"alt_draft" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"focal_x" real,
	"focal_y" real,
	"placeholder" text,
	"dominant_color" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "projects" ADD COLUMN "media_quota_bytes" bigint;--> statement-breakpoint
ALTER TABLE "media" ADD CONSTRAINT "media_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "media_project_created_idx" ON "media" USING btree ("project_id","created_at","id");--> statement-breakpoint
CREATE INDEX "media_hash_idx" ON "media" USING btree ("hash");
--> statement-breakpoint
-- media:write is new. Root keys (every scope, no project limit) get it so that they stay
-- root keys, as 0003 and 0004 did for users:write and model:write; no other key changes.
UPDATE "admin_keys" SET "scopes" = "scopes" || '["media:write"]'::jsonb
	WHERE ("project_ids" IS NULL OR "project_ids" = 'null'::jsonb)
	AND "scopes" @> '["projects:read","projects:write","content:read","content:write","ai:read","ai:write","keys:write","users:write","model:write"]'::jsonb
	AND NOT "scopes" @> '["media:write"]'::jsonb;
