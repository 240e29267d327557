import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';

/** A Lua script called with its keys and arguments; resolves to the script's reply. */
export type LuaScript = (redis: Redis, keys: readonly string[], args: ReadonlyArray<string | number>) => Promise<unknown>;

/**
 * Loads `scripts/<name>-<numberOfKeys>.lua` (BullMQ's naming: the key count is in the file
 * name and the file opens with its KEYS/ARGV/returns contract), with its includes inlined.
 * Calls go by SHA (EVALSHA), and the text is sent again only after a Redis restart or failover
 * forgot it (NOSCRIPT), so the hot path never resends the script.
 */
export function luaScript(fileName: string): LuaScript {
  const match = /^[a-z-]+-(\d+)\.lua$/.exec(fileName);
  if (!match) throw new Error(`Lua script file ${fileName} must be named <name>-<numberOfKeys>.lua`);
  const numberOfKeys = Number(match[1]);
  const lua = scriptText(fileName);
  const sha = createHash('sha1').update(lua).digest('hex');
  return async (redis, keys, args) => {
    // Passing a wrong number of keys would silently shift KEYS into ARGV: refuse it here.
    if (keys.length !== numberOfKeys) throw new Error(`${fileName} takes ${numberOfKeys} keys, got ${keys.length}`);
    try {
      return await redis.evalsha(sha, numberOfKeys, ...keys, ...args);
    } catch (err) {
      if (!String((err as Error).message).includes('NOSCRIPT')) throw err;
      return redis.eval(lua, numberOfKeys, ...keys, ...args);
    }
  };
}

/** The text of `scripts/<fileName>`, with its includes inlined. */
export function scriptText(fileName: string): string {
  return withIncludes(readFileSync(new URL(`./scripts/${fileName}`, import.meta.url), 'utf8'));
}

/**
 * Inlines each `--- @include "<name>"` line (BullMQ's convention) with
 * `scripts/includes/<name>.lua`, so scripts share helpers without a copy each.
 */
function withIncludes(lua: string): string {
  return lua.replace(/^--- @include "([a-z-]+)"$/gm, (_line, name: string) =>
    readFileSync(new URL(`./scripts/includes/${name}.lua`, import.meta.url), 'utf8'),
  );
}
