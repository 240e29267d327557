import type { Express } from 'express';
import type { Redis } from 'ioredis';
import type { Config } from '../config/load.js';
import type { Logger, SecretRegistry } from '../logger.js';
import type { Ingress } from '../ingress/types.js';
import type { Commands } from '../commands/types.js';
import type { ReplyPort } from './reply-port.js';

/**
 * What the composition root hands an adapter factory. Adapters get everything through
 * here (never from globals or process.env), so tests pass their own.
 */
export interface AdapterContext {
  config: Readonly<Config>;
  logger: Logger;
  secrets: SecretRegistry;
  ingress: Ingress;
  commands: Commands;
  /** The shared HTTP server's app (Slack mounts POST /slack/events here). */
  http: Express;
  /** A general-purpose Redis connection (caches); not for blocking commands. */
  redis: Redis;
  /** This platform's reply port, for ingress-time notices and replies to commands. */
  replyPort: ReplyPort;
}
