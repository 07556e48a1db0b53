-- Preview tokens and scheduled publishing.
CREATE TABLE "preview_tokens" (
	"id" uuid PRIMARY KEY NOT NULL,
	"project_id" uuid NOT NULL,
	"name" text,
	"token_hash" text NOT NULL,
	"token_hint" text NOT NULL,
	"created_by" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "preview_tokens_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
ALTER TABLE "preview_tokens" ADD CONSTRAINT "preview_tokens_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "preview_tokens_project_idx" ON "preview_tokens" USING btree ("project_id","created_at");--> statement-breakpoint
ALTER TABLE "nodes" ADD COLUMN "publish_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "nodes" ADD COLUMN "unpublish_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "nodes" ADD COLUMN "scheduled_by" jsonb;--> statement-breakpoint
ALTER TABLE "translations" ADD COLUMN "publish_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "translations" ADD COLUMN "unpublish_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "translations" ADD COLUMN "scheduled_by" jsonb;--> statement-breakpoint
CREATE INDEX "nodes_publish_at_idx" ON "nodes" USING btree ("publish_at") WHERE "nodes"."publish_at" is not null;--> statement-breakpoint
CREATE INDEX "nodes_unpublish_at_idx" ON "nodes" USING btree ("unpublish_at") WHERE "nodes"."unpublish_at" is not null;--> statement-breakpoint
CREATE INDEX "translations_publish_at_idx" ON "translations" USING btree ("publish_at") WHERE "translations"."publish_at" is not null;--> statement-breakpoint
CREATE INDEX "translations_unpublish_at_idx" ON "translations" USING btree ("unpublish_at") WHERE "translations"."unpublish_at" is not null;
