// The media delivery route: public, anonymous, GET and HEAD.
import { Elysia } from "elysia";
import type { MediaDelivery } from "./delivery";

export function mediaRoutes(delivery: MediaDelivery) {
  const detail = {
    tags: ["delivery"],
    summary: "A media file: the original, or an image variant (?w=&h=&fit=&fm=&q=)",
    description:
      "Widths and heights from MEDIA_WIDTHS only; fit cover (crops around the focal point), contain or inside; fm webp, avif, jpeg, png or auto (from Accept, with Vary: Accept); " +
      "q one of 40, 50, 60, 70, 75, 80, 90, 100. With the current ?v= (as the API's URLs carry) the answer is immutable for a year. SVG is served with Content-Security-Policy: sandbox.",
  };
  return new Elysia()
    .get("/api/p/:ref/media/:id/:filename", ({ request, params }) => delivery.answer(request, params.ref, params.id), { detail })
    .head("/api/p/:ref/media/:id/:filename", ({ request, params }) => delivery.answer(request, params.ref, params.id), { detail: { hide: true } });
}
