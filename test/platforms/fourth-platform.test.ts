import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLATFORM_SETTINGS, PLATFORMS, platformsFor } from '../../bin/platforms.js';
import { startBridge, type Bridge } from '../../src/app.js';
import { loadConfig } from '../../src/config/load.js';
import { startAgentEmulator, type AgentEmulator } from '../../src/demo/agent-emulator.js';
import { createLogger, SecretRegistry } from '../../src/logger.js';
import { Metrics } from '../../src/metrics.js';
import { echo, echoAdapter, echoWall } from '../support/echo-platform/index.js';
import { LogCapture } from '../support/pipeline.js';
import { deleteKeys } from '../support/redis-cleanup.js';

/**
 * Issue 16: adding a platform touches one existing line. The echo platform
 * (test/support/echo-platform/: its own config.ts and module, nothing in src/) joins the list
 * as `[...PLATFORMS, echo]`, the one line bin/platforms.ts would change, and then works end to
 * end: its settings read and validated by the one loader, its BINDINGS honoured, its messages
 * through ingress, Redis, the worker and its reply port, its commands and audit entries.
 */
const prefix = `test-echo-${Date.now()}`;
let agent: AgentEmulator;
let bridge: Bridge;
const logs = new LogCapture();
const TOKEN = 'echo-token-7c1d2e9f';

beforeAll(async () => {
  agent = await startAgentEmulator({ reply: (id, m) => `${id} heard: ${m}` });
  const config = loadConfig([...PLATFORM_SETTINGS, echo.settings], {
    AGENT_API_BASE_URL: agent.baseUrl,
    AGENT_API_KEY: agent.apiKey,
    QUEUE_PREFIX: prefix,
    HTTP_PORT: '0',
    ECHO_TOKEN: TOKEN,
    ECHO_ROOM: 'room1',
    BINDINGS: 'echo:room1=demo-helper',
    LOG_LEVEL: 'debug',
  });
  const secrets = new SecretRegistry();
  bridge = await startBridge({
    config,
    secrets,
    logger: createLogger({ level: 'debug', registry: secrets, destination: logs }),
    metrics: new Metrics(),
    platforms: await platformsFor(config, [...PLATFORMS, echo]),
  });
});

afterAll(async () => {
  await bridge?.stop();
  await agent?.close();
  await deleteKeys(prefix);
});

describe('a fourth platform, added by one line', () => {
  it('its settings are read by its own module, checked in the same pass as the core', () => {
    let problems = '';
    try {
      loadConfig([...PLATFORM_SETTINGS, echo.settings], { ECHO_ROOM: 'x', AGENT_API_BASE_URL: 'http://x', AGENT_API_KEY: 'k', SLACK_BOT_TOKEN: 'xoxb-1' });
    } catch (err) {
      problems = (err as Error).message;
    }
    expect(problems).toMatch(/ECHO_TOKEN is missing \(ECHO_ROOM is set\)/);
    expect(problems).toMatch(/SLACK_SIGNING_SECRET is missing/);
    // Without the module, its variables mean nothing, and its bindings are refused by name.
    expect(() => loadConfig(PLATFORM_SETTINGS, { AGENT_API_BASE_URL: 'http://x', AGENT_API_KEY: 'k', BINDINGS: 'echo:room1=a' })).toThrow(/names the platform echo, which this bridge does not run/);
  });

  it('a message is answered through ingress, the queue, the worker and its reply port', async () => {
    expect(await echoAdapter!.say('hello from the fourth platform')).toMatchObject({ status: 'queued' });
    await expect.poll(() => echoWall.filter((w) => w.kind === 'chunk').map((w) => w.text), { timeout: 15_000 }).toEqual([
      'demo-helper heard: hello from the fourth platform',
    ]);
    expect(agent.chatCalls().map((c) => c.instanceId)).toEqual(['demo-helper']);
  });

  it('its admin commands speak its vocabulary, and its audit entries are kept and read back', async () => {
    const bound = await echoAdapter!.command('bind demo-poet');
    expect(bound.ok).toBe(true);
    const audit = await echoAdapter!.command('audit');
    expect(audit.lines.join(' ')).toMatch(/in this hall/);
    expect(JSON.stringify(audit.table)).toContain('bind');
    expect((await echoAdapter!.command('help')).lines.join(' ')).toContain('`!agent bind <instance-id>');
  });

  it('its secret is redacted like every other', () => {
    expect(logs.text).not.toContain(TOKEN);
  });
});
