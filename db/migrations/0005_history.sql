CREATE TABLE "activity" (
	"id" uuid PRIMARY KEY NOT NULL,
	"project_id" uuid NOT NULL,
	"operation" text NOT NULL,
	"actor" jsonb NOT NULL,
	"target" jsonb NOT NULL,
	"node_id" uuid,
	"revision" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "revisions" (
	"id" uuid PRIMARY KEY NOT NULL,
	"project_id" uuid NOT NULL,
	"node_id" uuid NOT NULL,
	"number" integer NOT NULL,
	"operation" text NOT NULL,
	"actor" jsonb NOT NULL,
	"snapshot" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "nodes" ADD COLUMN "revision" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "activity" ADD CONSTRAINT "activity_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "revisions" ADD CONSTRAINT "revisions_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "activity_project_created_idx" ON "activity" USING btree ("project_id","created_at","id");--> statement-breakpoint
CREATE INDEX "activity_node_idx" ON "activity" USING btree ("node_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "revisions_node_number_uq" ON "revisions" USING btree ("node_id","number");--> statement-breakpoint
CREATE INDEX "revisions_project_created_idx" ON "revisions" USING btree ("project_id","created_at");