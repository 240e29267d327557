import type { EmulatorIdentity } from '../../test/emulators/slack/state.js';

/** Where the services process listens. */
export interface ServicesInfo {
  agentBaseUrl: string;
  agentApiKey: string;
  sinkUrl: string;
}

export interface SlackInfo {
  apiUrl: string;
  identity: EmulatorIdentity;
}

export interface DiscordInfo {
  token: string;
  apiUrl: string;
  guildId: string;
  channelId: string;
}
