import { randomBytes } from 'node:crypto';
import { PLATFORM_SETTINGS, platformsFor } from './platforms.js';
import { RedisUnavailableError, startBridge, type Bridge } from '../src/app.js';
import { describeRedisStartupError } from '../src/redis-startup.js';
import { ConfigError, executableSearchPath, loadConfig, type Config } from '../src/config/load.js';
import { startAgentEmulator, type AgentEmulator } from '../src/demo/agent-emulator.js';
import { createLogger, errorFields, secrets } from '../src/logger.js';
import { demoBanner, playgroundUrl, privateRedisNote } from '../src/demo/banner.js';
import { findRedisServer, GET_REDIS_HINT, somethingListens, startPrivateRedis, type PrivateRedis } from '../src/private-redis.js';

/** `npm start`: read config once, run the configured role, shut down cleanly on a signal. */
async function main(): Promise<void> {
  let config: Readonly<Config>;
  try {
    config = loadConfig(PLATFORM_SETTINGS);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\nSee .env.example for every setting.\n`);
      process.exit(1);
    }
    throw err;
  }
  const logger = createLogger({ level: config.logLevel });
  for (const warning of config.warnings) logger.warn(warning);

  // Handlers first: a signal during start-up (a supervisor stopping it at once) is honoured as
  // soon as the bridge runs, instead of killing it half-started.
  let firstSignalAt: number | undefined;
  /** Set once the bridge runs. */
  const running: { stop?: () => void } = {};
  const onSignal = (signal: NodeJS.Signals) => {
    if (firstSignalAt !== undefined) {
      // A group kill reaches this process twice (directly, and relayed by npm): the same
      // request. A second one a person sends later means "now".
      if (Date.now() - firstSignalAt < RELAYED_SIGNAL_MS) return;
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    firstSignalAt = Date.now();
    logger.info({ signal }, 'signal received');
    running.stop?.();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  // The terminal closed: shut down the same way (and stop the private Redis, which ignores SIGHUP).
  process.on('SIGHUP', onSignal);

  // A newcomer without a Redis: run the system's redis-server for this process alone. Only a
  // single-process bridge (ROLE=all) may: split roles must share one Redis, so they need REDIS_URL.
  let privateRedis: PrivateRedis | undefined;
  if (config.redis.defaulted && config.role === 'all' && !(await somethingListens(config.redis.url))) {
    const executable = findRedisServer(executableSearchPath());
    if (!executable) {
      process.stderr.write(`${GET_REDIS_HINT}\n`);
      process.exit(1);
    }
    try {
      privateRedis = await startPrivateRedis({ executable });
    } catch (err) {
      process.stderr.write(`${(err as Error).message}\n${GET_REDIS_HINT}\n`);
      process.exit(1);
    }
    config = Object.freeze({ ...config, redis: Object.freeze({ ...config.redis, url: privateRedis.url }) });
    logger.info({ redis: privateRedis.url, dataDir: privateRedis.dataDir }, 'started a private redis-server');
  }

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
    bridge = await startBridge({ config, logger, secrets, platforms: await platformsFor(config), platformSettings: PLATFORM_SETTINGS });
  } catch (err) {
    // One clear line, never a stack trace: the message says what to fix.
    // A REDIS_URL user whose ACL lacks a command or key the bridge uses is refused once it runs it.
    const message =
      err instanceof RedisUnavailableError ? err.message
      : /NOPERM/.test(String((err as Error).message)) ? describeRedisStartupError(err as Error, config.redis)
      : `start-up failed: ${(err as Error).message}`;
    process.stderr.write(`${secrets.redact(message)}\n`);
    await emulator?.close();
    await privateRedis?.stop();
    process.exit(1);
  }
  // The banner is for people: stderr, so stdout stays pure JSON lines off a terminal.
  if (config.mode === 'demo') process.stderr.write(demoBanner(playgroundUrl(config.http.host, bridge.httpPort), privateRedis, PLATFORM_SETTINGS));
  else if (privateRedis) process.stderr.write(privateRedisNote(privateRedis));

  running.stop = () =>
    void bridge
      .stop()
      .then(() => emulator?.close())
      .then(() => privateRedis?.stop())
      // pino writes stdout asynchronously: a line still being written when process.exit runs
      // would land after the lines flushed at exit ('stopped' before 'shutting down').
      .then(() => new Promise<void>((resolve) => logger.flush(() => resolve())))
      .then(() => process.exit(0));
  if (firstSignalAt !== undefined) running.stop();
  process.on('unhandledRejection', (reason) => {
    logger.error(errorFields(reason), 'unhandled rejection');
  });
}

/** Signals this close to the first are the same request relayed (npm forwards what it gets). */
const RELAYED_SIGNAL_MS = 1_000;

void main();
