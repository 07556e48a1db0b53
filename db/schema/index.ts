export * from "./ai";
export * from "./auth";
export * from "./content";
export * from "./history";
export * from "./media";
export * from "./model";
export * from "./oauth";
export * from "./projects";
