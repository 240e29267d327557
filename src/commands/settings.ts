import type { QuotaLimits } from '../config/load.js';
import type { ContextMode, ErrorPolicy } from '../bindings/types.js';

/** Quota names as admins type them, and the limit each one sets. */
export const QUOTA_NAMES = {
  'user-per-minute': 'userPerMinute',
  'user-per-day': 'userPerDay',
  'channel-per-minute': 'channelPerMinute',
  'channel-per-day': 'channelPerDay',
} as const satisfies Record<string, keyof QuotaLimits>;

export type QuotaName = keyof typeof QUOTA_NAMES;

/** A validated `set` command. `limit: undefined` puts the quota back to the QUOTA_* default. */
export type SettingChange =
  | { setting: 'errors'; value: ErrorPolicy }
  | { setting: 'context'; value: ContextMode }
  | { setting: 'quota'; name: QuotaName; field: keyof QuotaLimits; limit: number | undefined };

/** The forms of `set`, as typed: one per setting. */
export const SET_FORMS = {
  errors: 'set errors reply|reaction|silent',
  context: 'set context off|thread',
  quota: `set quota <${Object.keys(QUOTA_NAMES).join('|')}> <n>`,
} as const;

/** The settings `set` changes. */
export type SettingName = keyof typeof SET_FORMS;

const SET_USAGE = [
  `\`${SET_FORMS.errors}\``,
  `\`${SET_FORMS.context}\``,
  `\`${SET_FORMS.quota}\` (0 = unlimited, \`default\` = back to the default)`,
];

const ERRORS: readonly ErrorPolicy[] = ['reply', 'reaction', 'silent'];
const CONTEXTS: readonly ContextMode[] = ['off', 'thread'];
const MAX_LIMIT = 1_000_000_000;

export type SettingResult = { ok: true; change: SettingChange } | { ok: false; error: string };

/** Validates `setting` and `value` (for quotas, `value` is `<name> <n>`). Never throws. */
export function parseSetting(setting: string, value: string): SettingResult {
  const name = String(setting).trim().toLowerCase();
  const words = String(value).trim().toLowerCase().split(/\s+/u).filter(Boolean);
  if (name === 'errors') {
    const v = words[0] as ErrorPolicy;
    if (words.length === 1 && ERRORS.includes(v)) return { ok: true, change: { setting: 'errors', value: v } };
    return { ok: false, error: 'Error policy must be `reply`, `reaction` or `silent`, for example `set errors reaction`.' };
  }
  if (name === 'context') {
    const v = words[0] as ContextMode;
    if (words.length === 1 && CONTEXTS.includes(v)) return { ok: true, change: { setting: 'context', value: v } };
    return { ok: false, error: 'Thread context must be `off` or `thread`, for example `set context thread`.' };
  }
  if (name === 'quota') {
    const [quota, n, ...rest] = words;
    const field = quota !== undefined && Object.hasOwn(QUOTA_NAMES, quota) ? QUOTA_NAMES[quota as QuotaName] : undefined;
    if (!field || n === undefined || rest.length > 0) {
      return { ok: false, error: `Write the quota like this: ${SET_USAGE[2]}, for example \`set quota user-per-minute 5\`.` };
    }
    if (n === 'default') return { ok: true, change: { setting: 'quota', name: quota as QuotaName, field, limit: undefined } };
    const limit = /^\d{1,10}$/.test(n) ? Number(n) : NaN;
    if (!(limit <= MAX_LIMIT)) {
      return { ok: false, error: 'A quota is a whole number of messages (0 = unlimited) or `default`.' };
    }
    return { ok: true, change: { setting: 'quota', name: quota as QuotaName, field, limit } };
  }
  return { ok: false, error: `There is no such setting. Use one of: ${SET_USAGE.join(', ')}.` };
}

/** The canonical text of a change, for the audit log and for `Commands.set`. */
export function describeChange(change: SettingChange): { setting: string; value: string } {
  if (change.setting === 'quota') return { setting: 'quota', value: `${change.name} ${change.limit ?? 'default'}` };
  return { setting: change.setting, value: change.value };
}
