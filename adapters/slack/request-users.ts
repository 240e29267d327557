import { AsyncLocalStorage } from 'node:async_hooks';
import type { App } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import { createUserDirectory, type UserDirectory } from './user-directory.js';

/** Installations whose directory is kept; past it the oldest is dropped. */
const MAX_INSTALLATIONS = 10_000;

/**
 * "Add to Slack": `users.info` must go out with the token of the installation a request came
 * from. Bolt hands every listener a client authorized for it; a global middleware keeps that
 * client (and its installation) for the rest of the request (AsyncLocalStorage), and this
 * directory asks through it, with one cache per installation, started afresh when its token
 * changes (a rotated token's directory would otherwise stay for the life of the process).
 */
export function createRequestUserDirectory(app: App): UserDirectory {
  const current = new AsyncLocalStorage<{ client: WebClient; installation: string }>();
  const byInstallation = new Map<string, { token: string; users: UserDirectory }>();
  app.use(async ({ client, context, next }) =>
    current.run({ client, installation: `${context.enterpriseId ?? ''}:${context.teamId ?? ''}` }, next),
  );
  return {
    get(userId, options) {
      const request = current.getStore();
      const token = request?.client.token;
      if (!request || !token) return Promise.reject(new Error('no Slack installation for this request'));
      let entry = byInstallation.get(request.installation);
      if (entry?.token !== token) {
        byInstallation.delete(request.installation);
        if (byInstallation.size >= MAX_INSTALLATIONS) byInstallation.delete(byInstallation.keys().next().value!);
        entry = { token, users: createUserDirectory(request.client) };
        byInstallation.set(request.installation, entry);
      }
      return entry.users.get(userId, options);
    },
  };
}
