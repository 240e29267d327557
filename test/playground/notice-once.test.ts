import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ReplyTarget } from '../../src/core/message.js';
import { webReplyPortFixture } from './reply-port-fixture.js';

/** The playground's reply port appends a resumed give-up notice once, as it does a chunk. */
describe('web reply port: no give-up notice appended twice', () => {
  const web = webReplyPortFixture('pgnotice');

  const target = (channelId: string): ReplyTarget => ({ channelId, messageId: randomUUID() });
  const notices = async (channelId: string) => (await web.store.history(channelId, { count: 100 })).flatMap((e) => (e.type === 'notice' ? [`${e.replyTo}:${e.text}`] : []));

  it('with mayExist and the notice already in the stream: not appended again', async () => {
    const t = target('n1');
    await web.port.postNotice(t, 'gave up (ref ABCDEF)', { messageId: t.messageId, mayExist: false });
    await web.port.postNotice(t, 'gave up (ref ABCDEF)', { messageId: t.messageId, mayExist: true });
    expect(await notices('n1')).toEqual([`${t.messageId}:gave up (ref ABCDEF)`]);
  });

  it('with mayExist and no such notice (another message’s does not count): appended once', async () => {
    const t = target('n2');
    const other = target('n2');
    await web.port.postNotice(other, 'gave up (ref ABCDEF)', { messageId: other.messageId, mayExist: false });
    await web.port.postNotice(t, 'gave up (ref ABCDEF)', { messageId: t.messageId, mayExist: true });
    expect(await notices('n2')).toEqual([`${other.messageId}:gave up (ref ABCDEF)`, `${t.messageId}:gave up (ref ABCDEF)`]);
  });
});
