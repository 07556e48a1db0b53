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
ALTER TABLE "translation_units" ADD CONSTRAINT "translation_units_translation_fk" FOREIGN KEY ("node_id","locale") REFERENCES "public"."translations"("node_id","locale") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "translation_units_stale_idx" ON "translation_units" USING btree ("project_id","locale") WHERE "translation_units"."status" = 'stale';