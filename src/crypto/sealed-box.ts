import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM for secrets kept in Redis (Slack installations, per-workspace agent keys).
 * Each value gets a fresh 12-byte IV; the auth tag makes a tampered or wrongly keyed value
 * fail to open instead of yielding garbage. `context` (e.g. the Redis key) is bound as
 * additional data, so a sealed value copied under another key does not open there.
 */
export interface SealedBox {
  seal(plain: string, context: string): string;
  /** Throws when the value was not sealed with this key and context. */
  open(sealed: string, context: string): string;
}

const VERSION = 'v1';

/** `keyBase64`: 32 bytes, as config.encryptionKey holds them. */
export function createSealedBox(keyBase64: string): SealedBox {
  const key = Buffer.from(keyBase64, 'base64');
  if (key.length !== 32) throw new Error('the encryption key must be 32 bytes');
  return {
    seal(plain, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(context));
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return [VERSION, iv.toString('base64'), cipher.getAuthTag().toString('base64'), body.toString('base64')].join('.');
    },
    open(sealed, context) {
      const [version, iv, tag, body] = sealed.split('.');
      if (version !== VERSION || !iv || !tag || body === undefined) throw new Error('not a sealed value');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'));
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(Buffer.from(tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
    },
  };
}
