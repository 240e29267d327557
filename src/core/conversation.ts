/**
 * A chat platform's name (`slack`, `discord`, `web` for the playground, …). The core keeps no
 * list of them: each platform module names itself (adapters/<platform>/), and the entry point
 * (bin/) registers the modules, so adding one touches no file here.
 */
export type Platform = string;

/** What a platform name looks like: lower-case letters (it prefixes conversation IDs and Redis keys). */
export const PLATFORM_NAME = /^[a-z]+$/;

/** Where a message lives: workspace (Slack team, Discord guild or `dm`), channel, and thread if any. */
export interface ConversationRef {
  platform: Platform;
  workspaceId: string;
  channelId: string;
  threadId?: string;
}

/**
 * Opaque, platform-prefixed conversation ID, e.g. `slack:T1:C1:1700.1`.
 * Parts are percent-encoded so a `:` inside one can never shift the others.
 */
export function encodeConversationId(ref: ConversationRef): string {
  const parts = [ref.platform, ref.workspaceId, ref.channelId];
  if (ref.threadId) parts.push(ref.threadId);
  return parts.map((p) => encodeURIComponent(p)).join(':');
}

export function decodeConversationId(id: string): ConversationRef {
  const parts = id.split(':').map((p) => decodeURIComponent(p));
  const [platform, workspaceId, channelId, threadId, ...rest] = parts;
  if (!platform || !PLATFORM_NAME.test(platform) || !workspaceId || !channelId || rest.length > 0) {
    throw new Error(`not a conversation ID: ${id.slice(0, 100)}`);
  }
  return { platform: platform as Platform, workspaceId, channelId, ...(threadId ? { threadId } : {}) };
}
