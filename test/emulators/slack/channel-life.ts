import type { Json } from './payloads.js';
import type { EmulatedChannel, SlackState } from './state.js';

/**
 * A channel's life after the bot was added: archived, unarchived, deleted, the bot removed or
 * invited back. Each changes what the Web API answers (channelProblem in methods.ts) and returns
 * the events Slack sends the app for it, for the test to deliver (`h.to.event`). A private
 * channel's events are the `group_*` ones, as on Slack.
 */

const isPrivate = (id: string, c: EmulatedChannel | undefined) => c?.private ?? id.startsWith('G');
const kind = (id: string, c: EmulatedChannel | undefined) => (isPrivate(id, c) ? 'group' : 'channel');

function touch(state: SlackState, id: string, change: Partial<EmulatedChannel>): EmulatedChannel | undefined {
  const before = state.channels.get(id);
  state.channels.set(id, { ...before, id, ...change });
  return before;
}

/** Archived by `by`: posting and reacting there fail with `is_archived`. */
export function archiveChannel(state: SlackState, id: string, by: string): Json[] {
  const c = touch(state, id, { archived: true });
  return [{ type: `${kind(id, c)}_archive`, channel: id, user: by, event_ts: state.nextTs() }];
}

/** Unarchived: the channel works again (the bot is still in it). */
export function unarchiveChannel(state: SlackState, id: string, by: string): Json[] {
  const c = touch(state, id, { archived: false });
  return [{ type: `${kind(id, c)}_unarchive`, channel: id, user: by, event_ts: state.nextTs() }];
}

/** Deleted for good (an admin's act): every method answers `channel_not_found`. */
export function deleteChannel(state: SlackState, id: string, by: string): Json[] {
  const c = touch(state, id, { deleted: true });
  return [{ type: `${kind(id, c)}_deleted`, channel: id, actor_id: by, event_ts: state.nextTs() }];
}

/** The bot removed (`/remove @bot`): `channel_left` to the bot, `member_left_channel` to the app. */
export function removeBot(state: SlackState, id: string, by: string): Json[] {
  const c = touch(state, id, { member: false });
  const ts = state.nextTs();
  return [
    { type: `${kind(id, c)}_left`, channel: id, actor_id: by, event_ts: ts },
    { type: 'member_left_channel', user: state.identity.botUserId, channel: id, channel_type: isPrivate(id, c) ? 'G' : 'C', team: state.identity.teamId, event_ts: ts },
  ];
}

/** The bot invited back: `member_joined_channel` of the bot. */
export function inviteBot(state: SlackState, id: string, by: string): Json[] {
  const c = touch(state, id, { member: true });
  return [{ type: 'member_joined_channel', user: state.identity.botUserId, channel: id, channel_type: isPrivate(id, c) ? 'G' : 'C', team: state.identity.teamId, inviter: by, event_ts: state.nextTs() }];
}
