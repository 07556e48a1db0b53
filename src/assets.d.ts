// Files imported with `with { type: "file" }` resolve to a path (inside $bunfs when compiled).
declare module "*.wasm" {
  const path: string;
  export default path;
}
declare module "*.data" {
  const path: string;
  export default path;
}
declare module "*.tar.gz" {
  const path: string;
  export default path;
}
declare module "*/dist/browser/standalone.js" {
  const path: string;
  export default path;
}
declare module "*/lib/libvips-cpp.so.8.18.7" {
  const path: string;
  export default path;
}
