// What the cross-runtime checks create, through the admin API only (the database is the service's).
import type { Service } from "./service";

let counter = 0;

export async function seedProject(svc: Service): Promise<{ id: string; slug: string }> {
  counter += 1;
  const slug = `xrt-${Date.now().toString(36)}-${counter}`;
  const res = await svc.admin("POST", "/admin/projects", { slug, name: slug, default_locale: "en", locales: ["en", "fr"] });
  if (res.status !== 201) throw new Error(`project creation failed: ${res.status} ${res.text}`);
  return { id: res.json.data.id, slug };
}

export async function seedNode(svc: Service, ref: string, input: { slug: string; title: string }, publish = false): Promise<{ id: string }> {
  const res = await svc.admin("POST", `/admin/p/${ref}/nodes`, input);
  if (res.status !== 201) throw new Error(`node creation failed: ${res.status} ${res.text}`);
  if (publish) {
    const p = await svc.admin("POST", `/admin/p/${ref}/nodes/${res.json.data.id}/publish`);
    if (p.status !== 200) throw new Error(`publish failed: ${p.status} ${p.text}`);
  }
  return res.json.data;
}
