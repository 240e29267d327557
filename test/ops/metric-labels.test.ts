import { randomUUID } from 'node:crypto';
import { loadTestConfig } from '../support/config.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webPlatform } from '../../adapters/web/index.js';
import { startBridge, type Bridge } from '../../src/app.js';

import { startAgentEmulator, type AgentEmulator } from '../../src/demo/agent-emulator.js';
import { createInstanceLabel, OTHER_INSTANCE } from '../../src/instance-label.js';
import { createLogger, SecretRegistry } from '../../src/logger.js';
import { Metrics } from '../../src/metrics.js';
import { deleteKeys } from '../support/redis-cleanup.js';

const caller = { platform: 'web' as const, workspaceId: 'web', channelId: 'general', userId: 'ada' };

describe('the agent_instance metric label stays bounded', () => {
  const prefix = `mltest-${randomUUID().slice(0, 8)}`;
  let agent: AgentEmulator;
  let bridge: Bridge;

  beforeAll(async () => {
    agent = await startAgentEmulator();
    const config = loadTestConfig({
      AGENT_API_BASE_URL: agent.baseUrl,
      AGENT_API_KEY: agent.apiKey,
      AGENT_SESSION_COOKIE: agent.sessionCookie,
      QUEUE_PREFIX: prefix,
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: '0',
      LOG_LEVEL: 'silent',
    });
    bridge = await startBridge({ config, logger: createLogger({ level: 'silent', registry: new SecretRegistry() }), metrics: new Metrics(), platforms: [webPlatform] });
  });
  afterAll(async () => {
    await bridge?.stop();
    await agent?.close();
    await deleteKeys(prefix);
  });

  const metricsText = async () => (await fetch(`http://127.0.0.1:${bridge.httpPort}/metrics`)).text();

  it('names an instance only once the service listed it; a 10 KB ID typed by an admin is counted as `other`', async () => {
    const typed = `x${'y'.repeat(10_000)}`;
    // Start-up's reachability check listed the service's instances: a listed instance has its
    // own series, a typed unknown ID is `other`.
    await bridge.commands.credential(caller, 'demo-helper', 'K1', 'v1');
    await bridge.commands.credential(caller, typed, 'K2', 'v2');
    let text = await metricsText();
    expect(text).not.toContain('yyyyyyyyyy');
    expect(text).toMatch(/agent_bridge_agent_requests_total\{endpoint="addCredential",agent_instance="demo-helper",status="200"\} 1/);
    expect(text).toMatch(/agent_bridge_agent_requests_total\{endpoint="addCredential",agent_instance="other",status="404"\} 1/);

    // `/agent instances` lists them again: still bounded.
    await bridge.commands.instances(caller);
    await bridge.commands.credential(caller, 'demo-helper', 'K3', 'v3');
    await bridge.commands.credential(caller, `${typed}z`, 'K4', 'v4');
    text = await metricsText();
    expect(text).toMatch(/agent_bridge_agent_requests_total\{endpoint="addCredential",agent_instance="demo-helper",status="200"\} 2/);
    expect(text).toMatch(/agent_bridge_agent_requests_total\{endpoint="addCredential",agent_instance="other",status="404"\} 2/);
    expect(text).not.toContain('yyyyyyyyyy');
    expect(agent.calls.filter((c) => c.endpoint === 'credentials')).toHaveLength(4);
  });

  it('remembers a bounded number of listed instances, and no overlong ID', () => {
    const label = createInstanceLabel({ maxInstances: 3, maxLength: 10 });
    label.learn([{ id: 'a' }, { id: 'b' }, { id: 'c'.repeat(11) }, { id: 'd' }, { id: 'e' }]);
    expect(['a', 'b', 'c'.repeat(11), 'd', 'e'].map((id) => label.label(id))).toEqual(['a', 'b', OTHER_INSTANCE, 'd', OTHER_INSTANCE]);
    expect(label.label(undefined)).toBe('');
  });
});
