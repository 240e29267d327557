import { randomUUID } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { somethingListens } from '../../src/private-redis.js';
import { freeLoopbackPort } from '../../src/free-port.js';
import { ROOT, spawnApp, waitForHealth, type RunningApp } from './spawn-app.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(ROOT, 'test', 'artifacts');
const PREFIX = `pgbrowser-${randomUUID().slice(0, 8)}`;

async function deleteKeys(prefix: string): Promise<void> {
  const redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 2 });
  try {
    for await (const keys of redis.scanStream({ match: `*${prefix}*`, count: 1000 })) {
      if ((keys as string[]).length) await redis.del(...(keys as string[]));
    }
  } finally {
    await redis.quit();
  }
}

/** Everything a user could see or read out of the page, inputs' current values included. */
async function everythingOnPage(page: Page): Promise<string> {
  return page.evaluate(() => {
    const values = Array.from(document.querySelectorAll('input, textarea, select')).map(
      (e) => (e as HTMLInputElement).value,
    );
    return [document.documentElement.outerHTML, document.body.innerText, ...values].join('\n');
  });
}

describe('the playground in a browser, started as `npm start` with no configuration', () => {
  let app: RunningApp;
  /** The app's private redis-server (nothing answers at the moved default address). */
  let privateRedis: { port: number; dataDir: string };
  let restartedRedis: ChildProcess | undefined;
  let browser: Browser;
  let page: Page;
  let baseUrl: string;

  /** The delivery note ("sent to the agent", "not addressed", …) of the user's line that shows `shown`. */
  const noteOf = (shown: string): Locator => page.locator('li.msg-user', { hasText: shown }).locator('.msg-result');

  /** Waits until exactly one ephemeral line (a command's answer) shows `hasText`; returns it. */
  async function oneEphemeral(hasText: string): Promise<Locator> {
    const line = page.locator('li.msg-ephemeral', { hasText });
    await expect.poll(() => line.count(), { timeout: 10_000 }).toBe(1);
    return line;
  }

  /** Types `text` into the composer `box` and presses Enter. */
  async function submit(box: Locator, text: string): Promise<void> {
    await box.fill(text);
    await box.press('Enter');
  }

  /** Sends `text` from the composer `box`; returns the delivery note of the line that shows it as `shown`. */
  async function send(box: Locator, text: string, shown = text): Promise<Locator> {
    await submit(box, text);
    return noteOf(shown);
  }

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install it with \`apt-get install -y chromium\` (.ci/run does when needed)`);
    const port = await freeLoopbackPort();
    baseUrl = `http://127.0.0.1:${port}`;
    // Its own Redis, so the Redis-loss test can stop it without touching the shared one.
    app = spawnApp({ HTTP_PORT: String(port), QUEUE_PREFIX: PREFIX, AGENT_BRIDGE_DEFAULT_REDIS_URL: `redis://127.0.0.1:${await freeLoopbackPort()}` });
    await waitForHealth(app, baseUrl);
    // Healthy before the banner is out: wait for it, so a signal finds the shutdown handlers.
    for (let i = 0; i < 200 && !app.output().includes(baseUrl); i++) await new Promise((r) => setTimeout(r, 100));
    const started = app.output().split('\n').find((l) => l.includes('started a private redis-server'));
    if (!started) throw new Error(`no private redis-server was started:\n${app.output()}`);
    const { redis, dataDir } = JSON.parse(started) as { redis: string; dataDir: string };
    privateRedis = { port: Number(new URL(redis).port), dataDir };
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    const code = await app?.stop();
    restartedRedis?.kill('SIGTERM');
    await deleteKeys(PREFIX);
    expect(code, app?.output()).toBe(0);
  }, 60_000);

  it('prints the demo banner', () => {
    expect(app.output()).toContain('DEMO');
    expect(app.output()).toContain(baseUrl);
  });

  it('binds a channel, chats with the demo agent, adds a credential, and shows the queue', async () => {
    const pageErrors: string[] = [];
    page.on('pageerror', (err) => pageErrors.push(err.message));
    await page.goto(`${baseUrl}/`);
    await expect.poll(() => page.title()).toContain('#general');
    await page.getByLabel('Your name').fill('Robin');
    await page.getByLabel('Your name').dispatchEvent('change');

    // Bind #general to the demo helper, answering when mentioned.
    const instance = page.locator('#bind-instance');
    await expect.poll(() => instance.locator('option').count(), { timeout: 10_000 }).toBeGreaterThan(0);
    await instance.selectOption('demo-helper');
    await page.getByRole('radio', { name: 'when mentioned' }).check();
    await page.getByRole('button', { name: 'Bind', exact: true }).click();
    await expect.poll(() => page.locator('#binding-summary').innerText(), { timeout: 10_000 }).toContain('Bound to Demo Helper');
    await expect.poll(() => page.locator('#bindings').innerText()).toContain('demo-helper');

    // A message that does not address the agent is not sent, and the page says why.
    const box = page.getByLabel('Message #general');
    const unaddressed = await send(box, 'nobody asked the agent');
    await expect.poll(() => unaddressed.innerText(), { timeout: 10_000 }).toContain('not addressed');

    // `@agent` addresses it: the reply arrives over SSE without a reload.
    const mine = await send(box, '@agent hello from the browser', 'hello from the browser');
    await expect.poll(() => mine.innerText(), { timeout: 10_000 }).toBe('sent to the agent');
    const reply = page.locator('li.msg-agent', { hasText: 'You said' });
    await expect.poll(() => reply.count(), { timeout: 20_000 }).toBeGreaterThan(0);
    const replyText = await reply.first().innerText();
    expect(replyText).toContain('[Demo Helper] You said:');
    expect(replyText).toContain('hello from the browser');
    // Markdown rendered as elements: a quote and bold text.
    expect(await reply.first().locator('blockquote').count()).toBeGreaterThan(0);
    expect(await reply.first().locator('strong').count()).toBeGreaterThan(0);
    // 👍/👎 under the reply's last message: a click is recorded and thanked in place.
    await reply.first().locator('button.feedback-button[data-rating="positive"]').click();
    await expect.poll(() => reply.first().locator('.msg-feedback').innerText(), { timeout: 10_000 }).toMatch(/thank/i);
    await expect.poll(() => page.locator('#working').innerText(), { timeout: 10_000 }).toBe('');

    // Untrusted text is shown as text, never parsed as HTML.
    await submit(box, '@agent <img src=x onerror="window.__pwned=1"> <b>bold?</b>');
    const echoed = page.locator('li.msg-agent', { hasText: '<img src=x' });
    await expect.poll(() => echoed.count(), { timeout: 20_000 }).toBeGreaterThan(0);
    expect(await page.locator('#messages img').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();

    // `/agent why` in the message box runs the command, visible only to this user.
    await submit(box, '/agent why');
    await expect.poll(() => page.locator('li.msg-ephemeral').count(), { timeout: 10_000 }).toBe(1);

    // A credential: the confirmation names the key, and the value is nowhere on the page.
    const secret = `pw-${randomUUID()}`;
    await page.locator('#cred-instance').selectOption('demo-helper');
    await page.getByLabel('Key').fill('DEMO_SERVICE_TOKEN');
    await page.getByLabel('Value', { exact: true }).fill(secret);
    expect(await page.getByLabel('Value', { exact: true }).getAttribute('type')).toBe('password');
    await page.getByRole('button', { name: 'Add credential' }).click();
    await expect.poll(() => page.locator('#cred-result').innerText(), { timeout: 10_000 }).toContain('DEMO_SERVICE_TOKEN');
    expect(await page.locator('#cred-result .command-reply.ok').count()).toBe(1);
    expect(await page.getByLabel('Value', { exact: true }).inputValue()).toBe('');
    expect(await everythingOnPage(page)).not.toContain(secret);
    expect(app.output()).not.toContain(secret);

    // Admin figures: the answered message shows up as completed.
    await expect.poll(() => page.locator('dd[data-count="completed"]').innerText(), { timeout: 10_000 }).not.toBe('0');
    expect(await page.locator('#instances').innerText()).toContain('Demo Poet');
    await page.getByRole('button', { name: 'Why no answer?' }).click();
    await expect.poll(() => page.locator('#command-output').innerText(), { timeout: 10_000 }).not.toBe('');

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.evaluate(() => document.getElementById('credential-title')?.scrollIntoView({ block: 'start' }));
    await page.screenshot({ path: join(ARTIFACTS, 'playground.png') });
    // The README's "first five minutes" shows the chat as a newcomer sees it.
    await page.evaluate(() => document.getElementById('messages')?.scrollTo(0, 0));
    await page.screenshot({ path: join(ROOT, 'docs', 'playground.png') });
    expect(pageErrors).toEqual([]);
  }, 90_000);

  it('shows the channel history again after a reload', async () => {
    await page.reload();
    const reply = page.locator('li.msg-agent', { hasText: 'hello from the browser' });
    await expect.poll(() => reply.count(), { timeout: 10_000 }).toBeGreaterThan(0);
    await expect.poll(() => page.locator('#messages').getAttribute('aria-busy')).toBe('false');
    // The delivery notes come back too.
    const unaddressed = noteOf('nobody asked the agent');
    await expect.poll(() => unaddressed.innerText(), { timeout: 10_000 }).toContain('not addressed');
    await page.getByRole('button', { name: /support/ }).click();
    await page.getByRole('button', { name: /general/ }).click();
    await expect.poll(() => unaddressed.innerText(), { timeout: 10_000 }).toContain('not addressed');
    expect(await noteOf('hello from the browser').innerText()).toBe('sent to the agent');
  }, 30_000);

  it('keeps a "not sent: over the quota" note through a reload and a channel switch', async () => {
    await page.getByRole('button', { name: /general/ }).click();
    const box = page.locator('#composer-text');
    // A day's quota of 1 (quotas count from when one applies): the first message goes, the second not.
    await submit(box, '/agent set quota user-per-day 1');
    await expect.poll(() => page.locator('li.msg-ephemeral', { hasText: 'user-per-day' }).count(), { timeout: 10_000 }).toBeGreaterThan(0);
    const within = await send(box, '@agent within the quota', 'within the quota');
    await expect.poll(() => within.innerText(), { timeout: 10_000 }).toBe('sent to the agent');
    const refused = await send(box, '@agent one message too many', 'one message too many');
    const note = () => refused.innerText();
    await expect.poll(note, { timeout: 10_000 }).toBe('not sent: over the quota');

    await page.reload();
    await expect.poll(() => page.locator('#messages').getAttribute('aria-busy'), { timeout: 10_000 }).toBe('false');
    await expect.poll(note, { timeout: 10_000 }).toBe('not sent: over the quota');
    await page.getByRole('button', { name: /support/ }).click();
    await page.getByRole('button', { name: /general/ }).click();
    await expect.poll(note, { timeout: 10_000 }).toBe('not sent: over the quota');

    // Back to the default quota for the tests below.
    await submit(box, '/agent set quota user-per-day default');
    await expect.poll(() => page.locator('li.msg-ephemeral', { hasText: 'user-per-day' }).count(), { timeout: 10_000 }).toBeGreaterThan(0);
  }, 60_000);

  it('is usable from the keyboard: channels are buttons and the current one is marked', async () => {
    const support = page.getByRole('button', { name: /support/ });
    await support.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => support.getAttribute('aria-current')).toBe('true');
    expect(await page.locator('#messages').getAttribute('aria-label')).toBe('Messages in #support');
    expect(await page.locator('#binding-summary').innerText()).toContain('Not bound');
  }, 30_000);

  it("settings dropdowns show the channel's stored values after a change, a switch and a reload", async () => {
    const general = page.getByRole('button', { name: /general/ });
    await general.click();
    const errors = page.locator('#set-errors-value');
    const context = page.locator('#set-context-value');
    await errors.selectOption('silent');
    await page.locator('#set-errors button[type="submit"]').click();
    await context.selectOption('thread');
    await page.locator('#set-context button[type="submit"]').click();
    await expect.poll(() => page.locator('#binding-summary').innerText(), { timeout: 10_000 }).toContain('errors: silent · context: thread');
    expect(await errors.inputValue()).toBe('silent');

    // #support is unbound: the defaults, not #general's values.
    await page.getByRole('button', { name: /support/ }).click();
    await expect.poll(() => errors.inputValue()).toBe('reply');
    expect(await context.inputValue()).toBe('off');

    await general.click();
    await expect.poll(() => errors.inputValue()).toBe('silent');
    expect(await context.inputValue()).toBe('thread');

    await page.reload();
    await expect.poll(() => page.locator('#binding-summary').innerText(), { timeout: 10_000 }).toContain('errors: silent');
    await expect.poll(() => errors.inputValue()).toBe('silent');
    await expect.poll(() => context.inputValue()).toBe('thread');

    // Back to the defaults for the tests below.
    await errors.selectOption('reply');
    await page.locator('#set-errors button[type="submit"]').click();
    await expect.poll(() => page.locator('#binding-summary').innerText(), { timeout: 10_000 }).toContain('errors: reply');
  }, 60_000);

  it("says what to do in an empty channel, renders the topic's markdown, and the skip link keeps the URL", async () => {
    await page.getByRole('button', { name: /random/ }).click();
    await expect.poll(() => page.locator('#messages .empty-hint').innerText(), { timeout: 10_000 }).toMatch(/bind this channel.*@agent/i);
    expect(await page.locator('#channel-topic code').innerText()).toBe('why');
    const url = page.url();
    await page.keyboard.press('Tab');
    await page.evaluate(() => (document.querySelector('.skip-link') as HTMLElement).focus());
    await page.keyboard.press('Enter');
    expect(page.url()).toBe(url);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('composer-text');
  }, 30_000);

  it('`/agent credential <id>` opens the form with focus on the key; an unknown ID is refused with the known ones', async () => {
    const box = page.locator('#composer-text');
    await submit(box, '/agent credential nope-not-here');
    const refusal = await oneEphemeral('nope-not-here');
    expect(await refusal.innerText()).toMatch(/Known instances:.*demo-helper/s);

    await submit(box, '/agent credential demo-poet');
    await expect.poll(() => page.evaluate(() => document.activeElement?.id), { timeout: 10_000 }).toBe('cred-key');
    expect(await page.locator('#cred-instance').inputValue()).toBe('demo-poet');
  }, 30_000);

  it('`set errors loud` is not a valid value (not "not a command")', async () => {
    const box = page.locator('#composer-text');
    await submit(box, '/agent set errors loud');
    const reply = await oneEphemeral('Error policy must be');
    expect(await reply.innerText()).toContain('Not a valid value');
    expect(await reply.innerText()).not.toContain('Not a command');
  }, 30_000);

  it('fits a phone (390×844): no sideways scrolling, header and audit table inside the width', async () => {
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 } });
    try {
      await phone.goto(`${baseUrl}/#general`);
      await expect.poll(() => phone.locator('#binding-summary').innerText(), { timeout: 10_000 }).toContain('Bound to');
      await phone.getByRole('button', { name: 'Audit log' }).click();
      await expect.poll(() => phone.locator('#command-output table').count(), { timeout: 10_000 }).toBe(1);
      const widths = await phone.evaluate(() => ({
        page: document.documentElement.scrollWidth,
        body: document.body.scrollWidth,
        badge: document.getElementById('mode-badge')!.getBoundingClientRect().right,
        name: document.getElementById('user-name')!.getBoundingClientRect().right,
        // The audit table scrolls inside its box; the box stays inside the width.
        audit: document.querySelector('#command-output table')!.closest('.table-wrap')!.getBoundingClientRect().right,
      }));
      for (const [what, right] of Object.entries(widths)) expect(right, what).toBeLessThanOrEqual(390);
      // Readable: every column header on one line (no "Whe/n"), each time on at most two.
      const lines = await phone.evaluate(() => {
        const t = document.querySelector('#command-output table')!;
        const lineHeight = (e: Element) => parseFloat(getComputedStyle(e).lineHeight) || 16;
        const ths = [...t.querySelectorAll('th')];
        const firstCells = [...t.querySelectorAll('tbody tr')].map((r) => r.querySelector('td')!);
        return {
          headers: ths.map((th) => Math.round((th.clientHeight - parseFloat(getComputedStyle(th).paddingTop) * 2) / lineHeight(th))),
          times: firstCells.map((td) => Math.round((td.clientHeight - parseFloat(getComputedStyle(td).paddingTop) * 2) / lineHeight(td))),
        };
      });
      expect(lines.headers.every((n) => n <= 1), `header lines ${lines.headers.join(',')}`).toBe(true);
      expect(lines.times.every((n) => n <= 2), `time lines ${lines.times.join(',')}`).toBe(true);
      await phone.screenshot({ path: join(ARTIFACTS, 'playground-phone.png'), fullPage: true });
    } finally {
      await phone.close();
    }
  }, 60_000);

  it('says "the queue is unavailable, retrying" within 2 s of losing Redis, logs it once, and recovers', async () => {
    await page.getByRole('button', { name: /general/ }).click();
    await expect.poll(() => page.locator('#messages').getAttribute('aria-busy')).toBe('false');
    const linesBefore = app.output().split('\n').length;
    const redis = new Redis(`redis://127.0.0.1:${privateRedis.port}`, { maxRetriesPerRequest: 0, retryStrategy: () => null });
    await redis.call('SHUTDOWN', 'NOSAVE').catch(() => {});
    redis.disconnect();
    await expect.poll(() => page.locator('#send-status').innerText(), { timeout: 2_000, interval: 100 }).toMatch(/the queue is unavailable, retrying/i);

    // Sending meanwhile answers at once with the same words, not an error after seconds.
    const box = page.locator('#composer-text');
    await submit(box, '@agent while Redis is away');
    await expect.poll(() => page.locator('#send-button').isDisabled(), { timeout: 2_000, interval: 100 }).toBe(false);
    expect(await page.locator('#send-status').innerText()).toMatch(/the queue is unavailable, retrying/i);
    expect(await page.locator('#send-status').innerText()).not.toMatch(/Something went wrong/);

    // Redis back on the same port and data: one line for the loss, one for the return.
    restartedRedis = spawn('redis-server', ['--bind', '127.0.0.1', '--port', String(privateRedis.port), '--dir', privateRedis.dataDir, '--appendonly', 'yes', '--save', ''], { stdio: 'ignore' });
    await expect.poll(() => somethingListens(`redis://127.0.0.1:${privateRedis.port}`), { timeout: 10_000 }).toBe(true);
    await expect.poll(() => app.output(), { timeout: 15_000 }).toContain('Redis connection is back');
    await expect.poll(() => page.locator('#send-status').innerText(), { timeout: 5_000 }).toBe('');
    const during = app.output().split('\n').slice(linesBefore - 1);
    expect(during.filter((l) => l.includes('Redis connection lost'))).toHaveLength(1);
    expect(during.filter((l) => l.includes('Redis connection is back'))).toHaveLength(1);
    expect(during.filter((l) => /"level":(40|50)/.test(l)), during.join('\n')).toHaveLength(1);
  }, 60_000);
});
