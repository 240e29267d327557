import { randomUUID } from 'node:crypto';
import { startBridge, type Bridge } from '../../src/app.js';
import type { Config } from '../../src/config/load.js';
import type { PlatformModule } from '../../src/core/platform-context.js';
import type { AgentEmulator } from '../../src/demo/agent-emulator.js';
import { createLogger, SecretRegistry } from '../../src/logger.js';
import { Metrics } from '../../src/metrics.js';
import { loadTestConfig } from './config.js';
import { LogCapture } from './log-capture.js';
import { deleteKeysAt, SHARED_REDIS } from './redis-cleanup.js';

/** A key prefix of its own for one run: `<tag>-<8 random hex digits>`. */
export const newPrefix = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}`;

export interface TestBridgeOptions {
  /** The run's key prefix (`newPrefix`): emulators and stores may need it before the bridge starts. */
  prefix: string;
  /** The agent emulator the bridge calls (AGENT_API_BASE_URL, AGENT_API_KEY); closed with the bridge. */
  agent: AgentEmulator;
  /** Settings beyond the test defaults (a free HTTP port, no playground, 20 ms retries, debug logs); they win. */
  env: Record<string, string>;
  platforms: PlatformModule[];
  /** Other emulators, closed with the bridge, or at once if it does not start. */
  closeWith?: ReadonlyArray<{ close(): Promise<unknown> }>;
  metrics?: Metrics;
  /** Runs once the bridge is up, before it is handed over (a failure stops everything). */
  ready?(bridge: Bridge): Promise<void>;
}

export interface TestBridge {
  prefix: string;
  config: Readonly<Config>;
  bridge: Bridge;
  logs: LogCapture;
  secrets: SecretRegistry;
  /** Stops the bridge, closes the emulators and deletes the run's keys. */
  close(): Promise<void>;
}

/**
 * The real bridge in this process under its own key prefix, logging into memory: the one
 * start-up the platform harnesses (Slack, Discord, the core pipeline, the reliability suites)
 * share. The emulators are theirs; this only configures, starts and cleans up.
 */
export async function startTestBridge(options: TestBridgeOptions): Promise<TestBridge> {
  const { prefix, agent } = options;
  const logs = new LogCapture();
  const secrets = new SecretRegistry();
  const config = loadTestConfig({
    AGENT_API_BASE_URL: agent.baseUrl,
    AGENT_API_KEY: agent.apiKey,
    QUEUE_PREFIX: prefix,
    HTTP_PORT: '0',
    PLAYGROUND: 'false',
    RETRY_BASE_DELAY_MS: '20',
    LOG_LEVEL: 'debug',
    ...options.env,
  });
  const others = [...(options.closeWith ?? []), agent];
  const closeOthers = () => Promise.allSettled(others.map((o) => o.close()));
  let bridge: Bridge | undefined;
  try {
    bridge = await startBridge({
      config,
      secrets,
      logger: createLogger({ level: config.logLevel, registry: secrets, destination: logs }),
      metrics: options.metrics ?? new Metrics(),
      platforms: options.platforms,
    });
    await options.ready?.(bridge);
  } catch (err) {
    await bridge?.stop().catch(() => {});
    await closeOthers();
    await deleteKeysAt(SHARED_REDIS, prefix);
    throw err;
  }
  const started = bridge;
  return {
    prefix,
    config,
    bridge: started,
    logs,
    secrets,
    close: async () => {
      await started.stop();
      await closeOthers();
      await deleteKeysAt(options.env.REDIS_URL ?? SHARED_REDIS, prefix);
    },
  };
}
