export async function scaleChecks(_url: string): Promise<void> {}
