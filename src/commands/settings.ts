import type { QuotaLimits } from '../config/load.js';
import type { ContextMode, ErrorPolicy } from '../bindings/types.js';
import { code } from './format.js';

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

/** The forms of `set`, written out for an error (0 and `default` explained). */
export const SET_USAGE = [
  `\`${SET_FORMS.errors}\``,
  `\`${SET_FORMS.context}\``,
  `\`${SET_FORMS.quota}\` (0 = unlimited, \`default\` = back to the default)`,
];

const ERRORS: readonly ErrorPolicy[] = ['reply', 'reaction', 'silent'];
const CONTEXTS: readonly ContextMode[] = ['off', 'thread'];
const MAX_LIMIT = 1_000_000_000;

export type SettingResult = { ok: true; change: SettingChange } | { ok: false; error: string };

/** An echo of a word the admin typed, safe in a reply (no backticks, mentions or control characters, short). */
function shown(word: string): string {
  return code(word, 40);
}

/** Validates `setting` and `value` (for quotas, `value` is `<name> <n>`). Never throws. An error names the word it stops at. */
export function parseSetting(setting: string, value: string): SettingResult {
  const name = String(setting).trim().toLowerCase();
  const typed = String(value).trim().split(/\s+/u).filter(Boolean);
  const words = typed.map((w) => w.toLowerCase());
  /** Words past the `count` a form takes: refused, as `bind` refuses them. */
  const tooMany = (count: number, form: string): SettingResult => ({ ok: false, error: `Too many words: ${shown(typed.slice(count).join(' '))}. Use \`${form}\`.` });
  if (name === 'errors') {
    const v = words[0] as ErrorPolicy;
    if (v !== undefined && ERRORS.includes(v)) return words.length === 1 ? { ok: true, change: { setting: 'errors', value: v } } : tooMany(1, SET_FORMS.errors);
    const not = typed[0] === undefined ? '' : `, not ${shown(typed[0])}`;
    return { ok: false, error: `Error policy must be \`reply\`, \`reaction\` or \`silent\`${not}: for example \`set errors reaction\`.` };
  }
  if (name === 'context') {
    const v = words[0] as ContextMode;
    if (v !== undefined && CONTEXTS.includes(v)) return words.length === 1 ? { ok: true, change: { setting: 'context', value: v } } : tooMany(1, SET_FORMS.context);
    const not = typed[0] === undefined ? '' : `, not ${shown(typed[0])}`;
    return { ok: false, error: `Thread context must be \`off\` or \`thread\`${not}: for example \`set context thread\`.` };
  }
  if (name === 'quota') {
    const [quota, n] = words;
    const example = `Write the quota like this: ${SET_USAGE[2]}, for example \`set quota user-per-minute 5\`.`;
    if (quota === undefined) return { ok: false, error: example };
    if (!Object.hasOwn(QUOTA_NAMES, quota)) return { ok: false, error: `There is no quota ${shown(typed[0]!)}. ${example}` };
    const field = QUOTA_NAMES[quota as QuotaName];
    if (n === undefined) return { ok: false, error: `Give quota ${shown(quota)} a number or \`default\`. ${example}` };
    if (words.length > 2) return tooMany(2, SET_FORMS.quota);
    if (n === 'default') return { ok: true, change: { setting: 'quota', name: quota as QuotaName, field, limit: undefined } };
    const limit = /^\d{1,10}$/.test(n) ? Number(n) : NaN;
    if (!(limit <= MAX_LIMIT)) {
      return { ok: false, error: `A quota is a whole number of messages (0 = unlimited) or \`default\`, not ${shown(typed[1]!)}.` };
    }
    return { ok: true, change: { setting: 'quota', name: quota as QuotaName, field, limit } };
  }
  return { ok: false, error: `There is no setting ${shown(String(setting).trim())}. Use one of: ${SET_USAGE.join(', ')}.` };
}

/** The canonical text of a change, for the audit log and for `Commands.set`. */
export function describeChange(change: SettingChange): { setting: string; value: string } {
  if (change.setting === 'quota') return { setting: 'quota', value: `${change.name} ${change.limit ?? 'default'}` };
  return { setting: change.setting, value: change.value };
}
