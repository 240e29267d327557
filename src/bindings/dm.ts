/**
 * Direct messages have no channel of their own to bind, so they share one binding channel per
 * workspace: `dm:<workspaceId>` (a Slack team). The plain `dm` is the deployment-wide one: the
 * `BINDINGS` entry `slack:dm=…`, a binding stored under `dm` before bindings were kept per
 * workspace, and Discord's DMs (which belong to no server). A workspace's `dm:<id>` with nothing
 * stored (and no tombstone) falls back to `dm`; the store resolves that (src/bindings/store.ts).
 */
export const DM_CHANNEL = 'dm';

const PREFIX = `${DM_CHANNEL}:`;

/** The binding channel of direct messages in `workspaceId`; `dm` when there is no workspace (Discord's `dm`). */
export function dmBindingChannel(workspaceId: string | undefined): string {
  return workspaceId && workspaceId !== DM_CHANNEL ? `${PREFIX}${workspaceId}` : DM_CHANNEL;
}

/** The channel whose binding applies when `channelId` has none of its own: `dm` for `dm:<id>`, else none. */
export function fallbackChannelOf(channelId: string): string | undefined {
  return channelId.startsWith(PREFIX) && channelId.length > PREFIX.length ? DM_CHANNEL : undefined;
}

/** Whether `channelId` is a binding channel of direct messages (`dm` or `dm:<workspaceId>`). */
export function isDmBindingChannel(channelId: string): boolean {
  return channelId === DM_CHANNEL || channelId.startsWith(PREFIX);
}
