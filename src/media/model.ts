// Wire shapes of the media library, declared once as the operations' schemas.
import { z } from "zod";
import { Id, Locale, Page, PerPage, Timestamp } from "../lib/schemas";

export const MediaId = z.uuid().describe("media id (UUID)");

const Focal = z.number().min(0).max(1);
const FocalPoint = z.object({ x: Focal.describe("0 = left edge, 1 = right edge"), y: Focal.describe("0 = top edge, 1 = bottom edge") }).describe("the point crops keep in view");

export const MediaOut = z.object({
  id: Id,
  url: z.string().describe("the original's delivery URL (carries the content hash: cached immutably)"),
  filename: z.string(),
  type: z.string().describe("media type sniffed from the bytes: image/jpeg, image/png, image/webp, image/avif, image/gif, image/svg+xml, application/pdf"),
  size: z.number().int().describe("bytes stored"),
  width: z.number().int().nullable(),
  height: z.number().int().nullable(),
  title: z.string().nullable(),
  alt: z.record(z.string(), z.string()).describe("alt text by locale"),
  alt_draft: z.record(z.string(), z.string()).describe("machine-written alt text by locale, awaiting review (describe_media); accept it by writing it to alt"),
  focal_point: FocalPoint.nullable(),
  placeholder: z.string().nullable().describe("ThumbHash (base64) of the image, for a blurred placeholder"),
  dominant_color: z.string().nullable().describe("#rrggbb"),
  hash: z.string().describe("SHA-256 of the stored bytes"),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type MediaWire = z.output<typeof MediaOut>;

const Title = z.string().max(500);
const AltText = z.string().max(2000);

export const UploadIn = z.object({
  file: z.instanceof(Blob).describe("the file (multipart/form-data); its type is read from its bytes"),
  alt: AltText.optional().describe("alt text in the project's default locale (or `locale`)"),
  locale: Locale.optional(),
  title: Title.optional(),
  focal_x: z.coerce.number().min(0).max(1).optional().describe("focal point, 0..1 from the left"),
  focal_y: z.coerce.number().min(0).max(1).optional().describe("focal point, 0..1 from the top"),
});

export const FromUrlIn = z.object({
  url: z.string().max(2048).describe("an https URL of the file; fetched once through the outbound guard, redirects refused"),
  filename: z.string().min(1).max(200).optional().describe("name to keep; by default the URL's last path segment"),
  alt: AltText.optional(),
  locale: Locale.optional(),
  title: Title.optional(),
  focal_point: FocalPoint.optional(),
});

export const ListIn = z.object({
  q: z.string().max(200).optional().describe("search in file name, title and alt text"),
  type: z.string().max(100).optional().describe("a media type (image/png) or its family (image, application)"),
  page: Page,
  per_page: PerPage(20),
});

export const UpdateIn = z.object({
  media_id: MediaId,
  filename: z.string().min(1).max(200).optional(),
  title: Title.nullable().optional(),
  alt: z.record(z.string(), AltText.nullable()).optional().describe("alt text by locale; null removes a locale's"),
  focal_point: FocalPoint.nullable().optional(),
});

export const DeleteIn = z.object({
  media_id: MediaId,
  force: z.boolean().optional().describe("delete even though content references it (the references are left dangling)"),
});

export const DescribeIn = z.object({
  media_id: MediaId,
  locales: z.array(Locale).max(100).optional().describe("also translate the alt text into these locales (the default locale is always written)"),
  provider_id: z.uuid().optional().describe("the AI provider to use; default: the project's default provider"),
});
