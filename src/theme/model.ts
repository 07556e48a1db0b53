import { z } from "zod";

export const ThemeOut = z.object({
  logo_url: z.string().nullable(),
  favicon_url: z.string().nullable(),
  accent_color: z.string().nullable(),
  name_override: z.string().nullable(),
});
