export const DEV_VARS_HEADER: string;
export function parseDevVars(text: string): Record<string, string>;
export function completeDevVars(text: string, generate?: (prefix: string) => string): { text: string; added: string[] };
