// Driving Knock's own sign-in and consent pages, as a person would.

import type { Page } from 'playwright-core';

export interface Person {
  username: string;
  password: string;
}

/** On the sign-in page: fill it in and submit; then on the consent page: Authorize. */
export async function signInAndAuthorize(page: Page, person: Person): Promise<void> {
  await page.getByLabel('Username').fill(person.username);
  await page.getByLabel('Password').fill(person.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Authorize' }).click();
}
