// The web console's journeys in Chromium: the system run's shared Knock with the journey's own
// people (and, for one journey, `npm start`'s demo data), signing in as someone, and axe's check
// of each page on the way (axe.ts: no serious or critical violation), remembering which pages it checked.

import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { expectNoSeriousViolations } from './axe';
import { launchPlain } from './chromium';
import { seedDemo, type DemoUser } from './demo';
import { createUser, sharedKnock, type KnockAddress, type Person } from './knock-server';

export class ConsoleVisits {
  /** Every page axe checked, by its path. */
  readonly checked: string[] = [];

  constructor(
    private readonly browser: Browser,
    private readonly url: string,
  ) {}

  /**
   * No serious or critical accessibility violation on the page as it is now, on a wide screen
   * and on a phone's (390 px), where nothing may be wider than the screen either.
   */
  async expectAccessible(page: Page): Promise<void> {
    const size = page.viewportSize();
    try {
      await expectNoSeriousViolations({
        evaluate: (expression) => page.evaluate(expression),
        setWidth: (width) => page.setViewportSize({ width, height: 900 }),
        url: () => page.url(),
      });
    } finally {
      if (size) await page.setViewportSize(size);
    }
    this.checked.push(new URL(page.url()).pathname);
  }

  /** A new browser window signed in as `who`, from the server's front page (the sign-in page, checked once). */
  async signIn(who: { username: string; password: string }): Promise<Page> {
    const context = await this.browser.newContext({ viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    await page.goto(this.url);
    await page.waitForURL(/\/users\/sign_in/);
    if (this.checked.length === 0) await this.expectAccessible(page);
    await page.getByLabel('Username').fill(who.username);
    await page.getByLabel('Password').fill(who.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${this.url}/`);
    return page;
  }

  /** Each person's browser signed in once (`signIn`), by username. */
  private readonly sessions = new Map<string, Promise<Page>>();

  /**
   * A new tab on the dashboard of `who`'s browser: signed in the first time, and the same session
   * (its cookies) after that, as one person's browser keeps it. Close the tab, not its context.
   */
  async open(who: { username: string; password: string }): Promise<Page> {
    const first = this.sessions.get(who.username);
    if (!first) {
      const signedIn = this.signIn(who);
      this.sessions.set(who.username, signedIn);
      return signedIn;
    }
    const page = await (await first).context().newPage();
    await page.goto(this.url);
    await page.waitForURL(`${this.url}/`);
    return page;
  }

  report(): string {
    return `axe checked ${this.checked.length} pages: ${this.checked.join(', ')}`;
  }
}

/** What a console journey runs against. */
export interface ConsoleWorld {
  server: KnockAddress;
  /** `npm start`'s demo people (alice, bob, carol), when the journey asked for them. */
  demo: Record<'alice' | 'bob' | 'carol', DemoUser>;
  /** An impersonation token of each of the journey's own people, by username. */
  tokens: Map<string, string>;
  visits: ConsoleVisits;
}

/**
 * Before the file's tests: the shared Knock with the administrator `admin` and `people` created
 * (and the demo data seeded, when `demo`), and Chromium; after them, Chromium closed and the pages
 * axe checked printed. Its parts are read through the answer (`world.server`, `world.visits`…)
 * once the tests run.
 */
export function useConsoleWorld(admin: Person, { people = [], demo = false }: { people?: Person[]; demo?: boolean } = {}): ConsoleWorld {
  const server = sharedKnock();
  let opened: Omit<ConsoleWorld, 'server'> | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    const seeded = demo ? await seedDemo(server) : undefined;
    const tokens = new Map<string, string>();
    await createUser(server, admin, { admin: true });
    for (const person of people) tokens.set(person.username, (await createUser(server, person)).token);
    browser = await launchPlain();
    opened = {
      get demo() {
        if (!seeded) throw new Error('this journey did not ask for the demo data');
        return seeded;
      },
      tokens,
      visits: new ConsoleVisits(browser, server.url),
    };
  });
  afterAll(async () => {
    if (opened) console.log(opened.visits.report());
    await browser?.close();
  });
  const get = () => {
    if (!opened) throw new Error('the console world opens in beforeAll');
    return opened;
  };
  return {
    server,
    get demo() {
      return get().demo;
    },
    get tokens() {
      return get().tokens;
    },
    get visits() {
      return get().visits;
    },
  };
}
