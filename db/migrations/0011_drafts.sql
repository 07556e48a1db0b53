CREATE TABLE "published_blocks" (
	"id" uuid PRIMARY KEY NOT NULL,
	"node_id" uuid NOT NULL,
	"type" text NOT NULL,
	"order" integer NOT NULL,
	"data" jsonb DEFAULT '{}'::jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "published_nodes" (
	"id" uuid PRIMARY KEY NOT NULL,
	"parent_id" uuid,
	"project_id" uuid NOT NULL,
	"slug" text NOT NULL,
	"path" text NOT NULL,
	"type" text NOT NULL,
	"title" text NOT NULL,
	"status" text DEFAULT 'draft' NOT NULL,
	"position" integer DEFAULT 0 NOT NULL,
	"seo" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"fields" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"revision" integer DEFAULT 0 NOT NULL,
	"published_at" timestamp with time zone,
	"publish_at" timestamp with time zone,
	"unpublish_at" timestamp with time zone,
	"scheduled_by" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "published_translations" (
	"id" uuid PRIMARY KEY NOT NULL,
	"project_id" uuid NOT NULL,
	"node_id" uuid NOT NULL,
	"locale" text NOT NULL,
	"meta" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"blocks" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"fields" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"status" text DEFAULT 'draft' NOT NULL,
	"publish_at" timestamp with time zone,
	"unpublish_at" timestamp with time zone,
	"scheduled_by" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "translations" ALTER COLUMN "status" SET DEFAULT 'draft';--> statement-breakpoint
ALTER TABLE "nodes" ADD COLUMN "changed" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "translations" ADD COLUMN "changed" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "revisions" ADD COLUMN "published" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "published_blocks" ADD CONSTRAINT "published_blocks_node_id_published_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."published_nodes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "published_nodes" ADD CONSTRAINT "published_nodes_id_nodes_id_fk" FOREIGN KEY ("id") REFERENCES "public"."nodes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "published_nodes" ADD CONSTRAINT "published_nodes_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "published_translations" ADD CONSTRAINT "published_translations_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "published_translations" ADD CONSTRAINT "published_translations_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "published_blocks_node_order_idx" ON "published_blocks" USING btree ("node_id","order");--> statement-breakpoint
CREATE UNIQUE INDEX "published_nodes_project_path_uq" ON "published_nodes" USING btree ("project_id","path");--> statement-breakpoint
CREATE INDEX "published_nodes_parent_position_idx" ON "published_nodes" USING btree ("parent_id","position","id");--> statement-breakpoint
CREATE INDEX "published_nodes_project_status_idx" ON "published_nodes" USING btree ("project_id","status","id");--> statement-breakpoint
CREATE INDEX "published_nodes_parent_updated_idx" ON "published_nodes" USING btree ("parent_id","status","updated_at","id");--> statement-breakpoint
CREATE INDEX "published_nodes_parent_created_idx" ON "published_nodes" USING btree ("parent_id","status","created_at","id");--> statement-breakpoint
CREATE INDEX "published_nodes_parent_title_idx" ON "published_nodes" USING btree ("parent_id","status","title","id");--> statement-breakpoint
CREATE INDEX "published_nodes_project_path_prefix_idx" ON "published_nodes" USING btree ("project_id","path" text_pattern_ops);--> statement-breakpoint
CREATE UNIQUE INDEX "published_translations_node_locale_uq" ON "published_translations" USING btree ("node_id","locale");--> statement-breakpoint
CREATE INDEX "published_translations_project_locale_idx" ON "published_translations" USING btree ("project_id","locale");--> statement-breakpoint
CREATE INDEX "published_translations_project_locale_slug_idx" ON "published_translations" USING btree ("project_id","locale",("meta"->>'slug'));--> statement-breakpoint
-- Every published node gets a published version equal to its content now; a draft or archived node with a published child keeps a tombstone (its status), so the child stays hidden as before.
INSERT INTO "published_nodes" ("id", "parent_id", "project_id", "slug", "path", "type", "title", "status", "position", "seo", "fields", "revision", "published_at", "publish_at", "unpublish_at", "scheduled_by", "created_at", "updated_at")
SELECT n."id", n."parent_id", n."project_id", n."slug", n."path", n."type", n."title", n."status", n."position", n."seo", n."fields", n."revision", n."published_at", n."publish_at", n."unpublish_at", n."scheduled_by", n."created_at", n."updated_at"
FROM "nodes" n
WHERE n."status" = 'published' OR EXISTS (SELECT 1 FROM "nodes" c WHERE c."parent_id" = n."id" AND c."status" = 'published');--> statement-breakpoint
INSERT INTO "published_blocks" ("id", "node_id", "type", "order", "data")
SELECT b."id", b."node_id", b."type", b."order", b."data" FROM "blocks" b JOIN "published_nodes" p ON p."id" = b."node_id";--> statement-breakpoint
INSERT INTO "published_translations" ("id", "project_id", "node_id", "locale", "meta", "blocks", "fields", "status", "publish_at", "unpublish_at", "scheduled_by", "created_at", "updated_at")
SELECT t."id", t."project_id", t."node_id", t."locale", t."meta", t."blocks", t."fields", t."status", t."publish_at", t."unpublish_at", t."scheduled_by", t."created_at", t."updated_at"
FROM "translations" t WHERE t."status" = 'published';
