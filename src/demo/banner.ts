import type { PlatformSettings } from '../config/platform-settings.js';
import type { PrivateRedis } from '../private-redis.js';

/**
 * Printed when `npm start` runs with no configuration. Each platform's settings name the
 * variables that run it for real (`toRunForReal`).
 */
export function demoBanner(
  url: string,
  privateRedis: Pick<PrivateRedis, 'url' | 'dataDir'> | undefined,
  platforms: readonly Pick<PlatformSettings, 'toRunForReal'>[],
): string {
  const line = '─'.repeat(66);
  const platformLines = platforms.flatMap(({ toRunForReal: real }) => (real ? [`    ${real.variables.padEnd(40)} ${real.gives}\n`] : [])).join('');
  return `
${line}
  agent-bridge DEMO: no configuration found, so this is the local playground
  with a built-in demo agent (not a real agent service).

  Open ${url} to bind a channel, chat, and try the admin tools.
${privateRedis ? `\n${privateRedisNote(privateRedis)}` : ''}
  To run for real, copy .env.example to .env and set:
    AGENT_API_BASE_URL, AGENT_API_KEY       the agent service
${platformLines}  See README.md for the whole setup.
${line}
`;
}

/** Says that this process runs its own Redis, where, and until when. */
export function privateRedisNote(privateRedis: Pick<PrivateRedis, 'url' | 'dataDir'>): string {
  return `  No Redis answered on 127.0.0.1:6379, so this process started a private
  redis-server at ${privateRedis.url} (data in ${privateRedis.dataDir});
  it stops when agent-bridge stops. Set REDIS_URL to use your own Redis.
`;
}

/** The playground's address for people: an IPv6 host goes in brackets (http://[::1]:3000/). */
export function playgroundUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}/`;
}
