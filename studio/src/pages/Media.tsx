// The project's media screen (/studio/p/{slug}/media): the library grid, and an item's panel.
import { useParams } from "@tanstack/react-router";
import { useState } from "react";
import { useMe, useProject } from "../app/queries";
import { canWriteMedia, type MediaItem } from "../media/api";
import { MediaLibrary } from "../media/MediaLibrary";
import { MediaPanel } from "../media/MediaPanel";
import "../media/media.css";

export function MediaPage() {
  const { slug } = useParams({ from: "/p/$slug" });
  const project = useProject(slug);
  const me = useMe(slug);
  const [open, setOpen] = useState<MediaItem | null>(null);
  const canWrite = canWriteMedia(me.data);
  const defaultLocale = project.data?.default_locale ?? "en";
  return (
    <main className="editor-pane media-page" id="main">
      <h1>Media</h1>
      <p className="lede">Images and documents of this project. Open a file to edit its alt text and focal point, see where it is used, or delete it.</p>
      <MediaLibrary slug={slug} label="Media library" canUpload={canWrite} onAction={setOpen} defaultLocale={defaultLocale} />
      {open && project.data ? <MediaPanel slug={slug} item={open} locales={project.data.locales} defaultLocale={defaultLocale} canWrite={canWrite} onClose={() => setOpen(null)} /> : null}
    </main>
  );
}
