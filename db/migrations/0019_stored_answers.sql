CREATE TABLE "delivery_answers" (
	"project_id" uuid NOT NULL,
	"key" text NOT NULL,
	"epoch" bigint NOT NULL,
	"model_version" integer NOT NULL,
	"signature" text NOT NULL,
	"stale" boolean DEFAULT false NOT NULL,
	"deps" uuid[] NOT NULL,
	"watch" text[] NOT NULL,
	"body" text NOT NULL,
	"etag" text NOT NULL,
	"scope" text,
	"version" bigint NOT NULL,
	CONSTRAINT "delivery_answers_project_id_key_pk" PRIMARY KEY("project_id","key")
);
--> statement-breakpoint
ALTER TABLE "projects" ADD COLUMN "render_epoch" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "delivery_answers" ADD CONSTRAINT "delivery_answers_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "delivery_answers_deps" ON "delivery_answers" USING gin ("deps");--> statement-breakpoint
CREATE INDEX "delivery_answers_watch" ON "delivery_answers" USING gin ("watch");--> statement-breakpoint
-- Room on each page for HOT updates of `stale` (db/schema/delivery.ts).
ALTER TABLE "delivery_answers" SET (fillfactor = 70);
