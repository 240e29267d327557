import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { perWorkspaceAccounts } from '../../src/accounts/agent-accounts.js';
import type { AccountStore, AgentAccount } from '../../src/accounts/account-store.js';
import type { AgentApi } from '../../src/agent-api/types.js';
import { SecretRegistry } from '../../src/logger.js';

/**
 * AGENT_ACCOUNT_MODE=per-workspace over a long life: each process reads a workspace's key again
 * every 30 s (its client cache) and tells the logger's redaction about it each time. Every such
 * read threw away the redaction pattern, so the next log line rebuilt it from every secret the
 * process knows: 18 ms at 2,000 secrets, for each workspace every 30 s, growing with every
 * workspace set up. The pattern must be rebuilt only when a secret it did not know comes.
 */
const WORKSPACES = 300;

// Counts the redaction patterns built (the only RegExps made from this many secrets).
const Original = RegExp;
let patternsBuilt = 0;
globalThis.RegExp = new Proxy(Original, {
  construct(target, args: [string | RegExp, string?]) {
    if (String(args[0]).length > 10_000) patternsBuilt += 1;
    return Reflect.construct(target, args) as RegExp;
  },
}) as RegExpConstructor;
afterEach(() => {
  patternsBuilt = 0;
});

describe('the secret registry over a long life', () => {
  it('does not rebuild its pattern for workspaces whose keys are read again and again, and still redacts them', async () => {
    const accounts = new Map<string, AgentAccount>(
      Array.from({ length: WORKSPACES }, (_, i) => [`T${i}`, { apiKey: `ak_${randomBytes(16).toString('hex')}`, sessionToken: `st_${randomBytes(16).toString('hex')}` }]),
    );
    const store = { get: async (_p: string, id: string) => accounts.get(id) } as unknown as AccountStore;
    const registry = new SecretRegistry();
    let now = 0;
    const perWorkspace = perWorkspaceAccounts({
      store,
      clientFor: () => ({}) as AgentApi,
      onSecret: (v) => void registry.add(v),
      cacheMs: 30_000,
      now: () => now,
    });
    // Rounds of 30 s: every workspace writes, the bridge logs a line for each message. The
    // first round learns every key (each new one rebuilds the pattern: it has to).
    const builtPerRound: number[] = [];
    for (let round = 0; round < 4; round++) {
      patternsBuilt = 0;
      for (const id of accounts.keys()) {
        await perWorkspace.forWorkspace('slack', id);
        registry.redact(`message answered in ${id}`);
      }
      builtPerRound.push(patternsBuilt);
      now += 30_001;
    }
    // Before: a rebuild for every workspace every round (300 per round, 18 ms each at 2,000 secrets).
    expect(builtPerRound.slice(1)).toEqual([0, 0, 0]);
    const [first] = accounts.values();
    expect(registry.redact(`key ${first!.apiKey} and ${first!.sessionToken}`)).not.toContain(first!.apiKey);
    expect(registry.redact(`session ${first!.sessionToken}`)).not.toContain(first!.sessionToken);
  });

  it('still forgets a value once every holder let it go, and still learns a new one', () => {
    const registry = new SecretRegistry();
    const filler = Array.from({ length: 600 }, () => `f_${randomBytes(12).toString('hex')}`);
    for (const f of filler) registry.add(f);
    const forgetA = registry.add('secret-value-A');
    const forgetA2 = registry.add('secret-value-A');
    expect(registry.redact('x secret-value-A x')).not.toContain('secret-value-A');
    forgetA();
    expect(registry.redact('x secret-value-A x')).not.toContain('secret-value-A');
    forgetA2();
    expect(registry.redact('x secret-value-A x')).toContain('secret-value-A');
    registry.add('secret-value-B');
    expect(registry.redact('x secret-value-B x')).not.toContain('secret-value-B');
  });
});
