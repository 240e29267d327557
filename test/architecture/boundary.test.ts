import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeConversationId, encodeConversationId } from '../../src/core/conversation.js';

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('architecture', () => {
  it('nothing in src/ imports a chat platform SDK', () => {
    const offenders = files('src').filter((f) =>
      /from\s+['"](discord\.js|@discordjs\/[^'"]*|@slack\/[^'"]*)['"]|import\(\s*['"](discord\.js|@discordjs|@slack)/.test(readFileSync(f, 'utf8')),
    );
    expect(offenders).toEqual([]);
  });

  it('nothing in src/ imports from adapters/ (the entry point in bin/ lists the platforms)', () => {
    const offenders = files('src').filter((f) => /(from\s+|import\()\s*['"][./]*adapters\//.test(readFileSync(f, 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('src/config reads no platform variable: each adapters/<platform>/config.ts owns its own', () => {
    const offenders = files(join('src', 'config')).filter((f) => /\b(SLACK|DISCORD)_[A-Z]/.test(readFileSync(f, 'utf8')));
    expect(offenders).toEqual([]);
  });

  it("src/ names no platform variable outside comments (the demo banner takes them from each platform's settings)", () => {
    const offenders = files('src').flatMap((f) =>
      readFileSync(f, 'utf8')
        .split('\n')
        .filter((line) => /\b(SLACK|DISCORD)_[A-Z]/.test(line) && !/^\s*(\/?\*|\/\/)/.test(line))
        .map((line) => `${f}: ${line.trim()}`),
    );
    expect(offenders).toEqual([]);
  });

  it("src/ branches on no platform's name: wording comes from the module's vocabulary", () => {
    const offenders = files('src').flatMap((f) =>
      readFileSync(f, 'utf8')
        .split('\n')
        .filter((line) => /['"](slack|discord)['"]/.test(line) && !/^\s*(\*|\/\/)/.test(line))
        .map((line) => `${f}: ${line.trim()}`),
    );
    expect(offenders).toEqual([]);
  });

  it("src/ compares no platform with a name (`platform === 'web'`, `switch (platform)`): the module's vocabulary words it", () => {
    const comparison = /platform\w*(\.\w+)*\s*[!=]==?\s*['"`]|['"`]\w*['"`]\s*[!=]==?\s*[\w.]*platform|switch\s*\([^)]*platform|['"]web['"]/i;
    const offenders = files('src').flatMap((f) =>
      readFileSync(f, 'utf8')
        .split('\n')
        .filter((line) => comparison.test(line) && !/^\s*(\*|\/\/)/.test(line))
        .map((line) => `${f}: ${line.trim()}`),
    );
    expect(offenders).toEqual([]);
  });

  it('only the config module reads process.env in src/ and adapters/', () => {
    const offenders = [...files('src'), ...files('adapters')].filter(
      (f) => !f.startsWith(join('src', 'config')) && /process\.env/.test(readFileSync(f, 'utf8')),
    );
    expect(offenders).toEqual([]);
  });

  it('conversation IDs round-trip, even with separators inside a part', () => {
    const refs = [
      { platform: 'slack', workspaceId: 'T1', channelId: 'C1', threadId: '1700.1' },
      { platform: 'discord', workspaceId: 'dm', channelId: '998877' },
      { platform: 'web', workspaceId: 'local', channelId: 'a:b%c' },
    ] as const;
    for (const ref of refs) expect(decodeConversationId(encodeConversationId(ref))).toEqual(ref);
    expect(encodeConversationId(refs[0])).toBe('slack:T1:C1:1700.1');
    // Any platform name a module may register (lower-case letters), but nothing else.
    expect(decodeConversationId('teams:x:y')).toEqual({ platform: 'teams', workspaceId: 'x', channelId: 'y' });
    for (const bad of ['E-mail:x:y', 'slack:T1', ':x:y', 'slack:T1:C1:1.1:extra']) expect(() => decodeConversationId(bad)).toThrow(/not a conversation ID/);
  });
});
