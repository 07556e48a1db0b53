// Uploads in flight: each file its own progress and its own error; one refused file stops nothing
// else. At most two go at once (the service takes at most half of MEDIA_UPLOADS_IN_FLIGHT, 4 by
// default, from one project, and answers 429 with Retry-After past it: those wait and go again).
import { useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useRef, useState } from "react";
import { Button, Label, ProgressBar } from "react-aria-components";
import { ApiError } from "../app/api";
import { type MediaItem, mediaKeys, uploadErrorText, uploadFile } from "./api";

const AT_ONCE = 2;
const MAX_RETRIES = 10;

export interface Upload {
  key: number;
  name: string;
  loaded: number;
  total: number;
  status: "waiting" | "uploading" | "done" | "failed";
  error: string | null;
  item: MediaItem | null;
}

interface Job {
  key: number;
  file: File;
  tries: number;
}

export function useUploads(ref: string, onUploaded?: (item: MediaItem) => void) {
  const qc = useQueryClient();
  const [uploads, setUploads] = useState<Upload[]>([]);
  const queue = useRef<Job[]>([]);
  const running = useRef(0);
  const nextKey = useRef(1);
  const aborts = useRef(new Map<number, () => void>());
  const uploaded = useRef(onUploaded);
  uploaded.current = onUploaded;

  const patch = useCallback((key: number, change: Partial<Upload>) => setUploads((list) => list.map((u) => (u.key === key ? { ...u, ...change } : u))), []);

  const pump = useCallback((): void => {
    while (running.current < AT_ONCE && queue.current.length > 0) {
      const job = queue.current.shift() as Job;
      running.current += 1;
      patch(job.key, { status: "uploading", error: null });
      const { done, abort } = uploadFile(ref, job.file, (loaded, total) => patch(job.key, { loaded, total }));
      aborts.current.set(job.key, abort);
      done
        .then(
          (item) => {
            patch(job.key, { status: "done", loaded: job.file.size, total: job.file.size, item });
            void qc.invalidateQueries({ queryKey: mediaKeys.all(ref) });
            uploaded.current?.(item);
          },
          (err) => {
            if (err instanceof ApiError && err.status === 429 && job.tries < MAX_RETRIES) {
              // The service is busy with other uploads: this one waits as long as it asks, then goes again.
              patch(job.key, { status: "waiting", loaded: 0 });
              setTimeout(
                () => {
                  queue.current.push({ ...job, tries: job.tries + 1 });
                  pump();
                },
                (err.retryAfter ?? 1) * 1000,
              );
              return;
            }
            patch(job.key, { status: "failed", error: uploadErrorText(err) });
          },
        )
        .finally(() => {
          aborts.current.delete(job.key);
          running.current -= 1;
          pump();
        });
    }
  }, [ref, qc, patch]);

  const add = useCallback(
    (files: File[]) => {
      const fresh = files.map((file) => ({ key: nextKey.current++, file, tries: 0 }));
      setUploads((list) => [...list, ...fresh.map((j) => ({ key: j.key, name: j.file.name, loaded: 0, total: j.file.size, status: "waiting" as const, error: null, item: null }))]);
      queue.current.push(...fresh);
      pump();
    },
    [pump],
  );

  const clearFinished = useCallback(() => setUploads((list) => list.filter((u) => u.status === "waiting" || u.status === "uploading")), []);

  // Leaving the screen cancels what is still going.
  useEffect(() => {
    const pending = aborts.current;
    return () => {
      queue.current = [];
      for (const abort of pending.values()) abort();
    };
  }, []);

  return { uploads, add, clearFinished };
}

const STATUS_TEXT: Record<Upload["status"], string> = { waiting: "Waiting", uploading: "Uploading", done: "Uploaded", failed: "Failed" };

export function UploadList({ uploads, onClear }: { uploads: Upload[]; onClear: () => void }) {
  if (uploads.length === 0) return null;
  const finished = uploads.some((u) => u.status === "done" || u.status === "failed");
  return (
    <section className="media-uploads" aria-label="Uploads">
      <ul className="media-upload-list">
        {uploads.map((u) => {
          // A refused file reads "Failed" (however many of its bytes went before the refusal).
          const percent = u.status === "done" ? 100 : u.status === "failed" ? 0 : u.total > 0 ? Math.round((u.loaded / u.total) * 100) : 0;
          return (
            <li key={u.key} className={`media-upload media-upload-${u.status}`} aria-label={u.name}>
              <ProgressBar className="media-progress" value={percent} valueLabel={u.status === "failed" ? STATUS_TEXT.failed : `${STATUS_TEXT[u.status]} ${percent}%`}>
                {({ percentage, valueText }) => (
                  <>
                    <div className="media-progress-head">
                      <Label className="media-upload-name">{u.name}</Label>
                      <span className="media-upload-status">{valueText}</span>
                    </div>
                    <div className="media-progress-track" aria-hidden="true">
                      <div className="media-progress-fill" style={{ width: `${percentage ?? 0}%` }} />
                    </div>
                  </>
                )}
              </ProgressBar>
              {u.error ? (
                <p className="media-upload-error" role="alert">
                  Error: {u.error}
                </p>
              ) : null}
            </li>
          );
        })}
      </ul>
      {finished ? (
        <Button className="st-button small quiet" onPress={onClear}>
          Clear finished uploads
        </Button>
      ) : null}
    </section>
  );
}
