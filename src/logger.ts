import { pino, type Logger, type DestinationStream } from 'pino';
import { BridgeError } from './core/errors.js';
import { REDACTED, secretForms } from './core/scrub.js';

export type { Logger };

/**
 * Secret values known to the process: config secrets at start-up, credential values while
 * a request carries them. The logger replaces every occurrence in every line it writes,
 * whatever field or error message the value found its way into.
 */
export class SecretRegistry {
  private readonly values = new Map<string, number>();
  private pattern: RegExp | null = null;
  private readonly redactors = new Set<(text: string) => string>();

  /**
   * Another redaction every line also goes through, for secrets this registry cannot list
   * (credential values known only by their fingerprint). Returns its removal.
   */
  addRedactor(redactor: (text: string) => string): () => void {
    const own = (text: string) => redactor(text);
    this.redactors.add(own);
    return () => void this.redactors.delete(own);
  }

  add(value: string | undefined): () => void {
    if (!value || value.length < 4) return () => {};
    // The pattern is rebuilt only when the set of forms changes: a value known already (a
    // workspace's key read again every 30 s) must not cost a rebuild, which grows with every
    // secret the process knows (18 ms at 2,000).
    for (const form of forms(value)) {
      const n = this.values.get(form) ?? 0;
      if (n === 0) this.pattern = null;
      this.values.set(form, n + 1);
    }
    return () => {
      for (const form of forms(value)) {
        const n = (this.values.get(form) ?? 1) - 1;
        if (n > 0) this.values.set(form, n);
        else if (this.values.delete(form)) this.pattern = null;
      }
    };
  }

  redact(text: string): string {
    let out = this.redactValues(text);
    for (const redactor of this.redactors) out = redactor(out);
    return out;
  }

  private redactValues(text: string): string {
    if (this.values.size === 0) return text;
    this.pattern ??= new RegExp(
      [...this.values.keys()]
        .sort((a, b) => b.length - a.length)
        .map(markdownTolerant)
        .join('|'),
      'g',
    );
    return text.replace(this.pattern, REDACTED);
  }
}

/**
 * A secret as a pattern that also matches it with Markdown's backslash before any punctuation
 * (`sk\_live\-…`): models often escape `_` in what they quote, and a renderer or a chat client
 * shows the text without the backslashes, so the escaped form is the secret to a reader.
 */
function markdownTolerant(value: string): string {
  return [...value].map((ch) => (/[\p{L}\p{N}]/u.test(ch) ? escapeRegExp(ch) : `\\\\?${escapeRegExp(ch)}`)).join('');
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The forms a secret takes in text: the one scrubbing rule of the bridge (src/core/scrub.ts). */
const forms = (value: string): string[] => secretForms([value]);

/** Shared registry of the process; tests may make their own. */
export const secrets = new SecretRegistry();

/** Field names whose values are never logged, whatever they hold. */
const REDACT_PATHS = [
  'apiKey',
  'token',
  'password',
  'value',
  'cookie',
  'authorization',
  'headers.authorization',
  'headers.cookie',
  'headers["x-api-key"]',
  '*.apiKey',
  '*.token',
  '*.password',
  '*.cookie',
  '*.authorization',
  '*.headers.authorization',
  '*.headers.cookie',
  '*.headers["x-api-key"]',
];

export interface LoggerOptions {
  level?: string;
  registry?: SecretRegistry;
  /** Where lines go; defaults to stdout (pretty on a terminal). */
  destination?: DestinationStream;
  pretty?: boolean;
}

/**
 * pino-pretty on a terminal: one line per entry. `singleLine` alone still prints `err` (which
 * most lines carry, see errorFields) as an indented block, so no key is treated as an error.
 */
const PRETTY_OPTIONS = { colorize: true, translateTime: 'SYS:HH:MM:ss', singleLine: true, errorLikeObjectKeys: [] as string[] };

export function createLogger(options: LoggerOptions = {}): Logger {
  const registry = options.registry ?? secrets;
  const pretty = options.pretty ?? (options.destination === undefined && process.stdout.isTTY === true);
  const base = {
    level: options.level ?? 'info',
    base: { service: 'agent-bridge' },
    redact: { paths: REDACT_PATHS, censor: REDACTED },
    hooks: { streamWrite: (line: string) => registry.redact(line) },
  };
  if (options.destination) return pino(base, options.destination);
  if (pretty) return pino({ ...base, transport: { target: 'pino-pretty', options: PRETTY_OPTIONS } });
  return pino(base);
}

/**
 * An error as log fields (`err`), for every log line that carries one: message, and for the
 * bridge's own errors their source, kind, status and code. Never a stack or a request (which
 * could hold a secret); the logger's redaction still applies to the message.
 */
export function errorFields(err: unknown): { err: Record<string, unknown> } {
  if (err instanceof BridgeError) return { err: { source: err.source, kind: err.kind, status: err.status, code: err.code, message: err.message } };
  return { err: { message: err instanceof Error ? err.message : String(err) } };
}
