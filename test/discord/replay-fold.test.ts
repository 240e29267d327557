import { describe, expect, it } from 'vitest';
import { foldReplay } from '../../adapters/discord/replay-fold.js';
import type { RawPacket } from '../../adapters/discord/gateway-sessions.js';

/** The message events of a catch-up's replay as handed over (see catch-up-edits.test.ts for the whole path). */
let s = 0;
const at = (t: string, d: Record<string, unknown>): RawPacket => ({ op: 0, s: ++s, t, d: { channel_id: 'c1', ...d } });
const create = (id: string, content: string) => at('MESSAGE_CREATE', { id, content, edited_timestamp: null, channel_type: 0, mentions: [{ id: 'bot' }] });
const edit = (id: string, content: string, mentions: unknown[] = [{ id: 'bot' }]) => at('MESSAGE_UPDATE', { id, content, edited_timestamp: '2026-01-01T00:00:00Z', mentions });

describe('foldReplay', () => {
  it('a message sent and edited in the gap is handed over once, as last edited, with the fields only its create has', () => {
    const out = foldReplay([create('m1', 'pw hunter2'), edit('m1', 'pw [removed]'), edit('m1', 'pw [gone]', [])]);
    expect(out).toHaveLength(1);
    expect(out[0]!.t).toBe('MESSAGE_CREATE');
    expect(out[0]!.d).toMatchObject({ id: 'm1', content: 'pw [gone]', mentions: [], channel_type: 0 });
  });

  it('a message sent and deleted in the gap is left out; its deletion is kept', () => {
    const out = foldReplay([create('m1', 'a'), create('m2', 'b'), at('MESSAGE_DELETE_BULK', { ids: ['m2'] }), at('MESSAGE_DELETE', { id: 'm1' })]);
    expect(out.map((p) => p.t)).toEqual(['MESSAGE_DELETE_BULK', 'MESSAGE_DELETE']);
  });

  it('edits and deletions of messages from before the gap pass in order; other events and unfurls do not fold', () => {
    const unfurl = at('MESSAGE_UPDATE', { id: 'm3', embeds: [{}], edited_timestamp: null });
    const packets = [edit('old1', 'x'), at('GUILD_CREATE', { id: 'g' }), create('m3', 'see a link'), unfurl, at('MESSAGE_DELETE', { id: 'old2' }), at('TYPING_START', {})];
    const out = foldReplay(packets);
    expect(out.map((p) => [p.t, (p.d as { id?: string }).id])).toEqual([
      ['MESSAGE_UPDATE', 'old1'],
      ['MESSAGE_CREATE', 'm3'],
      ['MESSAGE_DELETE', 'old2'],
    ]);
    expect((out[1]!.d as { content: string }).content).toBe('see a link');
  });
});
