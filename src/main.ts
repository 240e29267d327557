import { randomBytes } from 'node:crypto';
import { platformsFor } from '../adapters/index.js';
import { RedisUnavailableError, startBridge, type Bridge } from './app.js';
import { ConfigError, loadConfig, type Config } from './config/load.js';
import { startAgentEmulator, type AgentEmulator } from './demo/agent-emulator.js';
import { createLogger, secrets } from './logger.js';
import { demoBanner } from './demo/banner.js';

/** `npm start`: read config once, run the configured role, shut down cleanly on a signal. */
async function main(): Promise<void> {
  let config: Readonly<Config>;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\nSee .env.example for every setting.\n`);
      process.exit(1);
    }
    throw err;
  }
  const logger = createLogger({ level: config.logLevel });

  let emulator: AgentEmulator | undefined;
  if (config.mode === 'demo') {
    // No configuration at all: run the whole pipeline against the bundled demo agent.
    const apiKey = `demo-${randomBytes(12).toString('hex')}`;
    emulator = await startAgentEmulator({ apiKey, sessionCookie: `demo_session=${randomBytes(12).toString('hex')}` });
    config = Object.freeze({
      ...config,
      agent: {
        baseUrl: emulator.baseUrl,
        apiKey,
        sessionCookie: emulator.sessionCookie,
        timeoutMs: 120_000,
        otherTimeoutMs: 15_000,
      },
      playground: { ...config.playground, enabled: true },
    });
  }

  let bridge: Bridge;
  try {
    bridge = await startBridge({ config, logger, secrets, platforms: await platformsFor(config) });
  } catch (err) {
    // One clear line, never a stack trace: the message says what to fix.
    const message = err instanceof RedisUnavailableError ? err.message : `start-up failed: ${(err as Error).message}`;
    process.stderr.write(`${secrets.redact(message)}\n`);
    await emulator?.close();
    process.exit(1);
  }
  if (config.mode === 'demo') process.stdout.write(demoBanner(`http://${config.http.host}:${bridge.httpPort}/`));

  let signals = 0;
  const shutdown = (signal: NodeJS.Signals) => {
    if (++signals > 1) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    logger.info({ signal }, 'signal received');
    void bridge
      .stop()
      .then(() => emulator?.close())
      .then(() => process.exit(0));
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
  process.on('unhandledRejection', (reason) => {
    logger.error({ err: { message: reason instanceof Error ? reason.message : String(reason) } }, 'unhandled rejection');
  });
}

void main();
