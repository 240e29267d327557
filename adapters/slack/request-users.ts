import { AsyncLocalStorage } from 'node:async_hooks';
import type { App } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import { createUserDirectory, type UserDirectory } from './user-directory.js';

/**
 * "Add to Slack": `users.info` must go out with the token of the installation a request came
 * from. Bolt hands every listener a client authorized for it; a global middleware keeps that
 * client for the rest of the request (AsyncLocalStorage), and this directory asks through it,
 * with one cache per installation token.
 */
export function createRequestUserDirectory(app: App): UserDirectory {
  const current = new AsyncLocalStorage<WebClient>();
  const byToken = new Map<string, UserDirectory>();
  app.use(async ({ client, next }) => current.run(client, next));
  return {
    get(userId) {
      const client = current.getStore();
      if (!client?.token) return Promise.reject(new Error('no Slack installation for this request'));
      let users = byToken.get(client.token);
      if (!users) {
        // A rotated token replaces its installation's entry over time; keep the map bounded.
        if (byToken.size >= 10_000) byToken.clear();
        users = createUserDirectory(client);
        byToken.set(client.token, users);
      }
      return users.get(userId);
    },
  };
}
