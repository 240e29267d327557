import { describe, expect, it } from 'vitest';
import { readSlackManifest, yamlListItems } from '../support/slack-manifest.js';

describe.each(['manifest.http.yaml', 'manifest.socket-mode.yaml'])('%s', (file) => {
  const yaml = readSlackManifest(file);
  it('subscribes to what the adapter listens for and grants what it calls', () => {
    expect(yamlListItems(yaml, 'bot_events').sort()).toEqual([
      'app_mention',
      'app_uninstalled',
      'assistant_thread_context_changed',
      'assistant_thread_started',
      'channel_archive',
      'channel_deleted',
      'channel_left',
      'channel_unarchive',
      'group_archive',
      'group_deleted',
      'group_left',
      'group_unarchive',
      'member_joined_channel',
      'member_left_channel',
      'message.channels',
      'message.groups',
      'message.im',
      'message.mpim',
      'team_access_revoked',
      'tokens_revoked',
    ]);
    expect(yamlListItems(yaml, 'bot')).toEqual(
      expect.arrayContaining(['app_mentions:read', 'channels:history', 'groups:history', 'im:history', 'mpim:history', 'chat:write', 'reactions:write', 'users:read', 'commands', 'assistant:write', 'files:read']),
    );
    expect(yaml).toMatch(/\n {2}assistant_view:\n {4}assistant_description: \S/);
    expect(yaml).toMatch(/- name: Ask the agent\n\s+type: message\n\s+callback_id: ask_agent\n/);
    expect(yaml).toMatch(/- command: \/agent\n/);
    expect(yaml).toMatch(/messages_tab_enabled: true/);
    expect(yaml).toMatch(/interactivity:\n\s+is_enabled: true/);
  });
  it(file.includes('socket') ? 'turns Socket Mode on and names no URL' : 'sends events, commands and interactivity to /slack/events', () => {
    if (file.includes('socket')) {
      expect(yaml).toMatch(/socket_mode_enabled: true/);
      expect(yaml).not.toMatch(/^\s+(request_)?url:/m);
    } else {
      expect(yaml).toMatch(/socket_mode_enabled: false/);
      expect(yaml.match(/^\s+(request_)?url: https:\/\/bridge\.example\.com\/slack\/events$/gm)).toHaveLength(3);
      // "Add to Slack": Bolt's installer answers here (adapters/slack/oauth.ts).
      expect(yamlListItems(yaml, 'redirect_urls')).toEqual(['https://bridge.example.com/slack/oauth_redirect']);
    }
  });
});
