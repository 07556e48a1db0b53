// The media delivery route: public, anonymous, GET and HEAD.
import { Elysia } from "elysia";
import type { AppDeps } from "../core/deps";
import { clientAddress } from "../lib/rate-limit";
import { peerAddress } from "../platform/peer";
import type { MediaDelivery } from "./delivery";

export function mediaRoutes(deps: AppDeps, delivery: MediaDelivery) {
  const detail = {
    tags: ["delivery"],
    summary: "A media file: the original, or an image variant (?w=&h=&fit=&fm=&q=)",
    description:
      "Widths and heights from MEDIA_WIDTHS only; fit cover (crops around the focal point; the default with both sizes), contain or inside; fm webp, avif, jpeg, png or auto (from Accept, with Vary: Accept); " +
      "q 50, 75 (default) or 90 (40 … 100 are read as the nearest; PNG ignores it). Never enlarged past the original: queries that render the same image share one stored variant and ETag. " +
      "Range requests answer 206. A variant not stored yet is rendered under limits: 429 past MEDIA_RENDER_RATE per client, 503 when the render queue is full (both with Retry-After), 413 quota_exceeded past the project's quota; " +
      "with MEDIA_VARIANTS=strict any variant outside MEDIA_VARIANT_SET is 400. With the current ?v= (as the API's URLs carry) the answer is immutable for a year. SVG and PDF are served with Content-Security-Policy: sandbox.",
  };
  const answer = ({ request, params, server }: { request: Request; params: { ref: string; id: string }; server: unknown }) =>
    delivery.answer(request, params.ref, params.id, clientAddress(request, peerAddress(request, server), deps.config.trustProxy));
  return new Elysia().get("/api/p/:ref/media/:id/:filename", answer, { detail }).head("/api/p/:ref/media/:id/:filename", answer, { detail: { hide: true } });
}
