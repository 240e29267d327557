/** Attachments of users' messages in the emulator: their objects, and their bytes served as Discord's CDN does. */
import type { ServerResponse } from 'node:http';
import type { Json } from './payloads.js';
import type { AttachmentInput, SendMessageInput } from './options.js';
import type { Store } from './store.js';
import { snowflake } from './world.js';

/** The attachment objects of a message (files kept in `store` to be served at `baseUrl`). */
export function attachmentObjects(store: Store, baseUrl: string, input: SendMessageInput): Json[] {
  const files: AttachmentInput[] =
    typeof input.attachments === 'number'
      ? Array.from({ length: input.attachments }, (_, n) => ({ filename: `file${n}.txt`, content: `placeholder ${n}\n` }))
      : (input.attachments ?? []);
  return files.map((f) => {
    const id = snowflake();
    const body = typeof f.content === 'string' ? Buffer.from(f.content, 'utf8') : f.content;
    const contentType = f.contentType === undefined ? 'text/plain; charset=utf-8' : f.contentType;
    const url = `${baseUrl}${input.channel.id}/${id}/${encodeURIComponent(f.filename)}`;
    store.files.set(`${input.channel.id}/${id}`, { body, contentType });
    return {
      id,
      filename: f.filename,
      size: f.size ?? body.length,
      url,
      proxy_url: url,
      ...(contentType !== null ? { content_type: contentType } : {}),
    };
  });
}

/** `GET /attachments/<channel>/<id>/<name>` (`rest` is what follows `/attachments/`): the file's bytes, no token needed. */
export function serveAttachment(
  store: Store,
  rest: string,
  url: string,
  headers: Record<string, string | string[] | undefined>,
  res: ServerResponse,
  changed: () => void,
): void {
  const [channelId, id] = rest.split('?')[0]!.split('/');
  const file = store.files.get(`${channelId}/${id}`);
  store.fileFetches.push({ url, authorization: headers.authorization as string | undefined, found: file !== undefined });
  changed();
  if (!file) {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
    return;
  }
  res.writeHead(200, { 'content-length': String(file.body.length), ...(file.contentType ? { 'content-type': file.contentType } : {}) });
  res.end(file.body);
}
