export * from "./projects";
export * from "./content";
export * from "./ai";
export * from "./auth";
export * from "./oauth";
