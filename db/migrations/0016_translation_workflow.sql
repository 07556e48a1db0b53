CREATE TABLE "translation_units" (
	"project_id" uuid NOT NULL,
	"node_id" uuid NOT NULL,
	"locale" text NOT NULL,
	"pointer" text NOT NULL,
	"status" text NOT NULL,
	"source_hash" text NOT NULL,
	"source_revision" integer NOT NULL,
	"origin" jsonb NOT NULL,
	"human_edited" boolean DEFAULT false NOT NULL,
	"stale_since" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "translation_units_node_id_locale_pointer_pk" PRIMARY KEY("node_id","locale","pointer"),
	CONSTRAINT "translation_units_status_check" CHECK ("translation_units"."status" in ('machine', 'needs_review', 'stale', 'approved', 'published'))
);
--> statement-breakpoint
CREATE TABLE "glossary_terms" (
	"id" uuid PRIMARY KEY NOT NULL,
	"project_id" uuid NOT NULL,
	"locale" text NOT NULL,
	"kind" text NOT NULL,
	"source" text NOT NULL,
	"target" text,
	"case_sensitive" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "glossary_terms_kind_check" CHECK ("glossary_terms"."kind" in ('forced', 'dnt', 'forbidden')),
	CONSTRAINT "glossary_terms_target_check" CHECK (("glossary_terms"."kind" = 'forced') = ("glossary_terms"."target" is not null))
);
--> statement-breakpoint
CREATE TABLE "translation_memory" (
	"project_id" uuid NOT NULL,
	"locale" text NOT NULL,
	"source_hash" text NOT NULL,
	"target" text NOT NULL,
	"origin" jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "translation_memory_project_id_locale_source_hash_pk" PRIMARY KEY("project_id","locale","source_hash")
);
--> statement-breakpoint
CREATE TABLE "translation_settings" (
	"project_id" uuid PRIMARY KEY NOT NULL,
	"style" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "projects" ADD COLUMN "fallbacks" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "projects" ADD COLUMN "auto_translate" jsonb DEFAULT '{"locales":[]}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "projects" ADD COLUMN "ai_monthly_token_cap" bigint;--> statement-breakpoint
ALTER TABLE "translation_units" ADD CONSTRAINT "translation_units_translation_fk" FOREIGN KEY ("node_id","locale") REFERENCES "public"."translations"("node_id","locale") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "glossary_terms" ADD CONSTRAINT "glossary_terms_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "translation_memory" ADD CONSTRAINT "translation_memory_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "translation_settings" ADD CONSTRAINT "translation_settings_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "translation_units_stale_idx" ON "translation_units" USING btree ("project_id","locale") WHERE "translation_units"."status" = 'stale';--> statement-breakpoint
CREATE UNIQUE INDEX "glossary_terms_uq" ON "glossary_terms" USING btree ("project_id","locale","kind","source");--> statement-breakpoint
CREATE INDEX "translation_memory_project_idx" ON "translation_memory" USING btree ("project_id");