/** What the emulator's gateway counts and logs, for tests to assert on. */
export interface GatewayStats {
  connections: number;
  identifies: number;
  resumes: number;
  heartbeats: number;
  closes: number[];
  /** Every dispatch: event name, sequence, session, shard, and whether it was written at once. */
  dispatched: Array<{ t: string; s: number; session: string; shard: number; sent: boolean }>;
  /** Every accepted IDENTIFY: which shard, when (ms), for identify-concurrency checks. */
  identifyLog: Array<{ shard: number; shardCount: number; at: number }>;
  /** Every accepted RESUME, by shard and session, and whether it came on `resume_gateway_url` (Discord asks for that). */
  resumeLog: Array<{ shard: number; session: string; at: number; onResumeUrl: boolean }>;
  /** RESUMEs answered with op 9 (session unknown, ended or expired). */
  refusedResumes: number;
  /** IDENTIFYs answered with op 9 because their rate-limit key identified less than 5 s before. */
  refusedIdentifies: Array<{ shard: number; at: number }>;
}

export function emptyGatewayStats(): GatewayStats {
  return {
    connections: 0,
    identifies: 0,
    resumes: 0,
    heartbeats: 0,
    closes: [],
    dispatched: [],
    identifyLog: [],
    resumeLog: [],
    refusedResumes: 0,
    refusedIdentifies: [],
  };
}
