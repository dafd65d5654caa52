export interface DevSecret {
  name: string;
  prefix: string;
}
export const DEV_SECRETS: readonly DevSecret[];
export const DEV_VARS_HEADER: string;
export function parseDevVars(text: string): Record<string, string>;
export function generateSecret(prefix: string): string;
export function completeDevVars(text: string, generate?: (prefix: string) => string): { text: string; added: string[] };
