-- Users belong to projects. An instance-wide editor or viewer becomes a member with that
-- role in every project that exists now (what they could reach before the upgrade, no more, no less);
-- projects created later are not theirs until an administrator adds them. Owners stay owners.
CREATE TABLE "project_members" (
	"project_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"role" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "project_members_project_id_user_id_pk" PRIMARY KEY("project_id","user_id"),
	CONSTRAINT "project_members_role_check" CHECK ("project_members"."role" in ('viewer', 'editor', 'admin'))
);
--> statement-breakpoint
ALTER TABLE "project_members" ADD CONSTRAINT "project_members_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "project_members" ADD CONSTRAINT "project_members_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "project_members_user_idx" ON "project_members" USING btree ("user_id");--> statement-breakpoint
INSERT INTO "project_members" ("project_id", "user_id", "role", "created_at", "updated_at")
	SELECT p."id", u."id", u."role", now(), now() FROM "users" u CROSS JOIN "projects" p WHERE u."role" IN ('editor', 'viewer');--> statement-breakpoint
-- Any other role held nothing before (no scopes) and holds nothing now: a member of no project.
UPDATE "users" SET "role" = 'member' WHERE "role" <> 'owner';--> statement-breakpoint
ALTER TABLE "users" ALTER COLUMN "role" SET DEFAULT 'member';--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_role_check" CHECK ("users"."role" in ('owner', 'member'));--> statement-breakpoint
-- users:write is new. Root keys (every scope, no project limit) could already do everything an
-- owner can; they get it so that they keep being root keys. No other key changes.
UPDATE "admin_keys" SET "scopes" = "scopes" || '["users:write"]'::jsonb
	WHERE ("project_ids" IS NULL OR "project_ids" = 'null'::jsonb)
	AND "scopes" @> '["projects:read","projects:write","content:read","content:write","ai:read","ai:write","keys:write"]'::jsonb
	AND NOT "scopes" @> '["users:write"]'::jsonb;
