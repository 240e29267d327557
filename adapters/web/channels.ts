/** The playground's one workspace: everything runs on this machine. */
export const WEB_WORKSPACE_ID = 'local';

/** The local channels the page offers. IDs are what bindings, quotas and `/agent why` see. */
export const WEB_CHANNELS: ReadonlyArray<{ id: string; name: string; topic: string }> = Object.freeze([
  { id: 'general', name: 'general', topic: 'Try the agent here' },
  { id: 'support', name: 'support', topic: 'Bind another instance, or the same one answering every message' },
  { id: 'random', name: 'random', topic: 'Unbound at first: see what `why` says' },
]);

const CHANNEL_IDS = new Set(WEB_CHANNELS.map((c) => c.id));

export function isWebChannel(id: string): boolean {
  return CHANNEL_IDS.has(id);
}

/** Redis names of the web platform, all under `${prefix}:web:`. */
export interface WebKeys {
  /** Capped stream of one channel's events: the "platform's" message history. */
  stream(channelId: string): string;
  /** Pub/sub channel on which every appended event is announced. */
  readonly events: string;
}

export function webKeys(prefix: string): WebKeys {
  const base = `${prefix}:web`;
  return {
    stream: (channelId) => `${base}:stream:${channelId}`,
    events: `${base}:events`,
  };
}
