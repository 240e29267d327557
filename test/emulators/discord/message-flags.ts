/**
 * The `flags` of a message create. Discord lets a bot set only a few bits there
 * (SUPPRESS_EMBEDS, SUPPRESS_NOTIFICATIONS, IS_VOICE_MESSAGE, IS_COMPONENTS_V2: the create-message
 * docs and discord.js's `MessageCreateOptions.flags`); any other bit is refused as an invalid
 * form body. The emulator stores the flags the message got, so tests can see whether a reply
 * asked Discord not to fetch the links it contains (SUPPRESS_EMBEDS).
 */
import type { Json } from './payloads.js';
import type { Reply } from './rest.js';

export const SUPPRESS_EMBEDS = 1 << 2;
export const SUPPRESS_NOTIFICATIONS = 1 << 12;
const IS_VOICE_MESSAGE = 1 << 13;
const IS_COMPONENTS_V2 = 1 << 15;
const SETTABLE_ON_CREATE = SUPPRESS_EMBEDS | SUPPRESS_NOTIFICATIONS | IS_VOICE_MESSAGE | IS_COMPONENTS_V2;

/** The flags a create asks for, or the 400 Discord answers a value it refuses with. */
export function createFlags(body: Json): { flags: number } | { refused: Reply } {
  const raw: unknown = body.flags;
  if (raw === undefined || raw === null) return { flags: 0 };
  const flags = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : raw;
  if (typeof flags !== 'number' || !Number.isSafeInteger(flags) || flags < 0) return { refused: invalid('NUMBER_TYPE_COERCE', `Value "${String(raw)}" is not int.`) };
  if ((flags & ~SETTABLE_ON_CREATE) !== 0) return { refused: invalid('MESSAGE_FLAGS_INVALID', 'Invalid message flags') };
  return { flags };
}

function invalid(code: string, message: string): Reply {
  return { status: 400, body: { message: 'Invalid Form Body', code: 50035, errors: { flags: { _errors: [{ code, message }] } } } };
}
