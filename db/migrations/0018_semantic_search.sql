CREATE TABLE "search_embed_calls" (
	"project_id" uuid NOT NULL,
	"day" text NOT NULL,
	"calls" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "search_embed_calls_project_id_day_pk" PRIMARY KEY("project_id","day")
);
--> statement-breakpoint
CREATE TABLE "search_embed_leases" (
	"node_id" uuid NOT NULL,
	"locale" text NOT NULL,
	"project_id" uuid NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"leased_until" timestamp with time zone,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_error" text,
	CONSTRAINT "search_embed_leases_node_id_locale_pk" PRIMARY KEY("node_id","locale")
);
--> statement-breakpoint
CREATE TABLE "search_semantic" (
	"project_id" uuid PRIMARY KEY NOT NULL,
	"provider_id" uuid NOT NULL,
	"model" text NOT NULL,
	"daily_cap" integer DEFAULT 10000 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "search_vectors" (
	"project_id" uuid NOT NULL,
	"node_id" uuid NOT NULL,
	"locale" text NOT NULL,
	"model" text NOT NULL,
	"dimensions" integer NOT NULL,
	"text_hash" text NOT NULL,
	"source_xmin" text NOT NULL,
	"embedding" "bytea" NOT NULL,
	"embedded_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "search_vectors_node_id_locale_model_pk" PRIMARY KEY("node_id","locale","model")
);
--> statement-breakpoint
ALTER TABLE "search_embed_calls" ADD CONSTRAINT "search_embed_calls_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "search_embed_leases" ADD CONSTRAINT "search_embed_leases_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "search_semantic" ADD CONSTRAINT "search_semantic_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "search_semantic" ADD CONSTRAINT "search_semantic_provider_id_ai_providers_id_fk" FOREIGN KEY ("provider_id") REFERENCES "public"."ai_providers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "search_vectors" ADD CONSTRAINT "search_vectors_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "search_vectors" ADD CONSTRAINT "search_vectors_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "search_embed_leases_project_idx" ON "search_embed_leases" USING btree ("project_id");--> statement-breakpoint
CREATE INDEX "search_vectors_project_idx" ON "search_vectors" USING btree ("project_id","locale","model");