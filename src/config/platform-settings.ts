import type { z } from 'zod';
import type { Platform } from '../core/conversation.js';

/** The environment as read (process environment over `.env`). */
export type RawEnv = Readonly<Record<string, string | undefined>>;

/** What a platform's settings may depend on from the core's. */
export interface PlatformSettingsContext {
  role: 'all' | 'ingress' | 'worker';
  /** INSTALLATION_ENCRYPTION_KEY is set (and valid): secrets may be stored sealed. */
  encryptionKeySet: boolean;
  /** The playground runs (PLAYGROUND, or the demo). */
  playground: boolean;
}

export interface PlatformSettingsResult<S> {
  /** Undefined when the platform is not configured (or a problem stops it). */
  settings?: S;
  /** Each names the variable and the fix; reported with the core's problems, in one pass. */
  problems: string[];
  /** Secret values, for the logger's redaction. */
  secrets: string[];
}

/**
 * A platform's own settings (`adapters/<platform>/config.ts`), plugged into the one config
 * loader: the core reads no platform's variables, and a new platform brings its own.
 */
export interface PlatformSettings<S = unknown> {
  readonly platform: Platform;
  /**
   * What to set to run it for real, for the demo banner: its variables and what they give.
   * @defaultValue not named in the banner (a platform with nothing to set, like the playground)
   */
  readonly toRunForReal?: { variables: string; gives: string };
  /** Any of its settings is present: a real deployment (the demo runs only when none is). */
  present(env: RawEnv): boolean;
  load(env: RawEnv, context: PlatformSettingsContext): PlatformSettingsResult<S>;
  /**
   * Its other settings given without what runs it (`present` false): the problem naming them,
   * the missing variable and the fix. The loader reports it when no platform runs in the
   * process (with one running, they may be another process's, from a shared environment).
   * @defaultValue nothing to report
   */
  givenWithoutToken?(env: RawEnv): string | undefined;
  /**
   * What is wrong with `channelId` as a channel of this platform in `BINDINGS` (a channel's
   * name where its ID belongs: the binding would match no message), with the fix.
   * @defaultValue every channel ID is taken
   */
  bindingChannelProblem?(channelId: string): string | undefined;
}

/** Parses with a platform's zod schema; each problem starts with the variable's name. */
export function parseSettings<T extends z.ZodType>(schema: T, env: RawEnv): { data?: z.infer<T>; problems: string[] } {
  const parsed = schema.safeParse(env);
  if (parsed.success) return { data: parsed.data, problems: [] };
  return {
    problems: parsed.error.issues.map((i) => {
      const name = String(i.path[0] ?? 'environment');
      return i.message.startsWith(name) ? i.message : `${name}: ${i.message}`;
    }),
  };
}

/**
 * The variables of `schema` (but `except`) given in `env`: set to something other than what
 * leaving them unset gives, so a default written out (as `.env.example` writes some)
 * is not given, and a wrong value is.
 */
export function givenSettings(schema: z.ZodObject, env: RawEnv, except: readonly string[]): string[] {
  return Object.entries(schema.shape)
    .filter(([name]) => !except.includes(name) && env[name] !== undefined && env[name].trim() !== '')
    .filter(([name, field]) => {
      const given = field.safeParse(env[name]);
      return !given.success || JSON.stringify(given.data) !== JSON.stringify(field.safeParse(undefined).data);
    })
    .map(([name]) => name);
}

/** `A and B are set`, `A, B and C are set`: the given settings a problem names. */
export function areSet(names: readonly string[]): string {
  const listed = names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)}` : (names[0] ?? '');
  return `${listed} ${names.length > 1 ? 'are' : 'is'} set`;
}

/** `NAME is missing (why): fix`, the wording of every missing setting. */
export function missingSetting(name: string, why: string, fix: string): string {
  return `${name} is missing (${why}): ${fix}`;
}

/** The secrets among `values` worth redacting (long enough not to hit ordinary words). */
export function secretValues(...values: Array<string | undefined>): string[] {
  return values.filter((s): s is string => typeof s === 'string' && s.length >= 4);
}
