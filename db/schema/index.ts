export * from "./ai";
export * from "./approvals";
export * from "./auth";
export * from "./content";
export * from "./history";
export * from "./model";
export * from "./oauth";
export * from "./projects";
