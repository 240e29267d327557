import { z } from 'zod';

/**
 * Every environment variable agent-bridge reads. The names are part of the product's
 * interface: operators and tooling rely on them. `.env.example` documents each one.
 */

export const bool = (name: string, fallback: boolean) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return fallback;
      const s = v.trim().toLowerCase();
      if (['true', '1', 'yes', 'on'].includes(s)) return true;
      if (['false', '0', 'no', 'off'].includes(s)) return false;
      ctx.addIssue({ code: 'custom', message: `${name} must be true or false` });
      return z.NEVER;
    });

export const int = (name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return fallback;
      // Digits only: Number() also reads `1e3`, `0x10`, `5.0` and `+5`, so a typo or a unit left
      // out ran with a value nobody wrote. Spaces around them are trimmed, as for every setting
      // (an env file saved with Windows line endings ends each value with one).
      const n = /^\d+$/.test(v.trim()) ? Number(v.trim()) : NaN;
      if (!Number.isSafeInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `${name} must be a whole number from ${min} to ${max}, in digits only (no units, decimals, signs or exponents)` });
        return z.NEVER;
      }
      return n;
    });

export const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

export const list = z
  .string()
  .optional()
  .transform((v) =>
    (v ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );

/** An http(s) URL that `new URL` accepts too (a port over 65535 or a broken host passes a pattern). */
const isHttpUrl = (v: string) => /^https?:\/\/[^\s]+$/i.test(v) && URL.canParse(v);

export const httpUrl = (name: string) =>
  optionalString.refine((v) => v === undefined || isHttpUrl(v), {
    message: `${name} must be an http(s) URL, for example https://openhelixai.com/api/v1`,
  });

/**
 * The service's {base_url}: the client appends /chat and /instances to it, so a query or a
 * fragment in it would send every call to another path (a chat to .../api/v1?x=1/chat).
 */
const baseUrl = (name: string) =>
  httpUrl(name)
    .refine((v) => v === undefined || !URL.canParse(v) || (new URL(v).search === '' && new URL(v).hash === '' && !/[?#]/.test(v)), {
      message: `${name} must be the service's base address without a "?" query or "#" part, for example https://openhelixai.com/api/v1`,
    })
    // An endpoint's address pasted from the docs: every call would go to …/chat/chat.
    .superRefine((v, ctx) => {
      const endpoint = v === undefined ? undefined : /\/(chat|instances)\/*$/i.exec(v)?.[1];
      if (endpoint) ctx.addIssue({ code: 'custom', message: `${name} ends with /${endpoint}, an endpoint: give the base address the endpoints follow, for example https://openhelixai.com/api/v1` });
    });

export const envSchema = z.object({
  AGENT_API_BASE_URL: baseUrl('AGENT_API_BASE_URL'),
  AGENT_API_KEY: optionalString,
  AGENT_SESSION_COOKIE: optionalString,
  AGENT_SESSION_TOKEN: optionalString,
  AGENT_TIMEOUT_MS: int('AGENT_TIMEOUT_MS', 120_000, 100, 3_600_000),
  AGENT_MAX_RESPONSE_BYTES: int('AGENT_MAX_RESPONSE_BYTES', 1_000_000, 100, 100_000_000),

  REDIS_URL: optionalString
    .transform((v) => v ?? 'redis://127.0.0.1:6379')
    .refine((v) => /^rediss?:\/\//.test(v), { message: 'REDIS_URL must start with redis:// or rediss://' }),
  REDIS_SENTINELS: list,
  REDIS_SENTINEL_NAME: optionalString,
  REDIS_CLUSTER_NODES: list,
  REDIS_TLS_CA_FILE: optionalString,
  QUEUE_PREFIX: optionalString
    .transform((v) => v ?? 'agent-bridge')
    .refine((v) => /^[A-Za-z0-9_.-]{1,64}$/.test(v), {
      message: 'QUEUE_PREFIX may use letters, digits, _ . - (at most 64)',
    }),

  ROLE: optionalString
    .transform((v) => v ?? 'all')
    .pipe(z.enum(['all', 'ingress', 'worker'], { message: 'ROLE must be all, ingress or worker' })),
  WORKER_CONCURRENCY: int('WORKER_CONCURRENCY', 50, 1, 100_000),
  JOB_ATTEMPTS: int('JOB_ATTEMPTS', 5, 1, 100),
  RETRY_BASE_DELAY_MS: int('RETRY_BASE_DELAY_MS', 1_000, 1, 3_600_000),
  WORKER_LOCK_DURATION_MS: int('WORKER_LOCK_DURATION_MS', 30_000, 500, 3_600_000),
  WORKER_STALLED_INTERVAL_MS: int('WORKER_STALLED_INTERVAL_MS', 30_000, 500, 3_600_000),
  SHUTDOWN_TIMEOUT_MS: int('SHUTDOWN_TIMEOUT_MS', 25_000, 0, 3_600_000),
  KEEP_COMPLETED_SECONDS: int('KEEP_COMPLETED_SECONDS', 86_400, 60),
  KEEP_COMPLETED_COUNT: int('KEEP_COMPLETED_COUNT', 100_000, 100),
  KEEP_FAILED_SECONDS: int('KEEP_FAILED_SECONDS', 7 * 86_400, 60),
  KEEP_FAILED_COUNT: int('KEEP_FAILED_COUNT', 10_000, 100),
  AGENT_ACCOUNT_MODE: optionalString
    .transform((v) => v ?? 'shared')
    .pipe(z.enum(['shared', 'per-workspace'], { message: 'AGENT_ACCOUNT_MODE must be shared or per-workspace' })),
  AGENT_CALL_GUARANTEE: optionalString
    .transform((v) => v ?? 'at-least-once')
    .pipe(z.enum(['at-least-once', 'at-most-once'], { message: 'AGENT_CALL_GUARANTEE must be at-least-once or at-most-once' })),
  MAX_REPLY_CHUNKS: int('MAX_REPLY_CHUNKS', 10, 2, 1000),
  WORKING_INDICATOR_DELAY_MS: int('WORKING_INDICATOR_DELAY_MS', 0, 0, 600_000),
  MAX_PENDING_PER_CHANNEL: int('MAX_PENDING_PER_CHANNEL', 200, 0, 1_000_000),

  HTTP_HOST: optionalString.transform((v) => v ?? '127.0.0.1'),
  HTTP_PORT: int('HTTP_PORT', 3000, 0, 65_535),

  BINDINGS: optionalString,
  MAX_MESSAGE_CHARS: int('MAX_MESSAGE_CHARS', 8000, 1, 1_000_000),
  MAX_ATTACHMENT_BYTES: int('MAX_ATTACHMENT_BYTES', 100_000, 0, 10_000_000),
  LOG_LEVEL: optionalString
    .transform((v) => v ?? 'info')
    .pipe(
      z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'], {
        message: 'LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent',
      }),
    ),

  // Quotas (0 = unlimited); bindings may override them.
  QUOTA_USER_PER_MINUTE: int('QUOTA_USER_PER_MINUTE', 0),
  QUOTA_USER_PER_DAY: int('QUOTA_USER_PER_DAY', 0),
  QUOTA_CHANNEL_PER_MINUTE: int('QUOTA_CHANNEL_PER_MINUTE', 0),
  QUOTA_CHANNEL_PER_DAY: int('QUOTA_CHANNEL_PER_DAY', 0),
  THREAD_CONTEXT_MAX_MESSAGES: int('THREAD_CONTEXT_MAX_MESSAGES', 20, 1, 1000),
  THREAD_CONTEXT_MAX_CHARS: int('THREAD_CONTEXT_MAX_CHARS', 4000, 100, 1_000_000),
  THREAD_FOLLOW_UP_DAYS: int('THREAD_FOLLOW_UP_DAYS', 30, 1, 365),
  AUDIT_MAX_ENTRIES: int('AUDIT_MAX_ENTRIES', 10_000, 10),
  FEEDBACK_MAX_ENTRIES: int('FEEDBACK_MAX_ENTRIES', 10_000, 10),

  // Queue dashboard (Bull Board) at /admin/queues: on only when both are set.
  ADMIN_USER: optionalString,
  ADMIN_PASSWORD: optionalString,

  // Playground (the `web` adapter).
  PLAYGROUND: bool('PLAYGROUND', false),
  PLAYGROUND_TOKEN: optionalString,

  // 32 bytes, as 64 hex digits or base64: installations (and per-workspace keys) are sealed with it.
  INSTALLATION_ENCRYPTION_KEY: optionalString.refine((v) => v === undefined || encryptionKeyBytes(v) !== undefined, {
    message: 'INSTALLATION_ENCRYPTION_KEY must be 32 random bytes as 64 hex digits or base64 (make one with: openssl rand -base64 32)',
  }),

});

export type Env = z.infer<typeof envSchema>;

/** The 32-byte key in INSTALLATION_ENCRYPTION_KEY (64 hex digits or base64), or undefined when it is not one. */
export function encryptionKeyBytes(value: string): Buffer | undefined {
  const v = value.trim();
  if (/^[0-9a-fA-F]{64}$/.test(v)) return Buffer.from(v, 'hex');
  if (!/^[A-Za-z0-9+/_-]{42,44}={0,2}$/.test(v)) return undefined;
  const bytes = Buffer.from(v, 'base64');
  return bytes.length === 32 ? bytes : undefined;
}
