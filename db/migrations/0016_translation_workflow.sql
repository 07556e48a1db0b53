CREATE TABLE "ai_usage" (
	"project_id" uuid NOT NULL,
	"provider_id" uuid NOT NULL,
	"month" text NOT NULL,
	"kind" text NOT NULL,
	"input_tokens" bigint DEFAULT 0 NOT NULL,
	"output_tokens" bigint DEFAULT 0 NOT NULL,
	"calls" integer DEFAULT 0 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "ai_usage_project_id_provider_id_month_pk" PRIMARY KEY("project_id","provider_id","month")
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
CREATE TABLE "translation_job_units" (
	"job_id" uuid NOT NULL,
	"node_id" uuid NOT NULL,
	"locale" text NOT NULL,
	"pointer" text NOT NULL,
	"source_hash" text NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL,
	"answer" text,
	"answer_status" text,
	"answer_origin" jsonb,
	"failures" jsonb,
	CONSTRAINT "translation_job_units_job_id_node_id_locale_pointer_pk" PRIMARY KEY("job_id","node_id","locale","pointer")
);
--> statement-breakpoint
CREATE TABLE "translation_jobs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"project_id" uuid NOT NULL,
	"root_node_id" uuid,
	"locales" jsonb NOT NULL,
	"provider_id" uuid,
	"force" boolean DEFAULT false NOT NULL,
	"scope" text DEFAULT 'subtree' NOT NULL,
	"planned" boolean DEFAULT true NOT NULL,
	"status" text NOT NULL,
	"estimate" jsonb NOT NULL,
	"total" integer NOT NULL,
	"done" integer DEFAULT 0 NOT NULL,
	"usage" jsonb NOT NULL,
	"error" text,
	"created_by" jsonb NOT NULL,
	"task_id" text,
	"lease_owner" text,
	"lease_until" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	CONSTRAINT "translation_jobs_status_check" CHECK ("translation_jobs"."status" in ('queued', 'running', 'done', 'cancelled', 'failed'))
);
--> statement-breakpoint
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
ALTER TABLE "projects" ADD COLUMN "fallbacks" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "projects" ADD COLUMN "auto_translate" jsonb DEFAULT '{"locales":[]}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "projects" ADD COLUMN "ai_monthly_token_cap" bigint;--> statement-breakpoint
ALTER TABLE "ai_usage" ADD CONSTRAINT "ai_usage_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "glossary_terms" ADD CONSTRAINT "glossary_terms_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "translation_memory" ADD CONSTRAINT "translation_memory_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "translation_settings" ADD CONSTRAINT "translation_settings_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "translation_job_units" ADD CONSTRAINT "translation_job_units_job_fk" FOREIGN KEY ("job_id") REFERENCES "public"."translation_jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "translation_jobs" ADD CONSTRAINT "translation_jobs_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "translation_units" ADD CONSTRAINT "translation_units_translation_fk" FOREIGN KEY ("node_id","locale") REFERENCES "public"."translations"("node_id","locale") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "glossary_terms_uq" ON "glossary_terms" USING btree ("project_id","locale","kind","source");--> statement-breakpoint
CREATE INDEX "translation_memory_project_idx" ON "translation_memory" USING btree ("project_id");--> statement-breakpoint
CREATE INDEX "translation_job_units_state_idx" ON "translation_job_units" USING btree ("job_id","state");--> statement-breakpoint
CREATE INDEX "translation_jobs_project_idx" ON "translation_jobs" USING btree ("project_id","created_at");--> statement-breakpoint
CREATE INDEX "translation_jobs_open_idx" ON "translation_jobs" USING btree ("status") WHERE "translation_jobs"."status" in ('queued', 'running');--> statement-breakpoint
CREATE INDEX "translation_units_stale_idx" ON "translation_units" USING btree ("project_id","locale") WHERE "translation_units"."status" = 'stale';