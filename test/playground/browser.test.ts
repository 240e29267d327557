import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, ROOT, spawnApp, waitForHealth, type RunningApp } from './spawn-app.js';

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
  let browser: Browser;
  let page: Page;
  let baseUrl: string;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install it with \`apt-get install -y chromium\` (.ci/run does when needed)`);
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    app = spawnApp({ HTTP_PORT: String(port), QUEUE_PREFIX: PREFIX });
    await waitForHealth(app, baseUrl);
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
    await box.fill('nobody asked the agent');
    await box.press('Enter');
    const unaddressed = page.locator('li.msg-user', { hasText: 'nobody asked the agent' });
    await expect.poll(() => unaddressed.locator('.msg-result').innerText(), { timeout: 10_000 }).toContain('not addressed');

    // `@agent` addresses it: the reply arrives over SSE without a reload.
    await box.fill('@agent hello from the browser');
    await box.press('Enter');
    const mine = page.locator('li.msg-user', { hasText: 'hello from the browser' });
    await expect.poll(() => mine.locator('.msg-result').innerText(), { timeout: 10_000 }).toBe('sent to the agent');
    const reply = page.locator('li.msg-agent', { hasText: 'You said' });
    await expect.poll(() => reply.count(), { timeout: 20_000 }).toBeGreaterThan(0);
    const replyText = await reply.first().innerText();
    expect(replyText).toContain('[Demo Helper] You said:');
    expect(replyText).toContain('hello from the browser');
    // Markdown rendered as elements: a quote and bold text.
    expect(await reply.first().locator('blockquote').count()).toBeGreaterThan(0);
    expect(await reply.first().locator('strong').count()).toBeGreaterThan(0);
    await expect.poll(() => page.locator('#working').innerText(), { timeout: 10_000 }).toBe('');

    // Untrusted text is shown as text, never parsed as HTML.
    await box.fill('@agent <img src=x onerror="window.__pwned=1"> <b>bold?</b>');
    await box.press('Enter');
    const echoed = page.locator('li.msg-agent', { hasText: '<img src=x' });
    await expect.poll(() => echoed.count(), { timeout: 20_000 }).toBeGreaterThan(0);
    expect(await page.locator('#messages img').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();

    // `/agent why` in the message box runs the command, visible only to this user.
    await box.fill('/agent why');
    await box.press('Enter');
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
    expect(pageErrors).toEqual([]);
  }, 90_000);

  it('shows the channel history again after a reload', async () => {
    await page.reload();
    const reply = page.locator('li.msg-agent', { hasText: 'hello from the browser' });
    await expect.poll(() => reply.count(), { timeout: 10_000 }).toBeGreaterThan(0);
    await expect.poll(() => page.locator('#messages').getAttribute('aria-busy')).toBe('false');
  }, 30_000);

  it('is usable from the keyboard: channels are buttons and the current one is marked', async () => {
    const support = page.getByRole('button', { name: /support/ });
    await support.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => support.getAttribute('aria-current')).toBe('true');
    expect(await page.locator('#messages').getAttribute('aria-label')).toBe('Messages in #support');
    expect(await page.locator('#binding-summary').innerText()).toContain('Not bound');
  }, 30_000);
});
