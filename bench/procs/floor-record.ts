/**
 * The floor's optional answer record (`BENCH_FLOOR_RECORD=1`): the bridge's exactly-once step
 * alone, for scenario 1's "what the guarantee costs" row. One script per answer, before the
 * post, that checks the job's BullMQ lock token and writes what the bridge's record-6.lua writes
 * for an answer: the reply and the chunk under way, the conversation's answered mark, the lock
 * renewed and the job taken off the stalled candidates. No mailbox, no resume, and the reply
 * is left in the hash (the bridge deletes it inside BullMQ's completion, in the same round trip).
 */
import type { Redis } from 'ioredis';
import { BENCH_QUEUE, type FloorJob } from './floor-job.js';

const RECORD_LUA = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[2], ARGV[2] .. ':reply', ARGV[3], ARGV[2] .. ':posting', '0')
redis.call('SET', KEYS[3], '1', 'EX', 86400)
redis.call('SET', KEYS[1], ARGV[1], 'PX', 30000)
redis.call('SREM', KEYS[4], ARGV[4])
return 1`;

type WithRecord = Redis & { floorRecord(...args: string[]): Promise<number> };

export function answerRecorder(connection: Redis, prefix: string) {
  connection.defineCommand('floorRecord', { numberOfKeys: 4, lua: RECORD_LUA });
  const redis = connection as WithRecord;
  const queueKey = `${prefix}:${BENCH_QUEUE}`;
  return async (jobId: string, token: string, job: FloorJob, reply: string): Promise<void> => {
    const ok = await redis.floorRecord(
      `${queueKey}:${jobId}:lock`, `${prefix}:messages:${job.channelId}`, `${prefix}:answered:${job.messageId}`, `${queueKey}:stalled`,
      token, job.messageId, reply, jobId,
    );
    if (ok !== 1) throw new Error(`floor job ${jobId} lost its lock before its answer was recorded`);
  };
}
