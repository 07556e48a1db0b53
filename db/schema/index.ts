export * from "./ai";
export * from "./auth";
export * from "./content";
export * from "./editorial";
export * from "./history";
export * from "./model";
export * from "./oauth";
export * from "./projects";
