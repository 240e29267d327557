import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { Platform } from '../core/conversation.js';
import type { SealedBox } from '../crypto/sealed-box.js';
import { queueKeys } from '../queue/keys.js';

/** A workspace's (or server's) own agent-service account, as `/agent setup` stores it. */
export interface AgentAccount {
  apiKey: string;
  /** Dashboard session (`Authorization: Bearer`), needed only to add credentials. */
  sessionToken?: string;
}

const accountSchema = z.object({ apiKey: z.string().min(1), sessionToken: z.string().min(1).optional() });

/**
 * Per-workspace agent accounts in Redis, one string per workspace, sealed with
 * INSTALLATION_ENCRYPTION_KEY and bound to its key (a value copied under another workspace's
 * key does not open). Keys: `<prefix>:chat:account:<platform>:<workspaceId>`.
 */
export interface AccountStore {
  get(platform: Platform, workspaceId: string): Promise<AgentAccount | undefined>;
  set(platform: Platform, workspaceId: string, account: AgentAccount): Promise<void>;
  delete(platform: Platform, workspaceId: string): Promise<void>;
}

export function createAccountStore(redis: Redis, base: string, box: SealedBox): AccountStore {
  const keyOf = queueKeys(base).account;
  return {
    async get(platform, workspaceId) {
      const key = keyOf(platform, workspaceId);
      const sealed = await redis.get(key);
      if (!sealed) return undefined;
      // A value that does not open (another key, tampering) is as good as none: setup again.
      try {
        const parsed = accountSchema.safeParse(JSON.parse(box.open(sealed, key)));
        return parsed.success ? parsed.data : undefined;
      } catch {
        return undefined;
      }
    },
    async set(platform, workspaceId, account) {
      const key = keyOf(platform, workspaceId);
      await redis.set(key, box.seal(JSON.stringify(accountSchema.parse(account)), key));
    },
    async delete(platform, workspaceId) {
      await redis.del(keyOf(platform, workspaceId));
    },
  };
}
