import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { until } from './until.js';

export interface CommandWatch {
  /** How many GETs of `key` Redis has run since the watch started. */
  getsOf(key: string): number;
  /**
   * Resolves once every command sent before it (by anyone) has been reported: Redis runs commands
   * one at a time and reports each as it runs it, so once a marker sent afterwards is reported,
   * they all are.
   */
  settled(): Promise<void>;
  /** How many GETs of `key` Redis runs for `run` (and anyone else meanwhile). */
  getsDuring(key: string, run: () => Promise<unknown>): Promise<number>;
  /**
   * The names (lower case) of the commands clients send during `run` that name a key containing
   * `prefix`, in order; commands a script runs are left out (its EVALSHA is the round trip).
   */
  commandsDuring(prefix: string, run: () => Promise<unknown>): Promise<string[]>;
  /** Ends the watch (its MONITOR connection). */
  stop(): void;
}

/**
 * Every command Redis runs, as MONITOR reports it. Start one per test file while Redis is quiet
 * (ioredis mistakes a monitored command for a reply when MONITOR starts under traffic).
 */
export async function watchRedisCommands(redis: Redis): Promise<CommandWatch> {
  const monitor = await redis.monitor();
  const commands: string[][] = [];
  const sentByClients: string[][] = [];
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    commands.push(args);
    if (source !== 'lua') sentByClients.push(args);
  });
  const getsOf = (key: string) => commands.filter((c) => c[0]?.toLowerCase() === 'get' && c[1] === key).length;
  const settled = async () => {
    const marker = `settled-${randomUUID()}`;
    await redis.echo(marker);
    await until(() => commands.some((c) => c[1] === marker), 'MONITOR caught up');
  };
  return {
    getsOf,
    settled,
    async getsDuring(key, run) {
      await settled();
      const before = getsOf(key);
      await run();
      await settled();
      return getsOf(key) - before;
    },
    async commandsDuring(prefix, run) {
      await settled();
      const from = sentByClients.length;
      await run();
      await settled();
      return sentByClients.slice(from).filter((c) => c.some((a) => a.includes(prefix))).map((c) => c[0]!.toLowerCase());
    },
    stop: () => monitor.disconnect(),
  };
}

/** Whether Redis has a client connection named `name` (CLIENT LIST): a cache's subscription. */
export async function hasConnectionNamed(redis: Redis, name: string): Promise<boolean> {
  return ((await redis.client('LIST')) as string).split('\n').some((line) => line.includes(` name=${name} `));
}
