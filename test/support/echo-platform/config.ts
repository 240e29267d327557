import { z } from 'zod';
import { missingSetting, parseSettings, secretValues, type PlatformSettings } from '../../../src/config/platform-settings.js';
import { optionalString } from '../../../src/config/schema.js';

/** A fourth platform's own settings, exactly as adapters/<platform>/config.ts would write them. */
export interface EchoConfig {
  token: string;
  room: string;
}

const echoSchema = z.object({ ECHO_TOKEN: optionalString, ECHO_ROOM: optionalString });

export const echoSettings: PlatformSettings<EchoConfig> = {
  platform: 'echo',
  present: (env) => Boolean(env.ECHO_TOKEN?.trim() || env.ECHO_ROOM?.trim()),
  load(env) {
    const { data: e, problems } = parseSettings(echoSchema, env);
    if (!e || (!e.ECHO_TOKEN && !e.ECHO_ROOM)) return { problems, secrets: [] };
    if (!e.ECHO_TOKEN) return { problems: [...problems, missingSetting('ECHO_TOKEN', 'ECHO_ROOM is set', 'set it to the echo service token')], secrets: [] };
    return { settings: { token: e.ECHO_TOKEN, room: e.ECHO_ROOM ?? 'lobby' }, problems, secrets: secretValues(e.ECHO_TOKEN) };
  },
};
